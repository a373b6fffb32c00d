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
from app.core.db import is_unavailable, make_engine, make_session_factory, retry_db, transaction
from app.models import Dataset, Job, JobStatus, Model
from app.services import jobs
from app.services.datasets import load_csr, split_indices, widen
from app.services.leases import Heartbeat
from app.services.model_store import delete_model_files, save_model_files
from app.services.parsing import json_label
from app.services.study_phases import select_sigma, subsample_rows
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
    # Studies (app/services/study_phases.py): a subsample of the training part, sigma selection.
    train_size: int | None = None
    subsample_seed: int | None = None
    select_sigma: dict[str, Any] | None = None


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
            train_size=job.train_size, subsample_seed=job.subsample_seed,
            select_sigma=job.select_sigma,
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
    # Metrics of the job beyond the trace's (a study's sigma selection).
    extra: dict[str, Any] = field(default_factory=dict)

    def progress(self) -> jobs.Progress:
        p = self.last
        new = [trace_row(pt) for pt in self.points[self.written:]]
        return jobs.Progress(
            iteration=p.iteration if p else 0,
            n_iter=p.n_iter if p else None,
            samples_seen=p.samples_seen if p else 0,
            metrics={**running_metrics(self.points, self.targets, self.higher_is_better),
                     **self.extra},
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
        try:
            owned, cancel = jobs.record_progress(self.factory, self.job_id, self.token, p)
        except Exception as exc:
            if not is_unavailable(exc):
                raise
            # A database outage is not the job's fault: keep training; the points not written
            # go with the next write.
            log.warning("job %d: progress not written: database unavailable", self.job_id)
            self.last_write = now
            return None
        self.written += len(p.points)
        self.last_write = now
        if not owned:
            self.stop_cause = "lost"
        elif cancel:
            self.stop_cause = "cancel"
        return False if self.stop_cause else None


TRACE_FIELDS = ("iteration", "samples_seen", "solver_seconds", "objective", "test_score",
                "score_name", "nnz_weights", "data_accesses")


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
        # The lease: other API processes take the job for lost when the heartbeats stop.
        with Heartbeat(factory, job_id, token, settings.heartbeat_s):
            return _train(job_id, token, settings, factory)
    except Exception as exc:
        if is_unavailable(exc):
            # Not the job's fault: give the claim back (not counted as a try) once the database
            # answers; a sweep dispatches it again. If it never answers, the lease expires.
            log.warning("job %d: database unavailable; returning it to the queue", job_id)
            retry_db(lambda: jobs.release(factory, job_id, token), settings.db_wait_s,
                     f"job {job_id}: release")
            return JobStatus.QUEUED
        log.exception("job %d failed", job_id)
        _finish(settings, factory, job_id, token, JobStatus.FAILED,
                error=f"{type(exc).__name__}: {exc}")
        return JobStatus.FAILED


def _finish(settings: Settings, factory: jobs.Factory, job_id: int, token: int, status: str,
            **kwargs: Any) -> bool:
    """jobs.finish through a database outage of up to ``db_wait_s``. A retry first checks
    whether the failed try committed after all (its reply lost with the connection)."""
    tries = 0

    def attempt() -> bool:
        nonlocal tries
        tries += 1
        if tries > 1:
            if jobs.finished_as(factory, job_id, token, status):
                return True
            if kwargs.get("model") is not None:
                kwargs["model"] = _fresh(kwargs["model"])
        return jobs.finish(factory, job_id, token, status, **kwargs)

    return retry_db(attempt, settings.db_wait_s, f"job {job_id}: final write")


def _fresh(model: Model) -> Model:
    """A new Model row with the same values (a rolled-back insert may have set its id)."""
    return Model(**{c.key: getattr(model, c.key) for c in Model.__table__.columns
                    if c.key != "id"})


def _select_sigma(
    spec: _JobSpec, params: dict[str, Any], X: Any, y: np.ndarray, classification: bool,
    reporter: _Reporter,
) -> float | None:
    """A study's sigma, chosen on a validation split of the job's own training rows (the
    reporter sees cancel and shutdown in between) and recorded in the job's metrics; None
    without select_sigma or when the job was stopped meanwhile."""
    cfg = spec.select_sigma
    if cfg is None:
        return None
    reporter.extra = {"phase": "select_sigma"}
    selection = select_sigma(
        lambda sigma: build_estimator(spec.solver, spec.task, {**params, "sigma": sigma}),
        X, y, classification=classification, grid=cfg["grid"],
        validation_fraction=cfg["validation_fraction"],
        seed=spec.subsample_seed if spec.subsample_seed is not None else spec.split_seed,
        callback=reporter, stopped=lambda: reporter.stop_cause is not None,
    )
    reporter.last = None  # progress is the real fit's from here on
    if selection is None:
        return None
    reporter.extra = selection.metrics()
    return selection.sigma


def _train(job_id: int, token: int, settings: Settings, factory: jobs.Factory) -> str:
    spec = _load_spec(factory, job_id)
    store = settings.store
    with store.open(spec.train_file) as fh:
        X, y = load_csr(fh)
    X_test = y_test = None
    if spec.test_file is not None:
        with store.open(spec.test_file) as fh:
            X_test, y_test = load_csr(fh)
        X_test = widen(X_test, spec.n_features)
    elif spec.test_fraction is not None:
        train_rows, test_rows = split_indices(X.shape[0], spec.test_fraction, spec.split_seed)
        X, X_test, y, y_test = X[train_rows], X[test_rows], y[train_rows], y[test_rows]
    if spec.train_size is not None:
        # A study's job: a seeded subsample of the training part, never of the evaluation rows.
        rows = subsample_rows(X.shape[0], spec.train_size, spec.subsample_seed or 0)
        X, y = X[rows], y[rows]

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
    reporter = _Reporter(factory, job_id, token, settings.progress_interval_s, spec.targets,
                         higher_is_better=classification)
    chosen = _select_sigma(spec, params, X, y_fit, classification, reporter)
    if chosen is not None:
        params["sigma"] = chosen
    est = build_estimator(spec.solver, spec.task, params)
    eval_set = (X_test, y_eval) if X_test is not None else None
    if reporter.stop_cause is None:
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
        _finish(settings, factory, job_id, token, JobStatus.CANCELLED, progress=progress,
                    stop_reason="cancelled")
        log.info("job %d: cancelled at iteration %d", job_id, progress.iteration)
        return JobStatus.CANCELLED

    # The final metrics come from the returned model itself, not from the last checkpoint.
    metrics = running_metrics(list(est.trace_), spec.targets, classification) | reporter.extra
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
    if meta.get("nnz_weights") is not None:
        metrics["nnz_weights"] = int(meta["nnz_weights"])
    service_meta = {
        "solver": spec.solver,
        "task": spec.task,
        "n_features": spec.n_features,
        "index_base": spec.index_base,
        "classes": None if classes is None else [json_label(c) for c in classes],
        "job_id": job_id,
    }
    stem, size = save_model_files(
        store, {"estimator": meta, "service": service_meta}, arrays
    )
    model = Model(
        job_id=job_id, dataset_id=spec.dataset_id, solver=spec.solver, task=spec.task,
        estimator=meta["estimator"], params=meta["params"], n_features=spec.n_features,
        classes=service_meta["classes"], index_base=spec.index_base, metrics=metrics,
        file_stem=stem, size_bytes=size,
    )
    if not _finish(settings, factory, job_id, token, JobStatus.SUCCEEDED, progress=progress,
                       stop_reason=est.stop_reason_, model=model):
        delete_model_files(store, stem)
        return "lost"
    log.info("job %d: succeeded (%s), model %d", job_id, est.stop_reason_, model.id)
    return JobStatus.SUCCEEDED
