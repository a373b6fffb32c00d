"""The upload service: runs the downloads and parses of finished uploads and imports
(services/datasets/finish.py) in its own threads, and every ``sweep_interval_s`` refreshes
their heartbeats, takes over the parses of dead processes (and of this one before a restart),
deletes expired uploads and puts the disk reserve back once there is room (core/disk_reserve.py).

A URL import is downloaded first, outside the parse slots and at most
``max_concurrent_downloads_per_owner`` at a time per owner, then parsed: a source that trickles
holds its own download, never a slot another owner's upload waits for. The parse slots
(``max_concurrent_parses``) go round the owners that wait for one (slots.py)."""

from __future__ import annotations

import logging
import threading

from app.background.slots import FairSlots
from app.core.config import Settings
from app.core.disk_reserve import DiskReserve
from app.core.loop import LoopService, log_failure
from app.db.engine import SessionFactory
from app.services.datasets import finish, resumable

log = logging.getLogger(__name__)


class UploadService(LoopService):
    name = "upload-service"

    def __init__(
        self, factory: SessionFactory, settings: Settings, reserve: DiskReserve | None = None
    ) -> None:
        super().__init__(settings.sweep_interval_s)
        self.factory, self.settings, self.reserve = factory, settings, reserve
        # Each parse runs in its own child process (parse_process.py) and a daemon thread here
        # waits on it: a server that stops does not wait for a parse (the next one resumes it).
        self._parses = FairSlots(total=settings.max_concurrent_parses)
        self._downloads = FairSlots(per_owner=settings.max_concurrent_downloads_per_owner)
        self._held: set[str] = set()
        self._lock = threading.Lock()

    def submit(self, upload_id: str) -> None:
        with self._lock:
            if upload_id in self._held:
                return
            self._held.add(upload_id)
        threading.Thread(
            target=self._run, args=(upload_id,), name=f"pgs-ingest-{upload_id}", daemon=True
        ).start()

    def _run(self, upload_id: str) -> None:
        try:
            upload = finish.parsing(self.factory, upload_id)
            if upload is None:
                return
            if finish.needs_download(upload):
                with self._downloads.slot(upload.owner):
                    if not finish.fetch(self.factory, self.settings, upload):
                        return
            with self._parses.slot(upload.owner):
                finish.run(self.factory, self.settings, upload)
        except Exception as exc:
            # A database outage: the heartbeat stops, and a later pass takes the parse over.
            log_failure(f"upload {upload_id}: parse", exc)
        finally:
            with self._lock:
                self._held.discard(upload_id)

    def run_once(self) -> None:
        with self._lock:
            held = set(self._held)
        if held:
            finish.refresh(self.factory, held)
        for upload_id in finish.claim_stale(self.factory, self.settings.lease_s):
            log.warning("upload %s: parsing again (no live process was parsing it)", upload_id)
            self.submit(upload_id)
        resumable.sweep_expired(self.factory, self.settings)
        if self.reserve is not None:
            self.reserve.fill()
