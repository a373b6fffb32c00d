"""Job ends, for the long polls that wait on them (GET /v1/jobs/{id}?wait=).

A waiting poll is an ``asyncio.Event`` on the event loop: it holds no thread of the pool and no
database connection while it waits. It is woken

* at once when this process learns that the job may have ended: its run's future came back
  (the worker wrote the job's end before it returned) or a queued job was cancelled here;
* within ``interval_s`` when the job ended out of this process's sight (another API process ran
  it, a sweep failed it): one query per pass reads the state of every watched job together, so
  the database sees the same load for one poll as for a thousand;
* within ``interval_s`` when the server begins to stop, so that no poll holds the shutdown.

A woken poll re-reads its job and waits again if it has not ended (a run can come back without
ending the job, e.g. when a pool breaks). At most ``per_owner`` polls of one owner wait at once:
one more is answered at once, with the job as it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import Counter
from collections.abc import Iterator

from sqlalchemy import select

from app.core.loop import LoopService
from app.core.server import SHUTTING_DOWN
from app.db.engine import SessionFactory
from app.db.tables import Job, JobStatus

# How often the jobs that polls wait on are read: how late a poll may learn of an end this
# process did not see, and of a shutdown.
RECHECK_S = 1.0
# SQLite caps the parameters of one statement.
CHUNK = 500


class JobEnds(LoopService):
    name = "job-ends"

    def __init__(self, factory: SessionFactory, interval_s: float, per_owner: int) -> None:
        super().__init__(interval_s)
        self.factory, self.per_owner = factory, per_owner
        self._lock = threading.Lock()
        self._waiters: dict[int, set[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = {}
        self._owners: Counter[str] = Counter()

    @contextlib.contextmanager
    def admitted(self, owner: str) -> Iterator[bool]:
        """Whether one more poll of ``owner`` may wait now; it counts as waiting in the block."""
        with self._lock:
            admitted = self._owners[owner] < self.per_owner
            if admitted:
                self._owners[owner] += 1
        try:
            yield admitted
        finally:
            if admitted:
                with self._lock:
                    self._owners[owner] -= 1
                    if not self._owners[owner]:
                        del self._owners[owner]

    async def wait(self, job_id: int, seconds: float) -> None:
        """Until the job may have ended (or the server stops), for at most ``seconds``."""
        waiter = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            self._waiters.setdefault(job_id, set()).add(waiter)
        try:
            if not SHUTTING_DOWN.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(waiter[1].wait(), seconds)
        finally:
            with self._lock:
                waiters = self._waiters[job_id]
                waiters.discard(waiter)
                if not waiters:
                    del self._waiters[job_id]

    def ended(self, job_id: int) -> None:
        """Wake the polls of ``job_id`` (from any thread): it may have ended."""
        with self._lock:
            waiters = list(self._waiters.get(job_id, ()))
        for loop, event in waiters:
            with contextlib.suppress(RuntimeError):  # the loop has closed: no one waits any more
                loop.call_soon_threadsafe(event.set)

    def run_once(self) -> None:
        with self._lock:
            watched = sorted(self._waiters)
        if SHUTTING_DOWN.is_set():
            ended = watched
        else:
            ended = []
            for start in range(0, len(watched), CHUNK):
                chunk = watched[start : start + CHUNK]
                with self.factory() as s:
                    ended += s.scalars(
                        select(Job.id).where(Job.id.in_(chunk), Job.status.in_(JobStatus.TERMINAL))
                    )
        for job_id in ended:
            self.ended(job_id)
