"""The batch predictor: runs queued batch predictions in this API process's threads.

Every ``sweep_interval_s`` (or at once when a request wakes it) one pass takes back running
batch predictions whose heartbeat stopped, then claims queued ones while a thread is free
(services/model_registry/batch_predictions.py says why threads, not the training pool). Claims are conditional
updates, so several API processes share the queue without handing anything to each other.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from app.core.config import Settings
from app.core.loop import LoopService
from app.db.engine import SessionFactory
from app.services.model_registry import batch_predictions
from app.services.model_registry.batch_predictions import ModelLoader


class BatchPredictor(LoopService):
    name = "batch-predictor"

    def __init__(self, factory: SessionFactory, settings: Settings, load_model: ModelLoader) -> None:
        super().__init__(settings.sweep_interval_s)
        self.factory, self.settings, self.load_model = factory, settings, load_model
        self._free = threading.Semaphore(settings.batch_predict_threads)
        self._executor = ThreadPoolExecutor(
            settings.batch_predict_threads, thread_name_prefix="batch-predict"
        )

    def start(self) -> None:
        if self.settings.is_sqlite:
            batch_predictions.recover_on_startup(self.factory, self.settings.max_attempts)
        super().start()

    def stop(self, timeout_s: float = 10.0) -> None:
        """Runs under way return their batch prediction to the queue at their next progress
        write (within progress_interval_s), for the next start to run again."""
        super().stop(timeout_s)
        self._executor.shutdown(wait=True, cancel_futures=True)

    def run_once(self) -> None:
        s = self.settings
        batch_predictions.reap_lost(self.factory, s.lease_s, s.max_attempts)
        while not self._stopping and self._free.acquire(blocking=False):
            claimed = batch_predictions.claim_next(self.factory)
            if claimed is None:
                self._free.release()
                return
            self._executor.submit(self._run, *claimed)

    def _run(self, batch_id: int, token: int) -> None:
        try:
            batch_predictions.run(
                self.factory,
                self.settings.store,
                self.settings.tmp_dir,
                batch_id,
                token,
                self.load_model,
                self.settings.progress_interval_s,
                stopping=lambda: self._stopping,
            )
        finally:
            self._free.release()
            self.wake()  # the next queued one, now
