"""``/v1/models``: list, read, edit, delete, export and import, predict in batches, and batch
predictions of a stored data set. A model is named by its id, its result object, or
``"name@alias"``."""

from __future__ import annotations

import builtins
import json
import os
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import IO, Any, Literal, overload

from pgs_client import bodies, data
from pgs_client.convert import from_json
from pgs_client.errors import ApiError, BatchPredictionFailed, PayloadTooLarge
from pgs_client.operations import UPLOAD_OPERATIONS, covers
from pgs_client.resources import ident, labels, model_ref
from pgs_client.resources.datasets import Datasets
from pgs_client.resources.jobs import poll
from pgs_client.schemas import BatchPredictionRead, Coefficient, CoefficientPage, DatasetRead, ModelRead
from pgs_client.transport import Transport

ModelRef = int | str | ModelRead

# Well under the service's defaults (100,000 rows and 64 MiB per request); a service configured
# lower answers 413, and the batch is split in two until it fits.
BATCH_ROWS = 10_000
BATCH_BYTES = 8 * 1024 * 1024


@dataclass
class Prediction:
    """Predictions for every row, in order: NumPy arrays when NumPy is installed, else lists.

    ``predictions``: labels (classification) or values (regression); ``scores``: one decision
    value per row, or one per class (multiclass); ``probabilities``: one column per class,
    logistic models only (else ``None``).
    """

    predictions: Any
    scores: Any
    probabilities: Any | None


def _arrays(parts: list[dict[str, Any]]) -> Prediction:
    columns = {
        key: [v for part in parts for v in part[key]]
        for key in ("predictions", "scores", "probabilities")
        if all(part.get(key) is not None for part in parts)
    }
    try:
        import numpy as np
    except ModuleNotFoundError:
        return Prediction(columns["predictions"], columns["scores"], columns.get("probabilities"))
    arrays = {k: np.asarray(v) for k, v in columns.items()}
    return Prediction(arrays["predictions"], arrays["scores"], arrays.get("probabilities"))


def _chunks(lines: Iterable[bytes], size: int) -> Iterator[list[bytes]]:
    it = iter(lines)
    while chunk := list(islice(it, size)):
        yield chunk


class Models:
    def __init__(self, transport: Transport):
        self._t = transport

    @covers("GET /v1/models/{model_id}")
    def get(self, model: ModelRef) -> ModelRead:
        return from_json(ModelRead, self._t.get(f"/v1/models/{model_ref(model)}"))

    @covers("GET /v1/models")
    def list(
        self,
        limit: int | None = None,
        *,
        name: str | None = None,
        dataset: int | DatasetRead | None = None,
        tag: str | Sequence[str] | None = None,
        search: str | None = None,
        sort: str | None = None,
        page_size: int = 100,
    ) -> Iterator[ModelRead]:
        """Models, newest first (or in ``sort``'s order: ``name``, ``-version``, ...), a page at
        a time: the versions of ``name``, those trained on ``dataset``, with every tag of
        ``tag``, whose name or description contains ``search`` (any case), when given."""
        return self._t.pages(
            "/v1/models",
            lambda m: from_json(ModelRead, m),
            limit,
            page_size,
            name=name,
            dataset_id=None if dataset is None else ident(dataset),
            tag=tag,
            q=search,
            sort=sort,
        )

    @covers("GET /v1/models/{model_id}/coefficients")
    def coefficients(
        self, model: ModelRef, *, class_: Any = None, limit: int | None = None, page_size: int = 1000
    ) -> Iterator[Coefficient]:
        """The model's weights by name, per unit of the raw columns (``name`` is a column's name,
        ``column=value`` for a category of a text column), the largest |weight| on the scaled
        features first, fetched a page at a time; ``class_`` picks a class's weights (required
        for a multiclass model). The intercept and the count are :meth:`coefficient_page`'s."""
        offset = 0
        while limit is None or offset < limit:
            size = page_size if limit is None else min(page_size, limit - offset)
            page = self.coefficient_page(model, class_=class_, offset=offset, limit=size)
            yield from page.items
            offset += len(page.items)
            if not page.items or offset >= page.total:
                return

    @covers("GET /v1/models/{model_id}/coefficients")
    def coefficient_page(
        self, model: ModelRef, *, class_: Any = None, offset: int = 0, limit: int = 100
    ) -> CoefficientPage:
        """One page of :meth:`coefficients`, with the class's intercept and its non-zero count."""
        params: dict[str, Any] = {"offset": offset, "limit": limit}
        if class_ is not None:
            params["class"] = str(class_)
        return from_json(
            CoefficientPage, self._t.get(f"/v1/models/{model_ref(model)}/coefficients", params=params)
        )

    @covers("PATCH /v1/models/{model_id}")
    def update(
        self,
        model: ModelRef,
        *,
        name: str | None = None,
        description: str | None = None,
        tags: Sequence[str] | None = None,
    ) -> ModelRead:
        """Describe or tag a model; ``name`` registers it as the next version of that name."""
        response = self._t.request(
            "PATCH", f"/v1/models/{model_ref(model)}", safe=True, json=labels(description, tags, name=name)
        )
        return from_json(ModelRead, response.json())

    @covers("DELETE /v1/models/{model_id}")
    def delete(self, model: ModelRef) -> None:
        self._t.request("DELETE", f"/v1/models/{model_ref(model)}", safe=True)

    @covers("GET /v1/models/{model_id}/export")
    def export(self, model: ModelRef, format: Literal["npz", "json", "onnx"], path: str | Path) -> Path:
        """Download the model to ``path``: npz or json (for :meth:`import_file` in another
        installation) or onnx (its preprocessing and decision, for onnxruntime)."""
        response = self._t.request(
            "GET", f"/v1/models/{model_ref(model)}/export", safe=True, params={"format": format}
        )
        target = Path(path)
        target.write_bytes(response.content)
        return target

    @covers("POST /v1/models")
    def import_file(self, path: str | Path) -> ModelRead:
        """Create a model from an npz or json file written by :meth:`export`."""
        target = Path(path)
        content_type = "application/json" if target.suffix.lower() == ".json" else "application/octet-stream"
        response = self._t.request(
            "POST",
            "/v1/models",
            safe=False,
            content=target.read_bytes(),
            headers={"Content-Type": content_type},
        )
        return from_json(ModelRead, response.json())

    # -- batch predictions of a stored data set -------------------------------------------------

    @covers("POST /v1/models/{model_id}/predictions")
    def predict_dataset(
        self, model: ModelRef, dataset: int | DatasetRead, *, extra_features: str = "fail"
    ) -> BatchPredictionRead:
        """Start predicting every row of ``dataset`` in the background (no body limit)."""
        response = self._t.request(
            "POST",
            f"/v1/models/{model_ref(model)}/predictions",
            safe=False,
            json={"dataset_id": ident(dataset), "extra_features": extra_features},
        )
        return from_json(BatchPredictionRead, response.json())

    @covers("GET /v1/models/{model_id}/predictions/{prediction_id}")
    def batch(self, model: ModelRef, batch: int | BatchPredictionRead) -> BatchPredictionRead:
        return from_json(
            BatchPredictionRead, self._t.get(f"/v1/models/{model_ref(model)}/predictions/{ident(batch)}")
        )

    @covers("GET /v1/models/{model_id}/predictions")
    def batches(
        self, model: ModelRef, limit: int | None = None, *, page_size: int = 100
    ) -> Iterator[BatchPredictionRead]:
        """The model's batch predictions, newest first, a page at a time."""
        return self._t.pages(
            f"/v1/models/{model_ref(model)}/predictions",
            lambda b: from_json(BatchPredictionRead, b),
            limit,
            page_size,
        )

    @covers("POST /v1/models/{model_id}/predictions/{prediction_id}/cancel")
    def cancel_batch(self, model: ModelRef, batch: int | BatchPredictionRead) -> BatchPredictionRead:
        """Stop a queued or running batch prediction (:class:`~pgs_client.errors.Conflict` once
        it has ended)."""
        response = self._t.request(
            "POST", f"/v1/models/{model_ref(model)}/predictions/{ident(batch)}/cancel", safe=True
        )
        return from_json(BatchPredictionRead, response.json())

    @covers("DELETE /v1/models/{model_id}/predictions/{prediction_id}")
    def delete_batch(self, model: ModelRef, batch: int | BatchPredictionRead) -> None:
        """Delete an ended batch prediction and its result (a running one: cancel it first)."""
        self._t.request("DELETE", f"/v1/models/{model_ref(model)}/predictions/{ident(batch)}", safe=True)

    @covers("GET /v1/models/{model_id}/predictions/{prediction_id}")
    def wait_batch(
        self,
        model: ModelRef,
        batch: int | BatchPredictionRead,
        *,
        timeout: float | None = None,
        poll_s: float = 1.0,
    ) -> BatchPredictionRead:
        """Poll until the batch prediction ends; returns it (whatever its status)."""
        return poll(
            lambda: self.batch(model, batch),
            lambda b: b.status in ("succeeded", "failed", "cancelled"),
            timeout,
            poll_s,
            f"batch prediction {ident(batch)}",
        )

    @covers("GET /v1/models/{model_id}/predictions/{prediction_id}/result")
    def download_batch(
        self,
        model: ModelRef,
        batch: int | BatchPredictionRead,
        target: str | os.PathLike[str],
        *,
        format: str = "csv",
        output: str = "predictions",
    ) -> Path:
        """Save the result to ``target`` as it streams in: ``csv``, ``jsonl``, or ``npy`` (one
        ``output``: predictions, scores or probabilities)."""
        return self._t.download(
            f"/v1/models/{model_ref(model)}/predictions/{ident(batch)}/result",
            Path(target),
            params={"format": format, "output": output},
        )

    @overload
    def predict_batch(
        self,
        model: ModelRef,
        X: Any,
        *,
        wait: Literal[True] = True,
        keep: bool = False,
        name: str | None = None,
        format: str = "auto",
        extra_features: str = "fail",
        timeout: float | None = None,
        poll_s: float = 1.0,
    ) -> Prediction: ...

    @overload
    def predict_batch(
        self,
        model: ModelRef,
        X: Any,
        *,
        wait: Literal[False],
        keep: bool = False,
        name: str | None = None,
        format: str = "auto",
        extra_features: str = "fail",
        timeout: float | None = None,
        poll_s: float = 1.0,
    ) -> BatchPredictionRead: ...

    @covers(
        *UPLOAD_OPERATIONS,
        "GET /v1/models/{model_id}",
        "POST /v1/models/{model_id}/predictions",
        "GET /v1/models/{model_id}/predictions/{prediction_id}",
        "GET /v1/models/{model_id}/predictions/{prediction_id}/result",
        "DELETE /v1/models/{model_id}/predictions/{prediction_id}",
        "DELETE /v1/datasets/{dataset_id}",
    )
    def predict_batch(
        self,
        model: ModelRef,
        X: Any,
        *,
        wait: bool = True,
        keep: bool = False,
        name: str | None = None,
        format: str = "auto",
        extra_features: str = "fail",
        timeout: float | None = None,
        poll_s: float = 1.0,
    ) -> Prediction | BatchPredictionRead:
        """Predict every row of ``X`` in the background, with no body limit: ``X`` is uploaded
        as a data set without labels (``labelled=false``) and predicted in a batch.

        ``X``: a file path (CSV, svmlight, Parquet or Arrow, plain or compressed, sent as it is,
        ``format`` as for uploads; a CSV's columns in the model's order) or what
        :meth:`predict` takes (a DataFrame or rows keyed by feature name are sent with the
        model's features in its order, other columns such as a label left out).
        ``wait``: poll until the batch ends and return its :class:`Prediction` (the model's
        labels, scores, probabilities), as :meth:`predict` does; the uploaded data set and the
        batch prediction are then deleted unless ``keep``. ``wait=False`` returns the batch
        prediction at once (see :meth:`wait_batch`, :meth:`download_batch`); both stay.
        Raises :class:`~pgs_client.errors.BatchPredictionFailed` when the batch fails or is
        cancelled, ``TimeoutError`` after ``timeout`` seconds (everything is kept then).
        """
        found = self.get(model)
        datasets = Datasets(self._t)
        if isinstance(X, (str, os.PathLike)):
            dataset = datasets.upload(X, name, format=format, labelled=False)
        else:
            with tempfile.TemporaryDirectory(prefix="pgs-batch-") as tmp:
                path, fields = data.write_upload(X, None, Path(tmp), found.feature_names)
                dataset = datasets.upload(
                    path,
                    name or f"rows for model {found.id}",
                    format=fields["format"],
                    header=fields.get("header", "auto"),
                    zero_based=fields.get("zero_based", "auto"),
                    labelled=False,
                )
        try:
            batch = self.predict_dataset(found, dataset, extra_features=extra_features)
        except ApiError:
            if not keep:
                datasets.delete(dataset)
            raise
        if not wait:
            return batch
        done = self.wait_batch(found, batch, timeout=timeout, poll_s=poll_s)
        try:
            if done.status != "succeeded":
                raise BatchPredictionFailed(done)
            return self._batch_prediction(found, done)
        finally:
            if not keep:
                self.delete_batch(found, done)
                datasets.delete(dataset)

    def _batch_prediction(self, model: ModelRead, batch: BatchPredictionRead) -> Prediction:
        """A succeeded batch's result as :meth:`predict` answers."""
        response = self._t.request(
            "GET",
            f"/v1/models/{model.id}/predictions/{batch.id}/result",
            safe=True,
            params={"format": "jsonl"},
        )
        lines = [json.loads(line) for line in response.text.splitlines() if line]
        part = {
            "predictions": [line["prediction"] for line in lines],
            "scores": [line["score"] for line in lines],
            "probabilities": [line["probabilities"] for line in lines]
            if "probabilities" in lines[0]
            else None,
        }
        return _arrays([part])

    # -- predictions of rows sent in the request ------------------------------------------------

    @covers("POST /v1/models/{model_id}/predict")
    def predict(
        self,
        model: ModelRef,
        X: Any,
        *,
        extra_features: str = "fail",
        batch_rows: int = BATCH_ROWS,
        batch_bytes: int = BATCH_BYTES,
    ) -> Prediction:
        """Predict every row of ``X``: a pandas DataFrame (sent as CSV with its header: columns
        matched by name, text, categorical, nullable and numeric columns, missing cells), a
        NumPy 2-D array, a SciPy sparse matrix, a list of dense rows, or a list of dicts keyed
        by feature name, by 0-based index (``{3: 1.5}``) or ``{"indices", "values"}``. Sent in
        batches of at most ``batch_rows`` rows and about ``batch_bytes``. ``extra_features``:
        "ignore" leaves out features beyond the model's width instead of refusing them."""
        bodies_ = bodies.for_input(X, batch_rows, batch_bytes)
        return self._predict(model_ref(model), bodies_, extra_features)

    def predict_file(
        self,
        model: ModelRef,
        file: str | os.PathLike[str] | IO[bytes],
        *,
        format: str = "auto",
        extra_features: str = "fail",
        batch_rows: int = BATCH_ROWS,
        batch_bytes: int = BATCH_BYTES,
    ) -> Prediction:
        """Predict every row of a CSV file (its header names the columns, which may come in any
        order; a label column is left out; empty and ``NA`` cells are missing) or of svmlight
        lines (a leading label ignored), plain or gzip; ``file`` is a path or a binary stream.
        The file goes to the service as it is, in batches at record boundaries. ``format``:
        auto (by the name's extension, else the first line), csv or svmlight. Parquet and Arrow
        files are refused (ValueError): predict reads text; :meth:`predict_batch` takes them."""
        bodies_ = bodies.for_file(file, format, batch_rows, batch_bytes)
        return self._predict(model_ref(model), bodies_, extra_features)

    @covers("POST /v1/models/{model_id}/predict")
    def predict_svmlight(
        self,
        model: ModelRef,
        lines: Iterable[str],
        *,
        extra_features: str = "fail",
        batch_rows: int = BATCH_ROWS,
    ) -> Prediction:
        """Predict svmlight/LIBSVM lines (a leading label is ignored; feature indices as in the
        model's training file), sent as ``text/plain`` in batches."""
        encoded = (line.strip().encode() for line in lines if line.strip())
        bodies_ = bodies.Bodies("text/plain", _chunks(encoded, batch_rows), b"\n".join)
        return self._predict(model_ref(model), bodies_, extra_features)

    def _predict(self, model_id: str, bodies_: bodies.Bodies, extra_features: str) -> Prediction:
        parts: builtins.list[dict[str, Any]] = []
        for batch in bodies_.batches:
            parts.extend(self._post(model_id, batch, bodies_, extra_features))
        if not parts:
            raise ValueError("nothing to predict: X has no rows")
        return _arrays(parts)

    def _post(
        self, model_id: str, rows: builtins.list[bytes], bodies_: bodies.Bodies, extra_features: str
    ) -> builtins.list[dict[str, Any]]:
        try:
            response = self._t.request(
                "POST",
                f"/v1/models/{model_id}/predict",
                safe=True,
                content=bodies_.join(rows),
                headers={"Content-Type": bodies_.content_type},
                params={"extra_features": extra_features},
            )
        except PayloadTooLarge:
            if len(rows) == 1:
                raise
            half = len(rows) // 2
            return self._post(model_id, rows[:half], bodies_, extra_features) + self._post(
                model_id, rows[half:], bodies_, extra_features
            )
        return [response.json()]
