"""Leases: how API processes and workers that share one database agree on who holds which job.

* A running job's worker refreshes ``jobs.heartbeat_at`` every ``heartbeat_s`` (a thread,
  :class:`Heartbeat`, plus every progress write). Any API process's sweep settles a running job
  whose heartbeat is older than ``lease_s`` like a crashed worker's: re-queued once, then failed
  with the reason. This is what catches a Dask worker killed mid-job: the scheduler silently
  retries the task elsewhere, the retry finds the job running and skips, and the lease expires.
* An API process refreshes ``jobs.dispatched_at`` of the queued jobs it has handed to its
  executor. A queued job that nobody refreshed for ``lease_s`` (its API process died, and a Dask
  scheduler drops the queued work of a client that went away) is dispatched again by whichever
  API process sweeps first. Dispatching twice is harmless: only one claim succeeds.

The sweeps take rows with ``FOR UPDATE SKIP LOCKED`` on PostgreSQL, so API processes sweeping at
the same moment neither wait for nor settle the same row twice; SQLite serializes them anyway.
Times come from the database's clock on PostgreSQL (services.jobs.db_now).

The server's :class:`app.background.lease_sweeper.LeaseSweeper` runs the sweeps; a worker runs
its :class:`Heartbeat` while it trains.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterable
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from app.core.loop import LoopService
from app.db.engine import SessionFactory, is_postgres, transaction
from app.db.tables import Job, JobStatus, utcnow
from app.services.jobs.state import db_now, owned_by, settle_lost_run

log = logging.getLogger(__name__)

LOST_WHY = "the job's worker stopped sending heartbeats (it died or hangs)"
BATCH = 200


def older_than(s: Session, column: Any, seconds: float) -> Any:
    if is_postgres(s):
        return column < func.timezone("UTC", func.now()) - dt.timedelta(seconds=seconds)
    return column < utcnow() - dt.timedelta(seconds=seconds)


def heartbeat(factory: SessionFactory, job_id: int, token: int) -> bool:
    """Refresh the run's lease; False when the run no longer owns the job."""
    with transaction(factory) as s:
        res = s.execute(update(Job).where(owned_by(job_id, token)).values(heartbeat_at=db_now(s)))
        return bool(res.rowcount == 1)  # type: ignore[attr-defined]


def reap_lost(factory: SessionFactory, lease_s: float, max_attempts: int) -> list[int]:
    """Settle running jobs whose lease expired; returns those re-queued (to be dispatched)."""
    with transaction(factory) as s:
        last_sign = func.coalesce(Job.heartbeat_at, Job.started_at)
        rows = s.scalars(
            select(Job)
            .where(Job.status == JobStatus.RUNNING, older_than(s, last_sign, lease_s))
            .order_by(Job.id)
            .limit(BATCH)
            .with_for_update(skip_locked=True)
        ).all()
        requeued = []
        for job in rows:
            log.warning("job %d: lease expired (attempt %d)", job.id, job.attempts)
            if settle_lost_run(s, job, max_attempts, LOST_WHY):
                requeued.append(job.id)
        return requeued


def claim_undispatched(factory: SessionFactory, lease_s: float, held: Iterable[int]) -> list[int]:
    """Queued jobs that no live API process holds; marks them dispatched by the caller."""
    held = set(held)
    with transaction(factory) as s:
        last_dispatch = func.coalesce(Job.dispatched_at, Job.created_at)
        ids = [
            i
            for i in s.scalars(
                select(Job.id)
                .where(
                    Job.status == JobStatus.QUEUED,
                    Job.cancel_requested.is_(False),
                    older_than(s, last_dispatch, lease_s),
                )
                .order_by(Job.id)
                .limit(BATCH)
                .with_for_update(skip_locked=True)
            )
            if i not in held
        ]
        if ids:
            s.execute(update(Job).where(Job.id.in_(ids)).values(dispatched_at=db_now(s)))
        return ids


def refresh_dispatched(factory: SessionFactory, job_ids: Iterable[int]) -> None:
    """This process still holds these jobs in its executor's queue."""
    ids = sorted(job_ids)
    for start in range(0, len(ids), BATCH):
        chunk = ids[start : start + BATCH]
        with transaction(factory) as s:
            s.execute(
                update(Job)
                .where(Job.id.in_(chunk), Job.status == JobStatus.QUEUED)
                .values(dispatched_at=db_now(s))
            )


def recover_on_startup(
    factory: SessionFactory, max_attempts: int, *, sole_owner: bool, lease_s: float
) -> list[int]:
    """Settle jobs a previous server left behind; returns the queued job ids, oldest first.

    ``sole_owner`` (SQLite, the embedded deployment): one server process owns the database, so
    every job still ``running`` at start-up belongs to a worker that died with the previous
    server. Otherwise (PostgreSQL, several API processes) other processes' workers may be running
    jobs right now: only runs whose lease expired are settled.
    """
    if not sole_owner:
        reap_lost(factory, lease_s, max_attempts)
    with transaction(factory) as s:
        if sole_owner:
            for job in s.scalars(select(Job).where(Job.status == JobStatus.RUNNING)):
                settle_lost_run(s, job, max_attempts, "the server stopped while the job was running")
        ids = list(s.scalars(select(Job.id).where(Job.status == JobStatus.QUEUED).order_by(Job.id)))
        if ids:
            s.execute(update(Job).where(Job.id.in_(ids)).values(dispatched_at=db_now(s)))
        return ids


class Heartbeat(LoopService):
    """Refreshes a run's lease every ``interval_s`` while the worker trains (``with Heartbeat``).

    A thread, not the solver's progress callback: a solver without progress callbacks, or the
    loading of a large data set, must not look like a dead worker. Database errors are logged
    and retried at the next beat (a short outage must not kill the run); a lost lease is left
    to the progress callback, which sees it at its next write and stops.
    """

    def __init__(self, factory: SessionFactory, job_id: int, token: int, interval_s: float) -> None:
        super().__init__(interval_s)
        self.name = f"heartbeat-{job_id}"
        self.factory, self.job_id, self.token = factory, job_id, token
        self.owned = True

    def run_once(self) -> None:
        if self.owned:  # once lost, the run never owns the job again
            self.owned = heartbeat(self.factory, self.job_id, self.token)
