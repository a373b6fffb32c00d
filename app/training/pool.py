"""The local worker pool: long-lived worker processes, each with a channel of its own.

Why not ``concurrent.futures.ProcessPoolExecutor``: when one of its workers dies, that executor
is broken as a whole. It fails the future of every task and stops every other worker, so one
job killed by the OOM killer threw away the work of every other running job. Here each worker
has its own duplex pipe (tasks in, results out), and one dispatcher thread watches the pipes and
the processes. A worker's death fails only the future of the task it held (:class:`WorkerDied`),
a new worker takes its place, and the other workers never notice.

The pool is a ``concurrent.futures.Executor``: the runner (app/training/runner.py) submits tasks
and reads futures as it does with a Dask executor. Workers start on demand, up to
``max_workers``, and stay; a worker that fails to start is retried with a growing pause, and
:meth:`WorkerPool.problem` says why while no worker is ready.

How the workers end. Every worker is started by the dispatcher thread, which lives as long as
the pool:

* The pool stops (:meth:`shutdown`): an idle worker's channel is closed, and a worker that reads
  EOF exits. A busy worker first finishes its task (the runner's shutdown event makes a job
  give itself back to the queue at its next progress check). One still busy ``STOP_GRACE_S``
  later (a long data load, a kernel compiling) is killed, and its future fails with
  ``WorkerDied(stopped=True)``: the job goes back to the queue without losing an attempt.
* The API process dies (SIGKILL, a crash): the kernel kills every worker with it
  (``PR_SET_PDEATHSIG``, app/core/orphans.py). An idle worker would also read EOF, but a busy one
  does not read its channel, and a thread watching it would wait for the GIL behind a solver
  kernel; the kernel's signal waits for nothing. The job stays ``running`` in the database and
  start-up recovery (SQLite) or its expired lease (PostgreSQL) re-queues it.
* The API process exits without stopping the pool (a second Ctrl+C skips the app's shutdown):
  multiprocessing joins its children at exit, so the workers are killed first
  (:func:`_kill_at_exit`), or that join would wait for them forever.

Workers ignore SIGTERM and SIGINT: a signal to the whole process group (Ctrl+C, ``docker stop``
of an init-less container, systemd's default control-group stop) is for the API, which returns
the running jobs to the queue before it ends the workers. The multiprocessing resource tracker
exits by itself when its last client is gone: it holds no process open, the workers hold its
pipe open (a spawned child inherits it), and it reads EOF once they are gone.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle  # only for the pipe to the workers this module spawns (see the module doc)
import signal
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from multiprocessing import connection, util
from multiprocessing.connection import Connection
from typing import Any

from app.core.orphans import die_with_parent

log = logging.getLogger(__name__)

# How long a graceful stop waits for busy workers before it kills them.
STOP_GRACE_S = 5.0
# Pauses before another start after a worker failed to start: first, and at most.
START_RETRY_S = 0.5
START_RETRY_MAX_S = 30.0


class WorkerDied(Exception):
    """The worker process running the task ended before it answered."""

    def __init__(self, pid: int, exitcode: int | None, *, stopped: bool = False) -> None:
        self.pid, self.exitcode, self.stopped = pid, exitcode, stopped
        if stopped:
            how = "was stopped with the pool (its task outlasted the graceful stop)"
        elif exitcode is not None and exitcode < 0:
            how = f"was killed by {signal.Signals(-exitcode).name}"
        else:
            how = f"exited with status {exitcode}"
        super().__init__(f"the worker process {pid} {how}")


@dataclass(eq=False)
class _Task:
    future: Future[Any]
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


@dataclass(eq=False)
class _Worker:
    process: Any  # multiprocessing's SpawnProcess
    pid: int
    conn: Connection
    ready: bool = False  # its initializer ran: it takes tasks
    task: _Task | None = None
    eof: bool = False  # its channel is closed (by the pool, or by its death)
    killed: bool = False  # killed by the pool's stop
    start_error: str | None = None


class WorkerPool(Executor):
    def __init__(
        self,
        ctx: Any,
        max_workers: int,
        initializer: Callable[..., None],
        initargs: tuple[Any, ...] = (),
    ) -> None:
        self._ctx, self._max_workers = ctx, max_workers
        self._initializer, self._initargs = initializer, initargs
        # Shared with the callers' threads (under the lock).
        self._lock = threading.Lock()
        self._pending: deque[_Task] = deque()
        self._closing = False
        self._stop_deadline = float("inf")
        self._ready_workers = 0
        self._start_error: str | None = None
        # The dispatcher's own.
        self._workers: list[_Worker] = []
        self._size = 0  # worker slots opened so far; a dead worker's slot is filled again
        self._start_failures = 0
        self._next_start = 0.0
        # Sockets, not os.pipe(): once closed they refuse a late wake instead of writing to
        # whatever file took their number.
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._thread = threading.Thread(target=self._dispatch, name="pgs-worker-pool", daemon=True)
        self._thread.start()
        util.Finalize(self, _kill_at_exit, args=(self._workers,), exitpriority=20)

    # -- the Executor interface ---------------------------------------------------------------

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        with self._lock:
            if self._closing:
                raise RuntimeError("cannot schedule new futures after shutdown")
            self._pending.append(_Task(future, fn, args, kwargs))
        self._wake()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            if not self._closing:
                self._closing = True
                self._stop_deadline = time.monotonic() + STOP_GRACE_S
            cancelled = list(self._pending) if cancel_futures else []
            if cancel_futures:
                self._pending.clear()
        for task in cancelled:
            task.future.cancel()
        self._wake()
        if wait:
            self._thread.join()

    # -- state for /readyz ---------------------------------------------------------------------

    def problem(self) -> str | None:
        """Why the pool cannot run a task now, or None: it is stopped, or no worker is ready and
        the last one to start failed."""
        with self._lock:
            if self._closing:
                return "the worker pool is stopped"
            if self._ready_workers == 0 and self._start_error is not None:
                return f"a worker failed to start: {self._start_error}"
            return None

    def worker_pids(self) -> list[int]:
        """The worker processes alive now (for tests and diagnostics)."""
        return [w.pid for w in list(self._workers)]

    # -- the dispatcher thread -----------------------------------------------------------------

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # full: it is awake already; closed: the pool is done
            self._wake_w.send(b"x")

    def _dispatch(self) -> None:
        try:
            while self._step():
                pass
        except BaseException:  # a bug here must not leave the workers without a pool
            log.exception("the worker pool's dispatcher failed; stopping its workers")
            _kill_at_exit(self._workers)
            raise
        finally:
            self._wake_r.close()
            self._wake_w.close()

    def _step(self) -> bool:
        """One round: start and feed workers, wait for something to happen, handle it. False
        once the pool is stopped and its workers are gone."""
        with self._lock:
            closing, deadline = self._closing, self._stop_deadline
        if closing and not self._workers:
            # Tasks left when the last worker is gone cannot run any more.
            with self._lock:
                left, self._pending = self._pending, deque()
            for task in left:
                task.future.cancel()
            return False
        if closing:
            self._stop_workers(deadline)
        else:
            self._start_workers()
        self._hand_out()
        watched: dict[Any, _Worker] = {}
        for w in self._workers:
            if not w.eof:
                watched[w.conn] = w
            watched[w.process.sentinel] = w
        ready = connection.wait([self._wake_r, *watched], self._timeout(closing, deadline))
        self._handle(ready, watched)
        return True

    def _handle(self, ready: list[Any], watched: dict[Any, _Worker]) -> None:
        if self._wake_r in ready:
            with contextlib.suppress(BlockingIOError):
                while self._wake_r.recv(4096):
                    pass
        # Messages before deaths: a worker may answer and then die.
        for obj in ready:
            if isinstance(obj, Connection):
                self._receive(watched[obj])
        for obj in ready:
            if isinstance(obj, int):  # a process sentinel
                self._ended(watched[obj])

    def _timeout(self, closing: bool, deadline: float) -> float | None:
        now = time.monotonic()
        if closing:
            return max(0.0, deadline - now) + 0.01
        if self._next_start > now:
            return self._next_start - now + 0.01
        return None

    def _start_workers(self) -> None:
        with self._lock:
            demand = len(self._pending) + sum(w.task is not None for w in self._workers)
        self._size = max(self._size, min(self._max_workers, demand))
        while len(self._workers) < self._size and time.monotonic() >= self._next_start:
            receive, send = self._ctx.Pipe(duplex=True)
            process = self._ctx.Process(
                target=_serve,
                args=(send, os.getpid(), self._initializer, self._initargs),
                name="pgs-worker",
            )
            try:
                process.start()
            except OSError as exc:  # no process to be had (EAGAIN, ENOMEM, too many files)
                receive.close()
                self._failed_start(f"{type(exc).__name__}: {exc}")
                return
            finally:
                send.close()  # the worker's end: EOF for the worker means the API closed or died
            self._workers.append(_Worker(process, process.pid, receive))

    def _hand_out(self) -> None:
        for w in self._workers:
            if not w.ready or w.task is not None or w.eof:
                continue
            with self._lock:
                task = self._pending.popleft() if self._pending else None
            if task is None:
                return
            if not task.future.set_running_or_notify_cancel():
                continue  # cancelled while waiting (this worker stays free for the next)
            try:
                data = pickle.dumps((task.fn, task.args, task.kwargs))
            except Exception as exc:
                task.future.set_exception(exc)
                continue
            w.task = task
            # A worker that died meanwhile: its death fails the task (the sentinel tells).
            with contextlib.suppress(OSError):
                w.conn.send_bytes(data)

    def _receive(self, w: _Worker) -> None:
        try:
            data = w.conn.recv_bytes()
        except (EOFError, OSError):
            w.eof = True  # it died or is dying: its sentinel tells
            return
        try:
            message = pickle.loads(data)
        except Exception as exc:  # a result this process cannot rebuild (e.g. its class is unknown)
            message = ("done", False, exc)
        kind = message[0]
        if kind == "ready":
            w.ready = True
            self._start_failures = 0
            with self._lock:
                self._ready_workers += 1
                self._start_error = None
        elif kind == "failed":
            w.start_error = message[1]
        elif kind == "done" and w.task is not None:
            task, w.task = w.task, None
            ok, value = message[1], message[2]
            if ok:
                task.future.set_result(value)
            else:
                task.future.set_exception(value)

    def _ended(self, w: _Worker) -> None:
        """The worker ``w`` exited: fail its task, count a failed start, free its slot."""
        while not w.eof and w.conn.poll():
            self._receive(w)
        w.process.join()
        exitcode = w.process.exitcode
        w.conn.close()
        self._workers.remove(w)
        w.process.close()
        if w.ready:
            with self._lock:
                self._ready_workers -= 1
        elif not w.killed:
            self._failed_start(w.start_error or f"it exited with status {exitcode}")
        if w.task is not None:
            task, w.task = w.task, None
            task.future.set_exception(WorkerDied(w.pid, exitcode, stopped=w.killed))

    def _failed_start(self, why: str) -> None:
        """A worker could not start: try again after a pause that grows with each failure in a
        row, so that a pool that cannot start does not spin the CPU."""
        self._start_failures += 1
        pause = min(START_RETRY_MAX_S, START_RETRY_S * 2 ** (self._start_failures - 1))
        self._next_start = time.monotonic() + pause
        with self._lock:
            self._start_error = why
        log.error("a worker process failed to start (%s); next try in %.1f s", why, pause)

    def _stop_workers(self, deadline: float) -> None:
        """The pool is stopping: idle workers are told to go (EOF), starting ones and those
        still busy at the deadline are killed."""
        with self._lock:
            pending = bool(self._pending)  # shutdown(cancel_futures=False): they run first
        overdue = time.monotonic() >= deadline
        for w in self._workers:
            if w.killed:
                continue
            if not w.ready or (w.task is not None and overdue):
                if w.task is not None:
                    log.warning("worker %d: still busy at the end of the graceful stop; killed", w.pid)
                w.killed = True
                w.process.kill()
            elif w.task is None and not pending and not w.eof:
                w.eof = True
                w.conn.close()


def _kill_at_exit(workers: list[_Worker]) -> None:
    """At the API's exit (or the dispatcher's failure): kill the workers still there."""
    for w in list(workers):
        with contextlib.suppress(Exception):
            if w.process.is_alive():
                w.process.kill()


# -- inside a worker process -------------------------------------------------------------------


def _serve(
    conn: Connection, parent_pid: int, initializer: Callable[..., None], initargs: tuple[Any, ...]
) -> None:
    """A worker's life: run the initializer, then one task at a time until the channel closes."""
    die_with_parent(parent_pid)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        initializer(*initargs)
    except BaseException as exc:
        conn.send(("failed", f"{type(exc).__name__}: {exc}"))
        raise
    conn.send(("ready",))
    while True:
        try:
            data = conn.recv_bytes()
        except (EOFError, OSError):
            return  # the pool closed the channel
        try:
            fn, args, kwargs = pickle.loads(data)
            outcome: tuple[Any, ...] = ("done", True, fn(*args, **kwargs))
        except BaseException as exc:  # the task's own exception, as the caller's future gives it
            outcome = ("done", False, exc)
        try:
            data = pickle.dumps(outcome)
        except Exception as exc:  # an unpicklable result or exception
            data = pickle.dumps(("done", False, RuntimeError(f"{type(exc).__name__}: {exc}")))
        try:
            conn.send_bytes(data)
        except OSError:
            return  # the pool is gone
