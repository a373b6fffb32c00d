"""The server side of training: hand job ids to an executor and keep their futures.

The executor is a ``concurrent.futures.Executor`` from a backend (app/training/executors.py): a local
process pool or a Dask cluster. Job state is in the database: the runner only submits ids to
:func:`app.training.worker.run_job`. What happens around it are background services started by the
lifespan (app/background/): the pool supervisor settles the futures that end in an error (a
worker that died mid-job), the lease sweeper finds jobs no live process holds and submits them
here. A local pool replaces a dead worker by itself (app/training/pool.py).

Jobs wait in the database, not in the executor: the runner keeps the queued jobs it is to run
(``submit``) and hands one to the executor only when a worker is free (``dispatch``), in the
order app/services/jobs/queue_order.py gives (owners take turns). An executor's own queue is
first in, first out: one owner's hundred queued jobs would make everyone else's wait for them.
"""

from __future__ import annotations

import functools
import multiprocessing
import queue
import threading
from collections.abc import Callable, Collection
from concurrent.futures import Executor, Future
from typing import Any

from app.core.config import Settings
from app.training.executors import Backend, make_backend
from app.training.pool import WorkerDied
from app.training.worker import ping, run_job


class JobRunner:
    def __init__(self, settings: Settings, order: Callable[[Collection[int]], list[int]]) -> None:
        """``order`` gives the jobs of a set that are still queued, in the order they are to start
        (dropping the others: cancelled, or started by another process)."""
        self.settings = settings
        self._order = order
        # spawn, not fork: the server has threads (uvicorn, the thread pool, the background
        # services), and forking a threaded process can deadlock; spawned workers also load
        # Numba cleanly.
        self._ctx = multiprocessing.get_context("spawn")
        self._shutdown_event: Any = self._ctx.Event()
        self._lock = threading.Lock()
        self._backend: Backend | None = None
        self._executor: Executor | None = None
        self._futures: dict[int, Future[str]] = {}
        # Jobs to run that wait for a free worker (in the database, they are queued).
        self._pending: set[int] = set()
        # One dispatch at a time: two would hand the same free worker a job each.
        self._dispatching = threading.Lock()
        self._finished: queue.SimpleQueue[tuple[int, Future[str]]] = queue.SimpleQueue()
        self._finished_listeners: list[Callable[[int], None]] = []
        self._pending_listeners: list[Callable[[], None]] = []
        self._warm: Future[int] | None = None
        self.closed = False

    # -- life cycle ----------------------------------------------------------------------------

    def start(self) -> None:
        self._backend = make_backend(self.settings, self._ctx, self._shutdown_event)
        self._executor = self._backend.new_executor()
        if self.settings.prestart_workers:
            self._warm = self._executor.submit(ping)

    def stop(self) -> None:
        """Stop without losing work: running jobs go back to the queue (or, on Dask, finish on
        their workers), queued ones stay queued in the database (see the backend's ``stop``)."""
        with self._lock:
            self.closed = True
            executor, backend = self._executor, self._backend
            self._pending.clear()  # they stay queued in the database
        self._shutdown_event.set()
        if executor is not None and backend is not None:
            backend.stop(executor)
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
        """Run job ``job_id`` (queued in the database) when a worker is free and its turn comes."""
        with self._lock:
            if self.closed or self._executor is None or self._backend is None:
                return  # stays queued in the database; the next start or sweep dispatches it
            current = self._futures.get(job_id)
            if current is not None and not current.done():
                return  # already held by this process
            self._pending.add(job_id)
        for listener in self._pending_listeners:
            listener()

    def dispatch(self) -> None:
        """Hand waiting jobs to the free workers, in the queue's order (it reads the database)."""
        with self._dispatching:
            with self._lock:
                free = max(1, self.worker_count()) - sum(not f.done() for f in self._futures.values())
                if self.closed or free <= 0 or not self._pending:
                    return
                asked = set(self._pending)
            order = self._order(asked)
            with self._lock:
                # What is no longer queued leaves; what was submitted meanwhile stays.
                self._pending -= asked - set(order)
                for job_id in order[:free]:
                    if job_id in self._pending and not self.closed:
                        self._pending.discard(job_id)
                        self._hand(job_id)

    def _hand(self, job_id: int) -> None:
        """Give the executor job ``job_id`` (under the lock)."""
        assert self._executor is not None
        future = self._executor.submit(run_job, job_id, self.settings)
        self._futures[job_id] = future
        future.add_done_callback(functools.partial(self._done, job_id))

    def future_of(self, job_id: int) -> Future[str] | None:
        """The future of job ``job_id`` if this process handed it to its executor."""
        with self._lock:
            return self._futures.get(job_id)

    def held(self) -> list[int]:
        """The jobs this process is to run or has handed to its executor, not yet ended."""
        with self._lock:
            return [j for j, f in self._futures.items() if not f.done()] + sorted(self._pending)

    # -- finished futures (settled by app/background/pool_supervisor.py) ------------------------

    def on_finished(self, listener: Callable[[int], None]) -> None:
        """Call ``listener(job_id)`` whenever a job's future ends (it must return at once: it
        runs on the executor's own thread)."""
        self._finished_listeners.append(listener)

    def on_pending(self, listener: Callable[[], None]) -> None:
        """Call ``listener()`` whenever a job is submitted, to dispatch it (it must return at once)."""
        self._pending_listeners.append(listener)

    def _done(self, job_id: int, future: Future[str]) -> None:
        self._finished.put((job_id, future))
        for listener in self._finished_listeners:
            listener(job_id)

    def take_finished(self) -> list[tuple[int, Future[str]]]:
        """The futures that ended since the last call, oldest first."""
        taken: list[tuple[int, Future[str]]] = []
        while True:
            try:
                job_id, future = self._finished.get_nowait()
            except queue.Empty:
                return taken
            with self._lock:
                if self._futures.get(job_id) is future:
                    del self._futures[job_id]
            taken.append((job_id, future))

    # -- introspection -------------------------------------------------------------------------

    def ready(self) -> tuple[bool, str]:
        with self._lock:
            executor, closed, backend = self._executor, self.closed, self._backend
        if closed or executor is None or backend is None:
            return False, "the worker pool is stopped"
        ok, why = backend.ready()
        if not ok:
            return False, why
        warm = self._warm
        if warm is not None:
            if not warm.done():
                return False, "the worker processes are starting"
            # A local worker that died with the ping is replaced, and the pool reports a
            # replacement that cannot start (backend.ready above).
            if warm.exception() is not None and not isinstance(warm.exception(), WorkerDied):
                return False, f"a worker failed to start: {warm.exception()!r}"
        return True, "ok"

    def waiting_reason(self, job_id: int) -> str:
        """Why queued job ``job_id`` has not started yet, as its reader sees it (GET /v1/jobs/{id}).

        Read from this job's own place: handed to the executor (its worker is starting it), or
        waiting for a worker while others run. Only the jobs that run count as holding a worker:
        neither the waiting job itself nor a future that ended and is not yet settled."""
        ok, why = self.ready()
        if not ok:
            return f"waiting for the workers: {why}"
        with self._lock:
            own = self._futures.get(job_id)
            running = sum(not f.done() for j, f in self._futures.items() if j != job_id)
            waiting = job_id in self._pending
        if own is not None and not own.done():
            return "handed to a worker, starting"
        workers = self.worker_count()
        if waiting and workers and running >= workers:
            return f"waiting for a free worker: {running} job(s) hold the {workers} worker(s)"
        if waiting:
            return "waiting for its turn in the queue"
        return "queued, not yet taken by a worker process"

    def in_flight(self) -> int:
        with self._lock:
            return len(self._futures)

    def worker_count(self) -> int:
        backend = self._backend
        return backend.worker_count() if backend is not None else 0
