"""The server side of training: an executor backend behind a small supervisor.

The executor is a ``concurrent.futures.Executor`` from a backend (app/executors.py): a local
process pool or a Dask cluster. Job state is in the database: the runner only submits ids.

The supervisor thread settles failed futures and, every ``sweep_interval_s``, sweeps the
database (services/leases.py): it refreshes the dispatch mark of the jobs it holds, settles
running jobs whose worker stopped sending heartbeats, and dispatches queued jobs that no live
API process holds. That sweep is what makes several API processes and a Dask cluster safe:
nothing depends on the process that accepted a job staying alive.

When a local worker process dies (the pool breaks) the runner settles the affected jobs at once
(re-queue once, then fail) and starts a fresh pool.
"""

from __future__ import annotations

import functools
import logging
import multiprocessing
import queue
import threading
import time
from concurrent.futures import Executor, Future
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from app.core.config import Settings
from app.core.db import is_unavailable
from app.executors import Backend, is_lost_dispatch, make_backend
from app.services import jobs, leases
from app.worker import ping, run_job

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
        self._backend: Backend | None = None
        self._executor: Executor | None = None
        self._futures: dict[int, Future[str]] = {}
        self._events: queue.Queue[Any] = queue.Queue()
        self._supervisor: threading.Thread | None = None
        self._warm: Future[int] | None = None
        self._breaks: dict[int, int] = {}
        self._closed = False
        self._next_sweep = 0.0

    # -- life cycle ----------------------------------------------------------------------------

    def start(self) -> None:
        self._backend = make_backend(self.settings, self._ctx, self._shutdown_event)
        self._executor = self._backend.new_executor()
        self._supervisor = threading.Thread(target=self._supervise, name="job-supervisor",
                                            daemon=True)
        self._supervisor.start()
        if self.settings.prestart_workers:
            self._warm = self._executor.submit(ping)
        recovered = jobs.recover_on_startup(
            self.factory, self.settings.max_attempts,
            sole_owner=self.settings.is_sqlite, lease_s=self.settings.lease_s,
        )
        for job_id in recovered:
            self.submit(job_id)
        self._next_sweep = time.monotonic() + self.settings.sweep_interval_s

    def shutdown(self) -> None:
        """Stop without losing work (see the backend's ``stop``) and stop the supervisor."""
        with self._lock:
            self._closed = True
            executor, backend = self._executor, self._backend
        self._shutdown_event.set()
        if executor is not None and backend is not None:
            backend.stop(executor)
        self._events.put(_STOP)
        if self._supervisor is not None:
            self._supervisor.join(timeout=10)
        # Drop the pool and the event: their semaphores are released when the objects go,
        # instead of being reported as leaked by multiprocessing's resource tracker at exit.
        with self._lock:
            self._executor = None
            self._warm = None
        self._shutdown_event = None

    @property
    def backend_name(self) -> str:
        return self._backend.name if self._backend is not None else "none"

    # -- submitting ----------------------------------------------------------------------------

    def submit(self, job_id: int) -> None:
        with self._lock:
            if self._closed or self._executor is None or self._backend is None:
                return  # stays queued in the database; the next start or sweep dispatches it
            current = self._futures.get(job_id)
            if current is not None and not current.done():
                return  # already held by this process
            try:
                future = self._executor.submit(run_job, job_id, self.settings)
            except BrokenProcessPool:
                self._executor = self._backend.new_executor()
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
            timeout = max(0.0, self._next_sweep - time.monotonic())
            try:
                item = self._events.get(timeout=timeout)
            except queue.Empty:
                item = None
            if item is _STOP:
                return
            if item is not None:
                job_id, future = item
                try:
                    self._settle(job_id, future)
                except Exception as exc:
                    self._log_failure(f"could not settle job {job_id}", exc)
            if time.monotonic() >= self._next_sweep:
                self._next_sweep = time.monotonic() + self.settings.sweep_interval_s
                try:
                    self.sweep()
                except Exception as exc:
                    self._log_failure("sweep failed", exc)

    @staticmethod
    def _log_failure(what: str, exc: Exception) -> None:
        if is_unavailable(exc):
            log.warning("%s: database unavailable (%s)", what, type(exc).__name__)
        else:
            log.error("%s", what, exc_info=exc)

    def sweep(self) -> None:
        """Refresh what this process holds; dispatch lost and undispatched jobs."""
        with self._lock:
            if self._closed:
                return
            held = [j for j, f in self._futures.items() if not f.done()]
        if held:
            leases.refresh_dispatched(self.factory, held)
        s = self.settings
        for job_id in leases.reap_lost(self.factory, s.lease_s, s.max_attempts):
            self.submit(job_id)
        for job_id in leases.claim_undispatched(self.factory, s.lease_s, held):
            # Its API process died (or its executor lost it): worth a line at the default level.
            log.warning("job %d: dispatching again (no live API process held it)", job_id)
            self.submit(job_id)

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
        if is_unavailable(exc) or is_lost_dispatch(exc):
            # The job is still in the database (queued, or running with a lease); the sweep
            # dispatches it again once its dispatch mark or lease runs out.
            log.warning("job %d: dispatch lost (%s: %s); the sweep will retry", job_id,
                        type(exc).__name__, exc)
            return
        if type(exc).__name__ == "KilledWorker":
            # Dask gave up: the task's workers died allowed-failures times in a row.
            why = f"Dask workers died while running it ({exc})"
            if jobs.settle_crashed_worker(self.factory, job_id, self.settings.max_attempts, why):
                self.submit(job_id)
            return
        # run_job writes its own failures; this is a failure around it (e.g. pickling).
        log.error("job %d: worker call failed: %r", job_id, exc)
        jobs.fail_unstarted(self.factory, job_id, f"{type(exc).__name__}: {exc}")

    def _replace_broken_pool(self) -> None:
        # A short pause, so a pool that cannot start does not spin the CPU.
        time.sleep(BROKEN_POOL_PAUSE_S)
        with self._lock:
            if self._closed or self._executor is None or self._backend is None:
                return
            if not self._backend.is_broken(self._executor):
                return
            old, self._executor = self._executor, self._backend.new_executor()
            if self.settings.prestart_workers:
                self._warm = self._executor.submit(ping)
        old.shutdown(wait=False, cancel_futures=True)

    # -- introspection -------------------------------------------------------------------------

    def ready(self) -> tuple[bool, str]:
        with self._lock:
            executor, closed, backend = self._executor, self._closed, self._backend
        if closed or executor is None or backend is None:
            return False, "the worker pool is stopped"
        if backend.is_broken(executor):
            return False, "the worker pool is broken (a worker died); it is being replaced"
        ok, why = backend.ready()
        if not ok:
            return False, why
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

    def worker_count(self) -> int:
        backend = self._backend
        return backend.worker_count() if backend is not None else 0
