"""Batch predictions: a model's predictions for every row of a stored data set, computed in the
background and stored as .npy files (one per output) for the result routes to stream.

They run in threads of the API process (app/background/batch_predictor.py), not in the training
pool: training jobs hold the pool's workers for minutes to hours, and a prediction is a matrix
product per block of rows with the model the /predict cache already holds. The state follows the
jobs' rules (services/jobs/state.py): queued -> running -> succeeded | failed | cancelled, and every
write of a run is conditional on its fencing token ``attempts``, so a run that lost its claim
writes nothing. Any API process claims queued rows (a pull: nothing is lost with the process
that accepted the request); a running row whose heartbeat is older than the lease is taken back
(re-queued, or failed after ``max_attempts`` runs). A run writes to temp files and copies them to
the store only when complete: a result in the store is whole.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import shutil
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from sqlalchemy import and_, func, select, update
from sqlalchemy.orm import Session

from app.core.errors import ProblemError, field_error, invalid
from app.core.storage.base import Store
from app.db.engine import SessionFactory, transaction
from app.db.tables import BatchPrediction, Dataset, JobStatus, Model, utcnow
from app.services.datasets.shards import DatasetShards, open_dataset
from app.services.datasets.splits import widen
from app.services.jobs.leases import older_than
from app.services.jobs.preprocessing import raw_matrix
from app.services.metrics.labelled import labelled_metrics
from app.services.model_registry.artifacts import LoadedModel
from app.services.model_registry.npy_stream import NpyRowWriter
from app.services.model_registry.predict import predict

log = logging.getLogger(__name__)

# Rows predicted at a time: a few milliseconds of work, so the thread gives the GIL back to the
# event loop often, and a few MB of output at most.
BLOCK_ROWS = 4096
# What predict() answers, in the order the result's CSV columns take them.
OUTPUTS = ("predictions", "scores", "probabilities")
TMP_PREFIX = "batch-"

ModelLoader = Callable[[int], LoadedModel]


def beyond_width(n_features: int, model_width: int) -> str:
    return (
        f"the data set has {n_features} features, the model {model_width}: features "
        f"{model_width} and up (0-based) are beyond the model's width; pass "
        "extra_features=ignore to leave them out"
    )


def _check_names(model: Model, dataset: Dataset) -> None:
    """A stored data set is predicted column by column: when both have a header, its columns
    must be the model's features in the model's order (a file with them reordered would
    predict other classes)."""
    ours, theirs = dataset.feature_names, model.feature_names
    if ours is None or theirs is None:
        return
    shared = min(len(ours), len(theirs))
    if ours[:shared] != theirs[:shared]:
        msg = (
            f"the data set's columns are {', '.join(ours)}; the model reads "
            f"{', '.join(theirs)}, in the model's order (send the file to /predict, which matches "
            "columns by name, or upload it with its columns in this order)"
        )
        raise invalid(msg, [field_error(["body", "dataset_id"], msg)])


def create(s: Session, model: Model, dataset: Dataset, extra_features: str) -> BatchPrediction:
    if dataset.n_features > model.n_features and extra_features == "fail":
        msg = beyond_width(dataset.n_features, model.n_features)
        raise invalid(msg, [field_error(["body", "dataset_id"], msg)])
    _check_names(model, dataset)
    prep = model.preprocessing or {}
    encoded, ignored = set(prep.get("categorical") or []), set(prep.get("ignore") or [])
    text = set(dataset.text_columns or [])
    if not encoded <= text or text - encoded - ignored:
        # The model one-hot encodes its text columns and reads the others as numbers: the data
        # set must hold text exactly there (an ignored column may be either).
        msg = (
            f"the model reads text in columns {sorted(encoded)} (ignoring {sorted(ignored)}); "
            f"the data set's text columns are {sorted(text)}"
        )
        raise invalid(msg, [field_error(["body", "dataset_id"], msg)])
    row = BatchPrediction(
        owner=model.owner,  # what runs under a model is its owner's
        model_id=model.id,
        dataset_id=dataset.id,
        n_rows=dataset.n_samples,
        extra_features=extra_features,
        status=JobStatus.QUEUED,
        attempts=0,
        rows_done=0,
        cancel_requested=False,
    )
    s.add(row)
    s.commit()
    return row


def _owned(batch_id: int, token: int) -> Any:
    return (
        (BatchPrediction.id == batch_id)
        & (BatchPrediction.attempts == token)
        & (BatchPrediction.status == JobStatus.RUNNING)
    )


def claim_next(factory: SessionFactory) -> tuple[int, int] | None:
    """The oldest queued batch prediction, now running: (id, fencing token), or None."""
    with transaction(factory) as s:
        for batch_id in s.scalars(
            select(BatchPrediction.id)
            .where(BatchPrediction.status == JobStatus.QUEUED, BatchPrediction.cancel_requested.is_(False))
            .order_by(BatchPrediction.id)
            .limit(8)
            .with_for_update(skip_locked=True)
        ):
            res = s.execute(
                update(BatchPrediction)
                .where(BatchPrediction.id == batch_id, BatchPrediction.status == JobStatus.QUEUED)
                .values(
                    status=JobStatus.RUNNING,
                    attempts=BatchPrediction.attempts + 1,
                    started_at=utcnow(),
                    heartbeat_at=utcnow(),
                    rows_done=0,
                    error=None,
                )
            )
            if res.rowcount == 1:  # type: ignore[attr-defined]
                token = s.scalar(select(BatchPrediction.attempts).where(BatchPrediction.id == batch_id))
                return batch_id, int(token or 0)
    return None


def record(factory: SessionFactory, batch_id: int, token: int, rows_done: int) -> tuple[bool, bool]:
    """Progress and heartbeat; returns (still owned, cancel requested)."""
    with transaction(factory) as s:
        res = s.execute(
            update(BatchPrediction)
            .where(_owned(batch_id, token))
            .values(rows_done=rows_done, heartbeat_at=utcnow())
        )
        if res.rowcount != 1:  # type: ignore[attr-defined]
            return False, False
        cancel = s.scalar(select(BatchPrediction.cancel_requested).where(BatchPrediction.id == batch_id))
        return True, bool(cancel)


def finish(
    factory: SessionFactory,
    batch_id: int,
    token: int,
    status: str,
    unless_cancelled: bool = False,
    **values: Any,
) -> bool:
    """Settle the run this ``token`` holds; ``unless_cancelled``: not if a cancel was accepted
    meanwhile (a success must not override a cancel the API already answered)."""
    owned = _owned(batch_id, token)
    if unless_cancelled:
        owned = and_(owned, BatchPrediction.cancel_requested.is_(False))
    with transaction(factory) as s:
        res = s.execute(
            update(BatchPrediction).where(owned).values(status=status, finished_at=utcnow(), **values)
        )
        return bool(res.rowcount == 1)  # type: ignore[attr-defined]


def release(factory: SessionFactory, batch_id: int, token: int) -> None:
    """running -> queued, not counted as a try: the server is stopping."""
    with transaction(factory) as s:
        s.execute(
            update(BatchPrediction)
            .where(_owned(batch_id, token))
            .values(
                status=JobStatus.QUEUED, attempts=BatchPrediction.attempts - 1, started_at=None, rows_done=0
            )
        )


def request_cancel(s: Session, row: BatchPrediction) -> None:
    """Queued: cancelled at once; running: flagged, its run stops at its next progress write."""
    if row.status not in JobStatus.ACTIVE:
        raise ProblemError(409, f"batch prediction {row.id} already {row.status}", kind="conflict")
    if row.status == JobStatus.QUEUED:
        row.status, row.finished_at = JobStatus.CANCELLED, utcnow()
    row.cancel_requested = True
    s.commit()


def _settle_lost(row: BatchPrediction, max_attempts: int, why: str) -> None:
    if row.cancel_requested:
        row.status, row.finished_at = JobStatus.CANCELLED, utcnow()
    elif row.attempts >= max_attempts:
        row.status, row.finished_at = JobStatus.FAILED, utcnow()
        row.error = f"{why}; gave up after {row.attempts} attempt(s)"
    else:
        row.status, row.rows_done, row.started_at = JobStatus.QUEUED, 0, None
        row.error = f"{why}; re-queued (attempt {row.attempts} of {max_attempts} was lost)"


def reap_lost(factory: SessionFactory, lease_s: float, max_attempts: int) -> int:
    """Running batch predictions whose heartbeat stopped (their process died or hangs)."""
    with transaction(factory) as s:
        last_sign = func.coalesce(BatchPrediction.heartbeat_at, BatchPrediction.started_at)
        rows = s.scalars(
            select(BatchPrediction)
            .where(BatchPrediction.status == JobStatus.RUNNING, older_than(s, last_sign, lease_s))
            .with_for_update(skip_locked=True)
        ).all()
        for row in rows:
            log.warning("batch prediction %d: lease expired (attempt %d)", row.id, row.attempts)
            _settle_lost(row, max_attempts, "the process running it stopped sending heartbeats")
        return len(rows)


def recover_on_startup(factory: SessionFactory, max_attempts: int) -> None:
    """One server owns a SQLite database: what it left running died with it."""
    with transaction(factory) as s:
        for row in s.scalars(select(BatchPrediction).where(BatchPrediction.status == JobStatus.RUNNING)):
            _settle_lost(row, max_attempts, "the server stopped while it was running")


def result_keys(result_key: str, outputs: list[str]) -> dict[str, str]:
    return {name: f"{result_key}.{name}.npy" for name in outputs}


def delete_result(store: Store, row: BatchPrediction) -> None:
    if row.result_key and row.outputs:
        store.delete(*result_keys(row.result_key, row.outputs).values())


def fit_width(X: sp.csr_matrix, width: int) -> sp.csr_matrix:
    """``X`` with the model's ``width`` columns: trailing features missing from a sparse file
    are zeros; features beyond the width (extra_features=ignore, checked at creation) dropped."""
    if X.shape[1] > width:
        return sp.csr_matrix(X[:, :width])
    return widen(X, width)


@dataclass(frozen=True)
class _DatasetRows:
    """A stored data set (read a shard at a time) and where its text columns are."""

    data: DatasetShards
    text_columns: list[int]
    # False: the data set has no labels (its stored zeros are not compared with anything).
    labelled: bool = True

    def blocks(self, model: LoadedModel) -> Iterator[tuple[int, Any, np.ndarray]]:
        """The rows, BLOCK_ROWS at a time (one shard mapped at a time), as the model's predict()
        takes them, each with the number of rows up to its end and the rows' labels."""
        done = 0
        for i in range(self.data.manifest.n_shards):
            X, y = self.data.shard(i)
            text = self.data.text(i)
            for start in range(0, X.shape[0], BLOCK_ROWS):
                block = fit_width(X[start : start + BLOCK_ROWS], model.n_features)
                done += block.shape[0]
                yield (
                    done,
                    self._model_input(
                        model, block, None if text is None else text[start : start + BLOCK_ROWS]
                    ),
                    y[start : start + BLOCK_ROWS],
                )

    def _model_input(self, model: LoadedModel, X: sp.csr_matrix, text: np.ndarray | None) -> Any:
        """With the text in its places when the model encodes text columns
        (app/services/jobs/preprocessing.py raw_matrix)."""
        if model.preprocessing is None or not model.preprocessing.get("categorical"):
            return X
        return raw_matrix(
            X, np.asarray(text) if text is not None else None, self.text_columns, model.preprocessing
        )


@dataclass(frozen=True)
class Predicted:
    """What a complete run wrote: its outputs, and the metrics against the data set's labels or
    why there are none."""

    outputs: list[str]
    metrics: dict[str, Any] | None
    metrics_note: str | None


class _Run:
    """One run of one batch prediction (``token``): predicts block by block into temp files."""

    def __init__(
        self,
        factory: SessionFactory,
        store: Store,
        tmp_dir: Path,
        batch_id: int,
        token: int,
        progress_interval_s: float,
        stopping: Callable[[], bool],
    ) -> None:
        self.factory, self.store, self.tmp_dir = factory, store, tmp_dir
        self.batch_id, self.token = batch_id, token
        self.progress_interval_s, self.stopping = progress_interval_s, stopping

    def tmp_path(self, output: str) -> Path:
        return self.tmp_dir / f"{TMP_PREFIX}{self.batch_id}-{self.token}-{output}.npy"

    def inputs(self, load_model: ModelLoader) -> tuple[LoadedModel, _DatasetRows] | str:
        """The model and the data set's rows (read a shard at a time), or why the run cannot
        start."""
        with self.factory() as s:
            row = s.get(BatchPrediction, self.batch_id)
            assert row is not None  # a running batch prediction is not deleted
            dataset = None if row.dataset_id is None else s.get(Dataset, row.dataset_id)
            if row.model_id is None or dataset is None:
                return "its model or data set was deleted"
            model_id, key = row.model_id, dataset.file_name
            text_columns, labelled = list(dataset.text_columns or []), dataset.labelled
        try:
            model = load_model(model_id)
        except ProblemError:
            return "its model was deleted"
        return model, _DatasetRows(open_dataset(self.store, key), text_columns, labelled)

    def predict_all(self, model: LoadedModel, rows: _DatasetRows) -> Predicted | None:
        """Predicts into the temp files; the outputs written and the metrics of the predictions
        against the data set's labels, or None when the run stops."""
        metrics = labelled_metrics(model) if rows.labelled else None
        n = rows.data.manifest.n_samples
        min_dtype = None if model.classes is None else np.asarray(model.classes).dtype
        files = {name: self.tmp_path(name).open("wb") for name in OUTPUTS}
        try:
            writers = {
                name: NpyRowWriter(fh, n, min_dtype if name == "predictions" else None)
                for name, fh in files.items()
            }
            last_write = time.monotonic()
            for rows_done, X, y in rows.blocks(model):
                out = predict(model, X)
                if metrics is not None:
                    metrics.add(y, np.asarray(out["scores"]))
                for name in OUTPUTS:
                    if name in out:
                        writers[name].write(np.asarray(out[name]))
                if time.monotonic() - last_write >= self.progress_interval_s:
                    last_write = time.monotonic()
                    if not self.keep_going(rows_done):
                        return None
            written = [name for name in OUTPUTS if writers[name].rows]
            for name in written:
                writers[name].close()
            if metrics is None:
                return Predicted(written, None, "the data set has no labels (uploaded with labelled=false)")
            result = metrics.result()
            note = None if result is not None else "the data set's labels are not of the model's kind"
            return Predicted(written, result, note)
        finally:
            for fh in files.values():
                fh.close()

    def keep_going(self, rows_done: int) -> bool:
        if self.stopping():
            release(self.factory, self.batch_id, self.token)
            return False
        owned, cancel = record(self.factory, self.batch_id, self.token, rows_done)
        if owned and cancel:
            finish(self.factory, self.batch_id, self.token, JobStatus.CANCELLED)
        return owned and not cancel

    def publish(self, predicted: Predicted, n_rows: int) -> None:
        """Copy the complete temp files to the store, then mark the run succeeded."""
        result_key = f"predictions/{uuid.uuid4().hex}"
        keys = result_keys(result_key, predicted.outputs)
        try:
            for name, key in keys.items():
                with self.tmp_path(name).open("rb") as src:
                    self.store.write(key, functools.partial(shutil.copyfileobj, src))
            published = finish(
                self.factory,
                self.batch_id,
                self.token,
                JobStatus.SUCCEEDED,
                unless_cancelled=True,
                rows_done=n_rows,
                result_key=result_key,
                outputs=predicted.outputs,
                metrics=predicted.metrics,
                metrics_note=predicted.metrics_note,
            )
        except BaseException:  # a full disk: no result files that no row names
            self.store.delete(*keys.values())
            raise
        if not published:
            # Cancelled after the last progress write, or the run lost its claim: no result.
            self.store.delete(*keys.values())
            finish(self.factory, self.batch_id, self.token, JobStatus.CANCELLED)

    def cleanup(self) -> None:
        for name in OUTPUTS:
            with contextlib.suppress(FileNotFoundError):
                self.tmp_path(name).unlink()


def run(
    factory: SessionFactory,
    store: Store,
    tmp_dir: Path,
    batch_id: int,
    token: int,
    load_model: ModelLoader,
    progress_interval_s: float,
    stopping: Callable[[], bool] = lambda: False,
) -> None:
    """Run the claimed batch prediction ``batch_id`` to its end (a terminal status), or give it
    back to the queue when ``stopping()`` turns true."""
    r = _Run(factory, store, tmp_dir, batch_id, token, progress_interval_s, stopping)
    try:
        inputs = r.inputs(load_model)
        if isinstance(inputs, str):
            finish(factory, batch_id, token, JobStatus.FAILED, error=inputs)
            return
        model, rows = inputs
        if not r.keep_going(0):
            return
        predicted = r.predict_all(model, rows)
        if predicted is not None:
            r.publish(predicted, rows.data.manifest.n_samples)
    except Exception as exc:  # the run ends failed, never stays running
        log.exception("batch prediction %d failed", batch_id)
        finish(factory, batch_id, token, JobStatus.FAILED, error=f"{type(exc).__name__}: {exc}")
    finally:
        r.cleanup()
