"""``/v1/models``: list, read, delete, export and import, and predict in batches."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any, Literal

from pgs_client import data
from pgs_client.convert import from_json
from pgs_client.errors import PayloadTooLarge
from pgs_client.models import ModelRead
from pgs_client.resources import ident
from pgs_client.transport import Transport

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
    columns = {key: [v for part in parts for v in part[key]]
               for key in ("predictions", "scores", "probabilities")
               if all(part.get(key) is not None for part in parts)}
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

    def get(self, model: int | ModelRead) -> ModelRead:
        return from_json(ModelRead, self._t.get(f"/v1/models/{ident(model)}"))

    def list(self, limit: int | None = None, *, page_size: int = 100) -> Iterator[ModelRead]:
        """Models, newest first, a page at a time."""
        return self._t.pages("/v1/models", lambda m: from_json(ModelRead, m), limit, page_size)

    def delete(self, model: int | ModelRead) -> None:
        self._t.request("DELETE", f"/v1/models/{ident(model)}", safe=True)

    def export(self, model: int | ModelRead, format: Literal["npz", "json", "onnx"],
               path: str | Path) -> Path:
        """Download the model to ``path``: npz or json (for :meth:`import_file` in another
        installation) or onnx (its preprocessing and decision, for onnxruntime)."""
        response = self._t.request("GET", f"/v1/models/{ident(model)}/export", safe=True,
                                   params={"format": format})
        target = Path(path)
        target.write_bytes(response.content)
        return target

    def import_file(self, path: str | Path) -> ModelRead:
        """Create a model from an npz or json file written by :meth:`export`."""
        target = Path(path)
        content_type = ("application/json" if target.suffix.lower() == ".json"
                        else "application/octet-stream")
        response = self._t.request("POST", "/v1/models", safe=False, content=target.read_bytes(),
                                   headers={"Content-Type": content_type})
        return from_json(ModelRead, response.json())

    def predict(self, model: int | ModelRead, X: Any, *, batch_rows: int = BATCH_ROWS,
                batch_bytes: int = BATCH_BYTES) -> Prediction:
        """Predict every row of ``X``: a NumPy 2-D array, a SciPy sparse matrix, a pandas
        DataFrame, a list of dense rows or a list of sparse dicts (``{index: value}``, 0-based).
        Sent as JSON in batches of at most ``batch_rows`` rows and about ``batch_bytes``."""
        batches = data.batches(X, batch_rows, batch_bytes)
        return self._predict(ident(model), batches, data.predict_body, "application/json")

    def predict_svmlight(self, model: int | ModelRead, lines: Iterable[str], *,
                         batch_rows: int = BATCH_ROWS) -> Prediction:
        """Predict svmlight/LIBSVM lines (a leading label is ignored; feature indices as in the
        model's training file), sent as ``text/plain`` in batches."""
        encoded = (line.strip().encode() for line in lines if line.strip())
        return self._predict(ident(model), _chunks(encoded, batch_rows), b"\n".join, "text/plain")

    def _predict(self, model_id: int, batches: Iterable[builtins.list[bytes]],
                 join: Callable[[builtins.list[bytes]], bytes], content_type: str) -> Prediction:
        parts: builtins.list[dict[str, Any]] = []
        for batch in batches:
            parts.extend(self._post(model_id, batch, join, content_type))
        if not parts:
            raise ValueError("nothing to predict: X has no rows")
        return _arrays(parts)

    def _post(self, model_id: int, rows: builtins.list[bytes], join: Callable[[builtins.list[bytes]], bytes],
              content_type: str) -> builtins.list[dict[str, Any]]:
        try:
            response = self._t.request(
                "POST", f"/v1/models/{model_id}/predict", safe=True, content=join(rows),
                headers={"Content-Type": content_type})
        except PayloadTooLarge:
            if len(rows) == 1:
                raise
            half = len(rows) // 2
            return (self._post(model_id, rows[:half], join, content_type)
                    + self._post(model_id, rows[half:], join, content_type))
        return [response.json()]
