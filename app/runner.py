"""The server side of training: a process pool behind a small supervisor.

The executor is a ``concurrent.futures.Executor``; only :meth:`JobRunner._new_executor` knows it is
a process pool, so a distributed engine with the same interface can replace it. Job state is in
the database: the runner only submits ids, and when a worker process dies (the pool breaks) it
settles the affected jobs (re-queue once, then fail) and starts a fresh pool.
"""

from __future__ import annotations

import functools
import logging
import multiprocessing
import queue
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from app.core.config import Settings
from app.services import jobs
from app.worker import init_worker, ping, run_job

log = logging.getLogger(__name__)

_STOP = object()
BROKEN_POOL_PAUSE_S = 0.5


class JobRunner:
    def __init__(self, settings: Settings, factory: sessionmaker[Session]) -> None:
        self.settings = settings
        self.factory = factory
        # spawn, not fork: the server has threads (uvicorn, the thread pool, this supervisor), and
        # forking a threaded process can deadlock; spawned workers also load Numba cleanly.
        self._ctx = multiprocessing.get_context("spawn")
        self._shutdown_event: Any = self._ctx.Event()
        self._lock = threading.Lock()
        self._executor: ProcessPoolExecutor | None = None
        self._futures: dict[int, Future[str]] = {}
        self._events: queue.Queue[Any] = queue.Queue()
        self._supervisor: threading.Thread | None = None
        self._warm: Future[int] | None = None
        self._breaks: dict[int, int] = {}
        self._closed = False

    # -- life cycle ----------------------------------------------------------------------------

    def start(self) -> None:
        self._executor = self._new_executor()
        self._supervisor = threading.Thread(target=self._supervise, name="job-supervisor",
                                            daemon=True)
        self._supervisor.start()
        if self.settings.prestart_workers:
            self._warm = self._executor.submit(ping)
        for job_id in jobs.recover_on_startup(self.factory, self.settings.max_attempts):
            self.submit(job_id)

    def shutdown(self) -> None:
        """Stop running jobs cooperatively (they go back to the queue) and stop the pool."""
        with self._lock:
            self._closed = True
            executor = self._executor
        self._shutdown_event.set()
        if executor is not None:
            # cancel_futures: queued work stays "queued" in the database for the next start.
            executor.shutdown(wait=True, cancel_futures=True)
        self._events.put(_STOP)
        if self._supervisor is not None:
            self._supervisor.join(timeout=10)
        # Drop the pool and the event: their semaphores are released when the objects go,
        # instead of being reported as leaked by multiprocessing's resource tracker at exit.
        with self._lock:
            self._executor = None
            self._warm = None
        self._shutdown_event = None

    def _new_executor(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            max_workers=self.settings.workers,
            mp_context=self._ctx,
            initializer=init_worker,
            initargs=(self.settings, self._shutdown_event),
        )

    # -- submitting ----------------------------------------------------------------------------

    def submit(self, job_id: int) -> None:
        with self._lock:
            if self._closed or self._executor is None:
                return  # stays queued in the database; the next start submits it
            try:
                future = self._executor.submit(run_job, job_id, self.settings)
            except BrokenProcessPool:
                self._executor = self._new_executor()
                future = self._executor.submit(run_job, job_id, self.settings)
                self._warm = None
            self._futures[job_id] = future
        future.add_done_callback(functools.partial(self._on_done, job_id))

    def _on_done(self, job_id: int, future: Future[str]) -> None:
        self._events.put((job_id, future))

    # -- supervision ---------------------------------------------------------------------------

    def _supervise(self) -> None:
        # Done-callbacks run on the executor's own thread; the work is done here instead.
        while True:
            item = self._events.get()
            if item is _STOP:
                return
            job_id, future = item
            try:
                self._settle(job_id, future)
            except Exception:
                log.exception("could not settle job %d", job_id)

    def _settle(self, job_id: int, future: Future[str]) -> None:
        with self._lock:
            if self._futures.get(job_id) is future:
                del self._futures[job_id]
        if future.cancelled():
            return
        exc = future.exception()
        if exc is None:
            return
        if isinstance(exc, BrokenProcessPool):
            with self._lock:
                if self._closed:
                    return
            why = "the worker process died"
            log.error("job %d: %s (%s)", job_id, why, exc)
            # Counted in memory too: a pool whose workers die before claiming anything (e.g. a
            # failing initializer) would otherwise resubmit the same queued job forever.
            self._breaks[job_id] = breaks = self._breaks.get(job_id, 0) + 1
            if breaks > self.settings.max_attempts:
                jobs.fail_unstarted(
                    self.factory, job_id,
                    f"{why} {breaks} times (worker processes crash or cannot start)",
                )
                self._replace_broken_pool()
                return
            if jobs.settle_crashed_worker(self.factory, job_id, self.settings.max_attempts, why):
                self._replace_broken_pool()
                self.submit(job_id)
            return
        # run_job writes its own failures; this is a failure around it (e.g. pickling).
        log.error("job %d: worker call failed: %r", job_id, exc)
        jobs.fail_unstarted(self.factory, job_id, f"{type(exc).__name__}: {exc}")

    def _replace_broken_pool(self) -> None:
        # A short pause, so a pool that cannot start does not spin the CPU.
        time.sleep(BROKEN_POOL_PAUSE_S)
        with self._lock:
            if self._closed or self._executor is None:
                return
            if not _is_broken(self._executor):
                return
            old, self._executor = self._executor, self._new_executor()
            if self.settings.prestart_workers:
                self._warm = self._executor.submit(ping)
        old.shutdown(wait=False, cancel_futures=True)

    # -- introspection -------------------------------------------------------------------------

    def ready(self) -> tuple[bool, str]:
        with self._lock:
            executor, closed = self._executor, self._closed
        if closed or executor is None:
            return False, "the worker pool is stopped"
        if _is_broken(executor):
            return False, "the worker pool is broken (a worker died); it is being replaced"
        warm = self._warm
        if warm is not None:
            if not warm.done():
                return False, "the worker processes are starting"
            if warm.exception() is not None:
                return False, f"a worker failed to start: {warm.exception()!r}"
        return True, "ok"

    def in_flight(self) -> int:
        with self._lock:
            return len(self._futures)


def _is_broken(executor: ProcessPoolExecutor) -> bool:
    # concurrent.futures exposes no public flag; _broken is set when a worker dies abruptly.
    return bool(getattr(executor, "_broken", False))
