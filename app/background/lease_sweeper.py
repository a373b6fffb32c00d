"""The lease sweeper: every ``sweep_interval_s``, find the jobs no live process holds and
dispatch them (services/jobs/leases.py says how the leases work).

One pass (:meth:`LeaseSweeper.run_once`) refreshes the dispatch mark of the queued jobs this
process holds, settles running jobs whose heartbeat stopped, and submits the jobs that need a
worker. That sweep is what makes several API processes and a Dask cluster safe: nothing depends
on the process that accepted a job staying alive. At start, it first settles what a previous
server left behind.
"""

from __future__ import annotations

import logging

from app.core.config import Settings
from app.core.loop import LoopService
from app.db.engine import SessionFactory
from app.services.jobs import leases
from app.training.runner import JobRunner

log = logging.getLogger(__name__)


class LeaseSweeper(LoopService):
    name = "lease-sweeper"

    def __init__(self, runner: JobRunner, factory: SessionFactory, settings: Settings) -> None:
        super().__init__(settings.sweep_interval_s)
        self.runner, self.factory, self.settings = runner, factory, settings

    def start(self) -> None:
        """Recover the jobs of a previous server (submitting the queued ones), then sweep."""
        s = self.settings
        for job_id in leases.recover_on_startup(
            self.factory, s.max_attempts, sole_owner=s.is_sqlite, lease_s=s.lease_s
        ):
            self.runner.submit(job_id)
        super().start()

    def run_once(self) -> None:
        if self.runner.closed:
            return
        held = self.runner.held()
        if held:
            leases.refresh_dispatched(self.factory, held)
        s = self.settings
        for job_id in leases.reap_lost(self.factory, s.lease_s, s.max_attempts):
            self.runner.submit(job_id)
        for job_id in leases.claim_undispatched(self.factory, s.lease_s, held):
            # Its API process died (or its executor lost it): worth a line at the default level.
            log.warning("job %d: dispatching again (no live API process held it)", job_id)
            self.runner.submit(job_id)
