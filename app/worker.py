"""Code that runs inside the worker processes: the initializer and the job entry point.

:func:`run_job` is a pure, picklable function of ``(job_id, settings)``: everything it needs is in
the database and the data dir, so any executor (a process pool today, a distributed engine later)
can call it. It never raises for a job's own failure: the outcome is written to the database.
"""

from __future__ import annotations

import logging
import math
import os
import signal
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from app.core.config import Settings
from app.core.db import make_engine, make_session_factory, transaction
from app.models import Dataset, Job, JobStatus, Model
from app.services import jobs
from app.services.datasets import load_csr, split_indices, widen
from app.services.model_store import delete_model_files, save_model_files
from app.services.parsing import json_label
from app.solvers import build_estimator

log = logging.getLogger("app.worker")

# Set by the server at a graceful shutdown: running jobs stop and go back to the queue.
_shutdown_event: Any = None
_parent_pid: int | None = None
_factories: dict[str, jobs.Factory] = {}


def init_worker(settings: Settings, shutdown_event: Any) -> None:
    """Process-pool initializer: signals, logging, Numba cache and the kernel warm-up."""
    global _shutdown_event, _parent_pid
    _shutdown_event = shutdown_event
    _parent_pid = os.getppid()
    # Ctrl+C reaches the whole process group; the server decides what happens to running jobs.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.basicConfig(
        level=settings.log_level.upper(),
        format="%(asctime)s %(levelname)s [worker %(process)d] %(name)s: %(message)s",
    )
    if settings.numba_cache_dir is not None:
        # Before the first import of numba (the solver is imported lazily for this reason).
        os.environ.setdefault("NUMBA_CACHE_DIR", str(settings.numba_cache_dir))
    from solver import warm_up

    started = time.perf_counter()
    warm_up()
    log.info("worker ready (warm-up %.2f s)", time.perf_counter() - started)


def ping() -> int:
    """A no-op task: its result shows that a worker process started and warmed up."""
    return os.getpid()


def _factory(settings: Settings) -> jobs.Factory:
    f = _factories.get(settings.database_url)
    if f is None:
        engine = make_engine(settings.database_url, settings.sqlite_busy_timeout_s)
        f = _factories[settings.database_url] = make_session_factory(engine)
    return f


@dataclass
class _JobSpec:
    dataset_id: int
    solver: str
    task: str
    params: dict[str, Any]
    targets: list[float]
    time_budget_s: float | None
    train_file: str
    test_file: str | None
    test_fraction: float | None
    split_seed: int
    n_features: int
    index_base: int


def _load_spec(factory: jobs.Factory, job_id: int) -> _JobSpec:
    with transaction(factory) as s:
        job = s.get(Job, job_id)
        assert job is not None
        train = s.get(Dataset, job.dataset_id) if job.dataset_id is not None else None
        test = s.get(Dataset, job.test_dataset_id) if job.test_dataset_id is not None else None
        if train is None or (job.test_dataset_id is not None and test is None):
            raise RuntimeError("the job's data set was deleted before the job ran")
        return _JobSpec(
            dataset_id=train.id, solver=job.solver, task=job.task, params=dict(job.params),
            targets=list(job.targets),
            time_budget_s=job.time_budget_s, train_file=train.file_name,
            test_file=test.file_name if test is not None else None,
            test_fraction=job.test_fraction, split_seed=job.split_seed,
            n_features=train.n_features, index_base=train.index_base,
        )


@dataclass
class _Reporter:
    """The fit callback: buffers trace points, writes progress, stops on cancel or shutdown."""

    factory: jobs.Factory
    job_id: int
    token: int
    interval: float
    targets: list[float]
    higher_is_better: bool
    points: list[Any] = field(default_factory=list)
    written: int = 0
    last_write: float = 0.0
    stop_cause: str | None = None
    last: Any = None

    def progress(self) -> jobs.Progress:
        p = self.last
        new = [trace_row(pt) for pt in self.points[self.written:]]
        return jobs.Progress(
            iteration=p.iteration if p else 0,
            n_iter=p.n_iter if p else None,
            samples_seen=p.samples_seen if p else 0,
            metrics=running_metrics(self.points, self.targets, self.higher_is_better),
            points=new,
            first_seq=self.written,
        )

    def __call__(self, progress: Any) -> bool | None:
        self.last = progress
        self.points.extend(progress.new_points)
        if _shutdown_event is not None and _shutdown_event.is_set():
            self.stop_cause = "shutdown"
            return False
        if _parent_pid is not None and os.getppid() != _parent_pid:
            self.stop_cause = "orphaned"  # the server died; its successor re-queues the job
            return False
        now = time.monotonic()
        if now - self.last_write < self.interval:
            return None
        p = self.progress()
        owned, cancel = jobs.record_progress(self.factory, self.job_id, self.token, p)
        self.written += len(p.points)
        self.last_write = now
        if not owned:
            self.stop_cause = "lost"
        elif cancel:
            self.stop_cause = "cancel"
        return False if self.stop_cause else None


TRACE_FIELDS = ("iteration", "samples_seen", "solver_seconds", "objective", "test_score",
                "score_name")


def trace_row(point: Any) -> dict[str, Any]:
    """The stored columns of a solver TracePoint (extra fields a solver adds are not stored)."""
    row = {name: getattr(point, name) for name in TRACE_FIELDS}
    row["objective"] = _finite(row["objective"])
    row["test_score"] = _finite(row["test_score"])
    return row


def _finite(v: float | None) -> float | None:
    return None if v is None or not math.isfinite(v) else float(v)


def running_metrics(points: list[Any], targets: list[float], higher_is_better: bool) -> dict[str, Any]:
    """Metrics from the checkpoints so far (the final ones replace the test score at the end)."""
    from solver.tracing import time_to_target

    last = points[-1] if points else None
    score_key = "test_accuracy" if higher_is_better else "test_rmse"
    ttt = time_to_target(points, targets, higher_is_better)
    return {
        "solver_seconds": last.solver_seconds if last else 0.0,
        "objective": _finite(last.objective) if last else None,
        score_key: _finite(last.test_score) if last else None,
        "time_to_target": {repr(float(t)): v for t, v in ttt.items()},
    }


def _encode_labels(
    y_train: np.ndarray, y_test: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    classes, codes = np.unique(y_train, return_inverse=True)
    test_codes = None
    if y_test is not None:
        pos = np.clip(np.searchsorted(classes, y_test), 0, len(classes) - 1)
        # A test label the training data never had can never be predicted: code -1.
        test_codes = np.where(classes[pos] == y_test, pos, -1)
    return classes, codes, test_codes


def run_job(job_id: int, settings: Settings) -> str:
    """Run one training job to a terminal state; returns the status it ended in."""
    if _shutdown_event is not None and _shutdown_event.is_set():
        return "skipped"  # the server is stopping: the job stays queued for the next start
    factory = _factory(settings)
    token = jobs.claim(factory, job_id, os.getpid())
    if token is None:
        return "skipped"  # cancelled while queued, or already taken by another run
    log.info("job %d: started (attempt %d)", job_id, token)
    try:
        return _train(job_id, token, settings, factory)
    except Exception as exc:
        log.exception("job %d failed", job_id)
        jobs.finish(factory, job_id, token, JobStatus.FAILED, error=f"{type(exc).__name__}: {exc}")
        return JobStatus.FAILED


def _train(job_id: int, token: int, settings: Settings, factory: jobs.Factory) -> str:
    spec = _load_spec(factory, job_id)
    X, y = load_csr(settings.data_dir / spec.train_file)
    X_test = y_test = None
    if spec.test_file is not None:
        X_test, y_test = load_csr(settings.data_dir / spec.test_file)
        X_test = widen(X_test, spec.n_features)
    elif spec.test_fraction is not None:
        train_rows, test_rows = split_indices(X.shape[0], spec.test_fraction, spec.split_seed)
        X, X_test, y, y_test = X[train_rows], X[test_rows], y[train_rows], y[test_rows]

    classification = spec.task != "regression"
    classes = None
    if classification:
        classes, y_fit, y_eval = _encode_labels(y, y_test)
        if len(classes) < 2:
            raise ValueError(f"the training data has a single class ({classes[0]!r}); need two")
    else:
        y_fit, y_eval = y.astype(np.float64), (None if y_test is None else y_test.astype(np.float64))

    params = dict(spec.params)
    if spec.time_budget_s is not None:
        params["time_budget"] = spec.time_budget_s
    est = build_estimator(spec.solver, spec.task, params)
    reporter = _Reporter(factory, job_id, token, settings.progress_interval_s, spec.targets,
                         higher_is_better=classification)
    eval_set = (X_test, y_eval) if X_test is not None else None
    est.fit(X, y_fit, eval_set=eval_set, callback=reporter, trace=True)

    cause = reporter.stop_cause
    if cause in ("lost", "orphaned"):
        log.warning("job %d: run abandoned (%s)", job_id, cause)
        return cause
    if cause == "shutdown":
        jobs.release(factory, job_id, token)
        log.info("job %d: interrupted by shutdown, back in the queue", job_id)
        return JobStatus.QUEUED
    progress = reporter.progress()
    if cause == "cancel":
        jobs.finish(factory, job_id, token, JobStatus.CANCELLED, progress=progress,
                    stop_reason="cancelled")
        log.info("job %d: cancelled at iteration %d", job_id, progress.iteration)
        return JobStatus.CANCELLED

    # The final metrics come from the returned model itself, not from the last checkpoint.
    metrics = running_metrics(list(est.trace_), spec.targets, classification)
    metrics["solver_seconds"] = float(est.solver_seconds_)
    if X_test is not None and y_eval is not None:
        if classification:
            metrics["test_accuracy"] = float(np.mean(est.predict(X_test) == y_eval))
        else:
            metrics["test_rmse"] = float(np.sqrt(np.mean((est.predict(X_test) - y_eval) ** 2)))
    progress.iteration = int(est.n_iter_)
    # The estimator's own trace is authoritative for the points not yet written (a fit that stops
    # at its very first checkpoint never calls back).
    progress.points = [trace_row(p) for p in est.trace_[reporter.written:]]
    final = est.trace_[-1] if est.trace_ else None
    if final is not None and final.iteration == est.n_iter_:
        progress.samples_seen = int(final.samples_seen)
    progress.metrics = metrics

    meta, arrays = est.export_model()
    service_meta = {
        "solver": spec.solver,
        "task": spec.task,
        "n_features": spec.n_features,
        "index_base": spec.index_base,
        "classes": None if classes is None else [json_label(c) for c in classes],
        "job_id": job_id,
    }
    stem, size = save_model_files(
        settings.models_dir, {"estimator": meta, "service": service_meta}, arrays
    )
    model = Model(
        job_id=job_id, dataset_id=spec.dataset_id, solver=spec.solver, task=spec.task,
        estimator=meta["estimator"], params=meta["params"], n_features=spec.n_features,
        classes=service_meta["classes"], index_base=spec.index_base, metrics=metrics,
        file_stem=stem, size_bytes=size,
    )
    if not jobs.finish(factory, job_id, token, JobStatus.SUCCEEDED, progress=progress,
                       stop_reason=est.stop_reason_, model=model):
        delete_model_files(settings.data_dir, stem)
        return "lost"
    log.info("job %d: succeeded (%s), model %d", job_id, est.stop_reason_, model.id)
    return JobStatus.SUCCEEDED
