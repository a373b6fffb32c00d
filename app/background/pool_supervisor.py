"""The pool supervisor: settles training futures that end in an error, and hands queued jobs
to the workers that are free (JobRunner.dispatch).

A future of :func:`app.training.worker.run_job` normally ends with the job's status, which the worker has
already written. An error means the job's run ended outside the worker's hands, and the database
must say so: a local worker process died (:class:`app.training.pool.WorkerDied`; only the job it
ran is concerned), Dask gave up on the task, the dispatch itself was lost, or the call around
``run_job`` failed (e.g. pickling).
"""

from __future__ import annotations

import logging
from concurrent.futures import Future

from app.core.config import Settings
from app.core.loop import LoopService, log_failure
from app.db.engine import SessionFactory, is_unavailable
from app.services.jobs import state as jobs
from app.training.executors import is_lost_dispatch
from app.training.pool import WorkerDied
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
        # Worker deaths per job, counted in memory too: a worker that dies before it claims the
        # job (the job stays queued, so no attempt is charged) would otherwise have the same job
        # resubmitted forever.
        self._deaths: dict[int, int] = {}
        runner.on_finished(lambda _job_id: self.wake())
        runner.on_pending(self.wake)

    def run_once(self) -> None:
        for job_id, future in self.runner.take_finished():
            try:
                self.settle(job_id, future)
            except Exception as exc:
                log_failure(f"could not settle job {job_id}", exc)
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
        if isinstance(exc, WorkerDied):
            self._worker_died(job_id, exc)
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

    def _worker_died(self, job_id: int, exc: WorkerDied) -> None:
        """The job's own worker process ended under it. Killed by the pool's graceful stop: the
        job goes back to the queue without losing an attempt. Otherwise (killed, crashed) it is
        re-queued once per attempt, then failed with the reason."""
        run = jobs.running_run(self.factory, job_id)
        if run is not None and run[1] != exc.pid:
            return  # the job runs elsewhere (a duplicate dispatch another process claimed)
        if exc.stopped:
            if run is not None and jobs.release(self.factory, job_id, run[0]):
                log.warning("job %d: its worker was stopped with the server; back in the queue", job_id)
            return
        why = "the worker process died"
        log.error("job %d: %s (%s)", job_id, why, exc)
        self._deaths[job_id] = deaths = self._deaths.get(job_id, 0) + 1
        if deaths > self.settings.max_attempts:
            jobs.fail_unstarted(
                self.factory, job_id, f"{why} {deaths} times (worker processes crash before they claim it)"
            )
            return
        if jobs.settle_crashed_worker(self.factory, job_id, self.settings.max_attempts, why):
            self.runner.submit(job_id)
