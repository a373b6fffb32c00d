"""Code that runs inside the worker processes: the initializer and the job entry point.

:func:`run_job` is a pure, picklable function of ``(job_id, settings)``: everything it needs is in
the database and the store, so any executor (a process pool, a Dask worker) can call it. It is
the process glue around app/training/steps.py: claim the job, keep its lease, run the training steps,
write the outcome. It never raises for a job's own failure: the outcome is written to the
database, and it returns the status the job is in afterwards (a :class:`app.db.tables.JobStatus`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from typing import Any

from app.core.config import Settings
from app.db.engine import SessionFactory, is_unavailable, make_engine, make_session_factory, retry_db
from app.db.tables import JobStatus, Model
from app.services.jobs import state as jobs
from app.services.jobs.leases import Heartbeat
from app.services.model_registry.artifacts import delete_model_files
from app.training import steps as training
from app.training.reporter import Reporter, Stop
from app.training.timing import JobClock

log = logging.getLogger("app.training.worker")

# Set by the server at a graceful shutdown: running jobs stop and go back to the queue.
_shutdown_event: Any = None
_parent_pid: int | None = None
_factories: dict[str, SessionFactory] = {}


def init_worker(settings: Settings, shutdown_event: Any) -> None:
    """The local pool's worker initializer: logging, the Numba cache and the solver's imports
    (the pool, app/training/pool.py, sets the worker's signals).

    No kernel is compiled here: a job's fit loads from the Numba cache (filled by ``make install``
    or the image build) or compiles only the kernels it needs, before its solver clock starts
    (``solver.tracing``). A cold warm-up of every kernel took 120-390 s of a loaded 2-core machine,
    during which the worker could run no job and /readyz said not ready.
    """
    global _shutdown_event, _parent_pid
    _shutdown_event = shutdown_event
    _parent_pid = os.getppid()
    logging.basicConfig(
        level=settings.log_level.upper(),
        format="%(asctime)s %(levelname)s [worker %(process)d] %(name)s: %(message)s",
    )
    if settings.numba_cache_dir is not None:
        # Before the first import of numba (the solver is imported lazily for this reason).
        os.environ.setdefault("NUMBA_CACHE_DIR", str(settings.numba_cache_dir))
    started = time.perf_counter()
    import solver  # noqa: F401 - numba, scipy and scikit-learn, imported once per worker

    log.info(
        "worker ready (imports %.2f s; kernels load or compile when a job needs them)",
        time.perf_counter() - started,
    )


def ping() -> int:
    """A no-op task: its result shows that a worker process started and warmed up."""
    return os.getpid()


def _factory(settings: Settings) -> SessionFactory:
    f = _factories.get(settings.database_url)
    if f is None:
        engine = make_engine(settings.database_url, settings.sqlite_busy_timeout_s)
        f = _factories[settings.database_url] = make_session_factory(engine)
    return f


def _interrupted() -> Stop | None:
    """This process's reasons to stop a run: the server's graceful shutdown, or its death."""
    if _shutdown_event is not None and _shutdown_event.is_set():
        return Stop.SHUTDOWN
    if _parent_pid is not None and os.getppid() != _parent_pid:
        return Stop.ORPHANED  # the server died; its successor re-queues the job
    return None


def run_job(job_id: int, settings: Settings) -> str:
    """Run one training job to a terminal state; returns the job's status afterwards."""
    if _interrupted() is Stop.SHUTDOWN:
        return JobStatus.QUEUED  # the server is stopping: the job stays queued for the next start
    settings = settings.on_this_host()
    factory = _factory(settings)
    token = jobs.claim(factory, job_id, os.getpid())
    # Not claimed (cancelled while queued, or taken by another run), or the claim was lost on
    # the way: the job is in other hands, and its status is whatever they made it.
    status = None if token is None else _run_claimed(job_id, token, settings, factory)
    return status if status is not None else jobs.status_of(factory, job_id)


def _run_claimed(job_id: int, token: int, settings: Settings, factory: SessionFactory) -> str | None:
    """The claimed run to its end; None if it lost the claim on the way."""
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
            retry_db(
                lambda: jobs.release(factory, job_id, token), settings.db_wait_s, f"job {job_id}: release"
            )
            return JobStatus.QUEUED
        log.exception("job %d failed", job_id)
        _finish(settings, factory, job_id, token, JobStatus.FAILED, error=f"{type(exc).__name__}: {exc}")
        return JobStatus.FAILED


def _train(job_id: int, token: int, settings: Settings, factory: SessionFactory) -> str | None:
    clock = JobClock()  # the run's wall time, from the claim: overhead_seconds and its parts
    with clock.part("load"):
        job = training.load_job(factory, job_id)
    reporter = Reporter(
        factory,
        job_id,
        token,
        settings.progress_interval_s,
        job.targets,
        higher_is_better=job.higher_is_better,
        score_name=job.target_metric,
        interrupted=_interrupted,
        max_points=settings.max_trace_points,
        **_deadline(job, settings),
    )
    trained = training.train(job, settings.store, reporter, settings.worker_memory_bytes, clock)
    if trained is None:
        return _stopped(job_id, token, settings, factory, reporter)
    model = training.store_model(settings.store, job, trained, clock)
    status = JobStatus.CANCELLED if trained.stop is Stop.CANCEL else JobStatus.SUCCEEDED
    try:
        recorded = _finish(
            settings,
            factory,
            job_id,
            token,
            status,
            progress=trained.progress,
            stop_reason=trained.stop_reason,
            model=model,
        )
    except Exception:
        # The row could not be written (the database's disk full, an outage): the files go,
        # unless the write committed after all; while that cannot be told they stay.
        with contextlib.suppress(Exception):
            if not jobs.finished_as(factory, job_id, token, status):
                delete_model_files(settings.store, model.file_stem)
        raise
    if not recorded:
        delete_model_files(settings.store, model.file_stem)
        return None
    log.info(
        "job %d: %s (%s), model %d%s",
        job_id,
        status,
        trained.stop_reason,
        model.id,
        f" (partial: {trained.partial_reason})" if trained.partial_reason else "",
    )
    return status


def _deadline(job: training.TrainingJob, settings: Settings) -> dict[str, Any]:
    """The run's wall-clock deadline, from now: the job's own time budget (its stop is
    "time_budget"), or the server's PGS_MAX_JOB_SECONDS ("time_limit")."""
    own = job.estimator.time_budget_s is not None
    limit = job.time_limit_s if job.time_limit_s is not None else settings.max_job_seconds
    return {
        "deadline": time.monotonic() + limit,
        "deadline_stop": Stop.TIME_BUDGET if own else Stop.TIME_LIMIT,
    }


def _stopped(
    job_id: int, token: int, settings: Settings, factory: SessionFactory, reporter: Reporter
) -> str | None:
    """The outcome of a run its reporter stopped with no model to keep; None when the run is no
    longer the job's."""
    stop = reporter.stop
    assert stop is not None
    if stop is Stop.SHUTDOWN:
        jobs.release(factory, job_id, token)
        log.info("job %d: interrupted by shutdown, back in the queue", job_id)
        return JobStatus.QUEUED
    if stop is Stop.CANCEL:
        # Before the fit began (a study's sigma selection): no iterate to keep.
        progress = reporter.progress()
        _finish(
            settings, factory, job_id, token, JobStatus.CANCELLED, progress=progress, stop_reason="cancelled"
        )
        log.info("job %d: cancelled at iteration %d", job_id, progress.iteration)
        return JobStatus.CANCELLED
    if stop in (Stop.TIME_BUDGET, Stop.TIME_LIMIT):
        limit = reporter.deadline_stop.value
        _finish(
            settings,
            factory,
            job_id,
            token,
            JobStatus.FAILED,
            progress=reporter.progress(),
            stop_reason=limit,
            error=f"the wall-clock limit ({limit}) ran out before the fit "
            "began (during the study's sigma selection)",
        )
        log.info("job %d: %s before the fit began", job_id, limit)
        return JobStatus.FAILED
    # Lost, or orphaned: another process settles the job (or already did).
    log.warning("job %d: run abandoned (%s)", job_id, stop.value)
    return None


def _finish(
    settings: Settings, factory: SessionFactory, job_id: int, token: int, status: str, **kwargs: Any
) -> bool:
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
    return Model(**{c.key: getattr(model, c.key) for c in Model.__table__.columns if c.key != "id"})
