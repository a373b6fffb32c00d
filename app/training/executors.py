"""Executor backends: where :func:`app.training.worker.run_job` runs, behind ``concurrent.futures``.

* ``local`` (default): a pool of worker processes of the API process (app/training/pool.py, one
  host), in which a worker's death ends only the job it was running.
* ``dask://host:8786``: a Dask distributed scheduler and its workers, on any hosts that see the
  data dir at the same path. ``Client.get_executor()`` gives the same ``Executor`` interface.

The runner (app/training/runner.py) only submits ``run_job(job_id, settings)`` and reads futures; it asks
the backend for the few things that differ: whether it is ready, how many workers it has, and
how to stop without losing work.

What Dask does differently, and why nothing is lost: a Dask scheduler drops the queued work of a
client that goes away, and it cannot stop a running task. So the database stays the source of
truth: queued jobs are dispatched again by a live API process (services/jobs/leases.py), a running
task keeps running after its API process stops and writes its own result, a Dask worker killed
mid-job is caught by the job's lease, and cancellation stays cooperative between solver chunks.
"""

from __future__ import annotations

import logging
from concurrent.futures import Executor
from typing import Any, Protocol

from app.core.config import Settings
from app.training.pool import WorkerPool
from app.training.worker import init_worker

log = logging.getLogger(__name__)


class Backend(Protocol):
    name: str

    def new_executor(self) -> Executor: ...

    def ready(self) -> tuple[bool, str]: ...

    def worker_count(self) -> int: ...

    def stop(self, executor: Executor) -> None:
        """Stop without losing work: queued jobs stay queued in the database."""
        ...


class LocalPoolBackend:
    """A pool of worker processes on this host; its workers end with the API process."""

    name = "local"

    def __init__(self, settings: Settings, ctx: Any, shutdown_event: Any) -> None:
        self.settings, self.ctx, self.shutdown_event = settings, ctx, shutdown_event
        self.pool: WorkerPool | None = None

    def new_executor(self) -> Executor:
        self.pool = WorkerPool(
            self.ctx,
            max_workers=self.settings.workers,
            initializer=init_worker,
            initargs=(self.settings, self.shutdown_event),
        )
        return self.pool

    def ready(self) -> tuple[bool, str]:
        problem = self.pool.problem() if self.pool is not None else "the worker pool is not started"
        return (False, problem) if problem else (True, "ok")

    def worker_count(self) -> int:
        return self.settings.workers

    def stop(self, executor: Executor) -> None:
        # The shutdown event (set by the runner) makes running jobs release their claim; queued
        # futures are cancelled and the jobs stay "queued" in the database for the next start.
        # A worker still busy after the pool's grace is killed; its job is released by the pool
        # supervisor (WorkerDied(stopped=True)).
        executor.shutdown(wait=True, cancel_futures=True)
        self.pool = None


def dask_address(executor_setting: str) -> str:
    """``dask://host:8786`` (or ``tcp://host:8786``) -> the scheduler address Dask takes."""
    if executor_setting.startswith("dask://"):
        return "tcp://" + executor_setting[len("dask://") :]
    return executor_setting


class DaskBackend:
    """A client of a Dask distributed scheduler; ``get_executor`` is the Executor."""

    name = "dask"

    def __init__(self, settings: Settings) -> None:
        from distributed import Client

        from app.training.dask_plugin import WarmUp

        self.settings = settings
        self.address = dask_address(settings.executor)
        # set_as_default=False: this client is the runner's, not the process's dask default.
        self.client = Client(self.address, timeout=max(settings.db_wait_s, 10), set_as_default=False)
        self.client.register_plugin(
            WarmUp(str(settings.numba_cache_dir) if settings.numba_cache_dir else None),
            name=WarmUp.name,
        )

    def new_executor(self) -> Executor:
        # pure=False: a job submitted again (after a lost dispatch) is a new task, not a
        # reference to the old task's cached result.
        executor: Executor = self.client.get_executor(pure=False)
        return executor

    def ready(self) -> tuple[bool, str]:
        if self.client.status != "running":
            return False, f"the Dask client is {self.client.status} ({self.address})"
        n = self.worker_count()
        if n == 0:
            return False, f"the Dask scheduler at {self.address} has no workers"
        return True, "ok"

    def worker_count(self) -> int:
        # The client refreshes the scheduler's identity (with the cluster-wide "n_workers") in
        # the background every few seconds; reading that copy keeps /readyz and /metrics off
        # the network (scheduler_info() would be a blocking round trip on the event loop).
        identity = getattr(self.client, "_scheduler_identity", None) or {}
        if "n_workers" in identity:
            return int(identity["n_workers"])
        return len(identity.get("workers", {}))

    def stop(self, executor: Executor) -> None:
        # Queued tasks are dropped (the jobs stay queued in the database; the next API process
        # to sweep dispatches them). Running tasks cannot be stopped: they finish on their
        # workers and write their own results.
        # ClientExecutor.shutdown(wait=False) cancels its futures (it has no cancel_futures).
        executor.shutdown(wait=False)
        self.client.close(timeout=10)


def make_backend(settings: Settings, ctx: Any, shutdown_event: Any) -> Backend:
    if settings.executor == "local":
        return LocalPoolBackend(settings, ctx, shutdown_event)
    return DaskBackend(settings)


def is_lost_dispatch(exc: BaseException) -> bool:
    """A future that failed because of the executor, not the job: the scheduler or the
    connection went away, or the task was cancelled. The job is still in the database (queued,
    or running on a worker that writes its own result) and the sweep takes care of it."""
    import asyncio
    import concurrent.futures

    if isinstance(
        exc, (asyncio.CancelledError, concurrent.futures.CancelledError, ConnectionError, TimeoutError)
    ):
        return True
    module = type(exc).__module__ or ""
    return module.startswith(("distributed", "tornado")) and type(exc).__name__ != "KilledWorker"
