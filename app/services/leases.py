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
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections.abc import Iterable
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from app.core.db import is_postgres, is_unavailable, transaction
from app.models import Job, JobStatus, utcnow
from app.services.jobs import Factory, _owned, _settle_lost_run, db_now

log = logging.getLogger(__name__)

LOST_WHY = "the job's worker stopped sending heartbeats (it died or hangs)"
BATCH = 200


def _older_than(s: Session, column: Any, seconds: float) -> Any:
    if is_postgres(s):
        return column < func.timezone("UTC", func.now()) - dt.timedelta(seconds=seconds)
    return column < utcnow() - dt.timedelta(seconds=seconds)


def heartbeat(factory: Factory, job_id: int, token: int) -> bool:
    """Refresh the run's lease; False when the run no longer owns the job."""
    with transaction(factory) as s:
        res = s.execute(update(Job).where(_owned(job_id, token)).values(heartbeat_at=db_now(s)))
        return bool(res.rowcount == 1)  # type: ignore[attr-defined]


def reap_lost(factory: Factory, lease_s: float, max_attempts: int) -> list[int]:
    """Settle running jobs whose lease expired; returns those re-queued (to be dispatched)."""
    with transaction(factory) as s:
        last_sign = func.coalesce(Job.heartbeat_at, Job.started_at)
        rows = s.scalars(
            select(Job)
            .where(Job.status == JobStatus.RUNNING, _older_than(s, last_sign, lease_s))
            .order_by(Job.id)
            .limit(BATCH)
            .with_for_update(skip_locked=True)
        ).all()
        requeued = []
        for job in rows:
            log.warning("job %d: lease expired (attempt %d)", job.id, job.attempts)
            if _settle_lost_run(s, job, max_attempts, LOST_WHY):
                requeued.append(job.id)
        return requeued


def claim_undispatched(factory: Factory, lease_s: float, held: Iterable[int]) -> list[int]:
    """Queued jobs that no live API process holds; marks them dispatched by the caller."""
    held = set(held)
    with transaction(factory) as s:
        last_dispatch = func.coalesce(Job.dispatched_at, Job.created_at)
        ids = [
            i for i in s.scalars(
                select(Job.id)
                .where(Job.status == JobStatus.QUEUED, Job.cancel_requested.is_(False),
                       _older_than(s, last_dispatch, lease_s))
                .order_by(Job.id)
                .limit(BATCH)
                .with_for_update(skip_locked=True)
            )
            if i not in held
        ]
        if ids:
            s.execute(update(Job).where(Job.id.in_(ids)).values(dispatched_at=db_now(s)))
        return ids


def refresh_dispatched(factory: Factory, job_ids: Iterable[int]) -> None:
    """This process still holds these jobs in its executor's queue."""
    ids = sorted(job_ids)
    for start in range(0, len(ids), BATCH):
        chunk = ids[start:start + BATCH]
        with transaction(factory) as s:
            s.execute(
                update(Job)
                .where(Job.id.in_(chunk), Job.status == JobStatus.QUEUED)
                .values(dispatched_at=db_now(s))
            )


class Heartbeat:
    """A daemon thread that refreshes a run's lease while the worker trains.

    A thread, not the solver's progress callback: a solver without progress callbacks, or the
    loading of a large data set, must not look like a dead worker. Database errors are logged
    and retried at the next beat (a short outage must not kill the run); a lost lease is left
    to the progress callback, which sees it at its next write and stops.
    """

    def __init__(self, factory: Factory, job_id: int, token: int, interval_s: float) -> None:
        self.factory, self.job_id, self.token, self.interval_s = factory, job_id, token, interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"heartbeat-{job_id}", daemon=True)
        self.owned = True

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=self.interval_s + 5)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.owned = heartbeat(self.factory, self.job_id, self.token)
            except Exception as exc:
                if not is_unavailable(exc):
                    log.exception("job %d: heartbeat failed", self.job_id)
                else:
                    log.warning("job %d: heartbeat: database unavailable", self.job_id)
                continue
            if not self.owned:
                return
