"""The pool supervisor: settles training futures that end in an error, replaces a broken pool,
and hands queued jobs to the workers that are free (JobRunner.dispatch).

A future of :func:`app.training.worker.run_job` normally ends with the job's status, which the worker has
already written. An error means the job's run ended outside the worker's hands, and the database
must say so: a local worker process died (the pool is broken), Dask gave up on the task, the
dispatch itself was lost, or the call around ``run_job`` failed (e.g. pickling).
"""

from __future__ import annotations

import logging
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool

from app.core.config import Settings
from app.core.loop import LoopService, log_failure
from app.db.engine import SessionFactory, is_unavailable
from app.services.jobs import state as jobs
from app.training.executors import is_lost_dispatch
from app.training.runner import JobRunner

log = logging.getLogger(__name__)


class PoolSupervisor(LoopService):
    """Woken by every future that ends and every job submitted; settles the futures one by one
    (:meth:`settle`), then dispatches."""

    name = "pool-supervisor"

    def __init__(self, runner: JobRunner, factory: SessionFactory, settings: Settings) -> None:
        # The interval is only a fallback: the runner wakes the supervisor for each future.
        super().__init__(settings.sweep_interval_s)
        self.runner, self.factory, self.settings = runner, factory, settings
        # Pool breaks per job, counted in memory too: a pool whose workers die before claiming
        # anything (e.g. a failing initializer) would otherwise resubmit the same job forever.
        self._breaks: dict[int, int] = {}
        runner.on_finished(lambda _job_id: self.wake())
        runner.on_pending(self.wake)

    def run_once(self) -> None:
        for job_id, future in self.runner.take_finished():
            try:
                self.settle(job_id, future)
            except Exception as exc:
                log_failure(f"could not settle job {job_id}", exc)
        # A worker may also die with no job (an idle or starting one): no future tells, so
        # every pass checks.
        if not self.runner.closed:
            self.runner.replace_broken_pool()
        # Last: settling may have re-queued jobs, and a worker may have come free.
        self.runner.dispatch()

    def stop(self, timeout_s: float = 10.0) -> None:
        super().stop(timeout_s)
        self.run_once()  # the futures that ended while the runner stopped

    def settle(self, job_id: int, future: Future[str]) -> None:
        if future.cancelled():
            return
        exc = future.exception()
        if exc is None:
            return
        if isinstance(exc, BrokenProcessPool):
            if not self.runner.closed:
                self._worker_died(job_id, future, exc)
            return
        if is_unavailable(exc) or is_lost_dispatch(exc):
            # The job is still in the database (queued, or running with a lease); the sweep
            # dispatches it again once its dispatch mark or lease runs out.
            log.warning(
                "job %d: dispatch lost (%s: %s); the sweep will retry", job_id, type(exc).__name__, exc
            )
            return
        if type(exc).__name__ == "KilledWorker":
            # Dask gave up: the task's workers died allowed-failures times in a row.
            why = f"Dask workers died while running it ({exc})"
            if jobs.settle_crashed_worker(self.factory, job_id, self.settings.max_attempts, why):
                self.runner.submit(job_id)
            return
        # run_job writes its own failures; this is a failure around it (e.g. pickling).
        log.error("job %d: worker call failed: %r", job_id, exc)
        jobs.fail_unstarted(self.factory, job_id, f"{type(exc).__name__}: {exc}")

    def _worker_died(self, job_id: int, future: Future[str], exc: BrokenProcessPool) -> None:
        """Re-queue the job once per try, then fail it. A job whose own worker did not die (the
        pool stopped it because another worker died), or that was only waiting in a pool whose
        workers had been working, goes back to the queue without losing an attempt. A fresh
        pool at once in every case, also after a job's last attempt: the service must not stay
        unready until the next submit."""
        self.runner.replace_broken_pool()
        why = "the worker process died"
        run = jobs.running_run(self.factory, job_id)
        if run is not None and not self.runner.died_on_its_own(run[1]):
            token, pid = run
            log.warning(
                "job %d: its worker %d was stopped with a broken pool; re-queued without losing the attempt",
                job_id,
                pid,
            )
            if jobs.release(self.factory, job_id, token):
                self.runner.submit(job_id)
            return
        if run is None and self.runner.pool_was_ready(future):
            log.warning(
                "job %d: was waiting in a pool that broke; re-queued without losing an attempt", job_id
            )
            self.runner.submit(job_id)
            return
        log.error("job %d: %s (%s)", job_id, why, exc)
        self._breaks[job_id] = breaks = self._breaks.get(job_id, 0) + 1
        if breaks > self.settings.max_attempts:
            jobs.fail_unstarted(
                self.factory,
                job_id,
                f"{why} {breaks} times (worker processes crash or cannot start)",
            )
            return
        if jobs.settle_crashed_worker(self.factory, job_id, self.settings.max_attempts, why):
            self.runner.submit(job_id)
