"""Job state transitions, shared by the API, the server's background services and the workers.

queued -> running -> succeeded | failed | cancelled. Every write a worker makes is conditional on
:func:`owned_by`: ``(id, attempts == token, status == running)``. ``attempts`` is the fencing token
of one run, so a run that lost its claim (its server restarted and re-queued the job) can no
longer write. Leases (who holds a running or queued job) build on these in services/jobs/leases.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from app.db.engine import SessionFactory, is_postgres, transaction
from app.db.tables import Job, JobStatus, Model, TracePoint, utcnow
from app.services.model_registry.versions import next_version


def owned_by(job_id: int, token: int) -> Any:
    """The condition of every write of run ``token``: the job is still running that run."""
    return (Job.id == job_id) & (Job.attempts == token) & (Job.status == JobStatus.RUNNING)


def claim(factory: SessionFactory, job_id: int, pid: int) -> int | None:
    """queued -> running; returns the run's fencing token, or None if the job is not queued.

    The conditional update alone is safe under concurrency (PostgreSQL re-checks the WHERE of a
    row it waited for); on PostgreSQL the row is first taken with ``FOR UPDATE SKIP LOCKED`` so
    that a duplicate dispatch of the same job returns at once instead of queueing on the lock.
    """
    queued = (Job.id == job_id, Job.status == JobStatus.QUEUED, Job.cancel_requested.is_(False))
    with transaction(factory) as s:
        if is_postgres(s):
            free = s.scalar(select(Job.id).where(*queued).with_for_update(skip_locked=True))
            if free is None:
                return None
        res = s.execute(
            update(Job)
            .where(*queued)
            .values(
                status=JobStatus.RUNNING,
                attempts=Job.attempts + 1,
                worker_pid=pid,
                started_at=utcnow(),
                finished_at=None,
                iteration=None,
                n_iter=None,
                samples_seen=None,
                metrics=None,
                stop_reason=None,
                error=None,
                heartbeat_at=db_now(s),
            )
        )
        if res.rowcount != 1:  # type: ignore[attr-defined]
            return None
        # A previous, interrupted run may have left checkpoints behind.
        s.execute(delete(TracePoint).where(TracePoint.job_id == job_id))
        return s.scalar(select(Job.attempts).where(Job.id == job_id))


@dataclass
class Progress:
    iteration: int
    n_iter: int | None
    samples_seen: int
    metrics: dict[str, Any]
    # New trace points (each with its "seq"), and the seqs of points written before that the
    # trace's thinning dropped since (app/services/jobs/trace_thinning.py).
    points: Sequence[dict[str, Any]]
    dropped: Sequence[int] = ()


def _write_points(s: Session, job_id: int, p: Progress) -> None:
    for start in range(0, len(p.dropped), 500):  # SQLite caps the parameters of a statement
        s.execute(
            delete(TracePoint).where(
                TracePoint.job_id == job_id, TracePoint.seq.in_(p.dropped[start : start + 500])
            )
        )
    s.add_all(TracePoint(job_id=job_id, **pt) for pt in p.points)


def record_progress(factory: SessionFactory, job_id: int, token: int, p: Progress) -> tuple[bool, bool]:
    """Write progress and new trace points; returns (still owned, cancel requested)."""
    with transaction(factory) as s:
        res = s.execute(
            update(Job)
            .where(owned_by(job_id, token))
            .values(
                iteration=p.iteration,
                n_iter=p.n_iter,
                samples_seen=p.samples_seen,
                metrics=p.metrics,
                heartbeat_at=db_now(s),
            )
        )
        if res.rowcount != 1:  # type: ignore[attr-defined]
            return False, False
        _write_points(s, job_id, p)
        cancel = bool(s.scalar(select(Job.cancel_requested).where(Job.id == job_id)))
        return True, cancel


def finish(
    factory: SessionFactory,
    job_id: int,
    token: int,
    status: str,
    *,
    progress: Progress | None = None,
    stop_reason: str | None = None,
    error: str | None = None,
    model: Model | None = None,
) -> bool:
    """running -> a terminal status (with the model row when it succeeded); False if not owned."""
    with transaction(factory) as s:
        values: dict[str, Any] = {
            "status": status,
            "finished_at": utcnow(),
            "stop_reason": stop_reason,
            "error": error,
        }
        if progress is not None:
            values.update(
                iteration=progress.iteration,
                n_iter=progress.n_iter,
                samples_seen=progress.samples_seen,
                metrics=progress.metrics,
            )
        res = s.execute(update(Job).where(owned_by(job_id, token)).values(**values))
        if res.rowcount != 1:  # type: ignore[attr-defined]
            return False
        if progress is not None:
            _write_points(s, job_id, progress)
        if model is not None:
            model_name, owner = s.execute(select(Job.model_name, Job.owner).where(Job.id == job_id)).one()
            model.owner = owner  # a job's model is its owner's
            if model_name is not None:
                model.name, model.version = model_name, next_version(s, owner, model_name)
            s.add(model)
            s.flush()
            s.execute(update(Job).where(Job.id == job_id).values(model_id=model.id))
        return True


def status_of(factory: SessionFactory, job_id: int) -> str:
    """The job's status now: what a run that does not (or no longer) own the job reports."""
    with factory() as s:
        status = s.scalar(select(Job.status).where(Job.id == job_id))
        assert status is not None, f"job {job_id} does not exist"  # jobs are never deleted
        return status


def finished_as(factory: SessionFactory, job_id: int, token: int, status: str) -> bool:
    """Whether this run (``token``) already put the job in ``status`` (a retried final write)."""
    with factory() as s:
        row = s.execute(select(Job.status, Job.attempts).where(Job.id == job_id)).first()
        return row is not None and row[0] == status and row[1] == token


def release(factory: SessionFactory, job_id: int, token: int) -> bool:
    """running -> queued, not counted as a try: a graceful shutdown interrupted the run, or the
    pool stopped its worker because another worker died."""
    with transaction(factory) as s:
        res = s.execute(
            update(Job)
            .where(owned_by(job_id, token))
            .values(
                status=JobStatus.QUEUED,
                attempts=Job.attempts - 1,
                started_at=None,
                worker_pid=None,
                iteration=None,
                n_iter=None,
                samples_seen=None,
                metrics=None,
            )
        )
        if res.rowcount != 1:  # type: ignore[attr-defined]
            return False
        s.execute(delete(TracePoint).where(TracePoint.job_id == job_id))
        return True


def settle_lost_run(s: Session, job: Job, max_attempts: int, why: str) -> bool:
    """A running job whose worker is gone: re-queue it or fail it. True if it must be submitted."""
    now = utcnow()
    if job.cancel_requested:
        job.status, job.finished_at, job.stop_reason = JobStatus.CANCELLED, now, "cancelled"
        return False
    if job.attempts >= max_attempts:
        job.status, job.finished_at = JobStatus.FAILED, now
        job.error = f"{why}; gave up after {job.attempts} attempt(s)"
        return False
    job.status, job.started_at, job.worker_pid = JobStatus.QUEUED, None, None
    job.heartbeat_at, job.dispatched_at = None, db_now(s)  # the settling process dispatches it
    job.iteration = job.n_iter = job.samples_seen = None
    job.metrics = None
    job.error = f"{why}; re-queued (attempt {job.attempts} of {max_attempts} was lost)"
    s.execute(delete(TracePoint).where(TracePoint.job_id == job.id))
    return True


def settle_crashed_worker(factory: SessionFactory, job_id: int, max_attempts: int, why: str) -> bool:
    """The job's future failed without the worker settling it; True if it must be resubmitted."""
    with transaction(factory) as s:
        job = s.get(Job, job_id)
        if job is None:
            return False
        if job.status == JobStatus.QUEUED:
            return True  # never started: the pool broke before it got there
        if job.status != JobStatus.RUNNING:
            return False
        return settle_lost_run(s, job, max_attempts, why)


def running_run(factory: SessionFactory, job_id: int) -> tuple[int, int] | None:
    """The running job's (token, worker pid), or None if it is not running."""
    with factory() as s:
        row = s.execute(
            select(Job.attempts, Job.worker_pid).where(Job.id == job_id, Job.status == JobStatus.RUNNING)
        ).first()
        return None if row is None or row[1] is None else (int(row[0]), int(row[1]))


def fail_unstarted(factory: SessionFactory, job_id: int, error: str) -> None:
    with transaction(factory) as s:
        s.execute(
            update(Job)
            .where(Job.id == job_id, Job.status.in_(JobStatus.ACTIVE))
            .values(status=JobStatus.FAILED, finished_at=utcnow(), error=error)
        )


def request_cancel(s: Session, job: Job) -> None:
    """A queued job is cancelled at once; a running one is flagged and its worker stops it."""
    if job.status == JobStatus.QUEUED:
        job.status, job.finished_at, job.stop_reason = JobStatus.CANCELLED, utcnow(), "cancelled"
    job.cancel_requested = True


def db_now(s: Session) -> Any:
    """Now, in naive UTC, from the database's clock on PostgreSQL (hosts' clocks may differ;
    leases compare times written by different hosts) and from this host's for SQLite."""
    if is_postgres(s):
        return func.timezone("UTC", func.now())
    return utcnow()


def trace_points(s: Session, job_id: int) -> list[TracePoint]:
    """The job's checkpoints, in order."""
    return list(s.scalars(select(TracePoint).where(TracePoint.job_id == job_id).order_by(TracePoint.seq)))


def count_by_status(s: Session) -> dict[str, int]:
    rows = s.execute(select(Job.status, func.count()).group_by(Job.status)).all()
    counts = dict.fromkeys(JobStatus.ALL, 0)
    counts.update({status: int(n) for status, n in rows})
    return counts
