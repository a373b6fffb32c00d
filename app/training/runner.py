"""The server side of training: hand job ids to an executor and keep their futures.

Jobs wait in the database, not in the executor: the runner keeps the queued jobs it is to run
(``submit``) and hands one to the executor only when a worker is free (``dispatch``), in the
order app/services/jobs/queue_order.py gives (owners take turns). An executor's own queue is
first in, first out: one owner's hundred queued jobs would make everyone else's wait for them.

The executor is a ``concurrent.futures.Executor`` from a backend (app/training/executors.py): a local
process pool or a Dask cluster. Job state is in the database: the runner only submits ids to
:func:`app.training.worker.run_job`. What happens around it are background services started by the
lifespan (app/background/): the pool supervisor settles the futures that end in an error and
replaces a broken pool, the lease sweeper finds jobs no live process holds and submits them here.
"""

from __future__ import annotations

import functools
import multiprocessing
import queue
import signal
import threading
import time
import weakref
from collections.abc import Callable, Collection
from concurrent.futures import Executor, Future
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from app.core.config import Settings
from app.training.executors import Backend, make_backend
from app.training.worker import ping, run_job

# After a broken pool: a short pause, so a pool that cannot start does not spin the CPU.
BROKEN_POOL_PAUSE_S = 0.5
# How long to wait for a bystander worker of a broken pool to stop after SIGTERM.
BROKEN_POOL_EXIT_S = 10.0


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
        # Every local worker process by pid, with the generation of the pool it belongs to: a
        # broken pool tells which of its workers died on its own (services: the supervisor).
        self._generation = 0
        self._workers: dict[int, tuple[int, Any]] = {}
        # The pool generation of each future, and the generations whose workers were seen
        # working (a warm-up ping or a job came back): a job that only waited in such a pool
        # when it broke is a bystander, not the cause (pool_was_ready).
        self._future_generation: weakref.WeakKeyDictionary[Future[Any], int] = weakref.WeakKeyDictionary()
        self._ready_generations: set[int] = set()
        self.closed = False

    # -- life cycle ----------------------------------------------------------------------------

    def start(self) -> None:
        self._backend = make_backend(self.settings, self._ctx, self._shutdown_event)
        self._executor = self._backend.new_executor()
        if self.settings.prestart_workers:
            self._warm = self._track(self._executor.submit(ping))
            self._note_workers()

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
        try:
            future = self._executor.submit(run_job, job_id, self.settings)
        except BrokenProcessPool:
            self._new_executor()
            future = self._executor.submit(run_job, job_id, self.settings)
            self._warm = None
        self._track(future)
        self._note_workers()
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

    def replace_broken_pool(self) -> None:
        """A fresh executor if the current one broke (a local worker process died)."""
        with self._lock:
            if self._executor is None or self._backend is None:
                return
            if not self._backend.is_broken(self._executor):
                return
        time.sleep(BROKEN_POOL_PAUSE_S)
        with self._lock:
            if self.closed or self._executor is None or self._backend is None:
                return
            if not self._backend.is_broken(self._executor):
                return
            old = self._executor
            self._new_executor()
            if self.settings.prestart_workers:
                self._warm = self._track(self._executor.submit(ping))
                self._note_workers()
        old.shutdown(wait=False, cancel_futures=True)

    def _track(self, future: Future[Any]) -> Future[Any]:
        """Note the generation of a future of the current pool (under the lock)."""
        generation = self._generation
        self._future_generation[future] = generation

        def came_back(f: Future[Any]) -> None:
            if not f.cancelled() and f.exception() is None:
                self._ready_generations.add(generation)

        future.add_done_callback(came_back)
        return future

    def pool_was_ready(self, future: Future[Any]) -> bool:
        """Whether the pool that ran ``future`` had working workers (one answered its warm-up
        ping or finished a job): then a broken pool is a worker's death, not a pool that cannot
        start, and a job that was only waiting in it is not to blame."""
        generation = self._future_generation.get(future)
        return generation is not None and generation in self._ready_generations

    def _new_executor(self) -> None:
        """A fresh executor (under the lock); workers of pools older than the last are forgotten."""
        assert self._backend is not None
        self._executor = self._backend.new_executor()
        self._generation += 1
        self._workers = {pid: w for pid, w in self._workers.items() if w[0] >= self._generation - 1}

    def _note_workers(self) -> None:
        """Remember the current pool's processes (under the lock; spawned on submit)."""
        # concurrent.futures keeps them in a private dict (pid -> Process); Dask has none.
        processes = getattr(self._executor, "_processes", None) or {}
        for pid, process in processes.items():
            self._workers.setdefault(pid, (self._generation, process))

    def died_on_its_own(self, pid: int) -> bool:
        """Whether the local worker ``pid`` of a broken pool died by itself (killed, crashed),
        rather than being a bystander of another worker's death: a pool whose worker dies fails
        the futures of all its workers. A bystander is stopped here (if the pool has not stopped
        it yet) before this returns False, so its job can be run again without two runs.

        The culprit is a worker that already ended with an exit status other than SIGTERM (the
        pool stops the others with SIGTERM). Unknown pids (another backend) count as dead by
        themselves, as does every worker of a pool with no such culprit.
        """
        with self._lock:
            worker = self._workers.get(pid)
            pool = [p for g, p in self._workers.values() if worker is not None and g == worker[0]]
        if worker is None:
            return True
        process = worker[1]
        if process.exitcode not in (None, -signal.SIGTERM):
            return True
        if not any(p.exitcode not in (None, -signal.SIGTERM) for p in pool):
            return True
        process.terminate()
        process.join(BROKEN_POOL_EXIT_S)
        if process.is_alive():
            process.kill()
            process.join(BROKEN_POOL_EXIT_S)
        return False

    # -- introspection -------------------------------------------------------------------------

    def ready(self) -> tuple[bool, str]:
        with self._lock:
            executor, closed, backend = self._executor, self.closed, self._backend
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

    def waiting_reason(self) -> str:
        """Why a queued job has not started yet, as its reader sees it (GET /v1/jobs/{id})."""
        ok, why = self.ready()
        if not ok:
            return f"waiting for the workers: {why}"
        busy, workers = self.in_flight(), self.worker_count()
        if workers and busy >= workers:
            return f"waiting for a free worker: {busy} job(s) held by {workers} worker(s)"
        return "handed to a worker, starting"

    def in_flight(self) -> int:
        with self._lock:
            return len(self._futures)

    def worker_count(self) -> int:
        backend = self._backend
        return backend.worker_count() if backend is not None else 0
