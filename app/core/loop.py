"""A background loop as a small service: a daemon thread that calls ``run_once`` every
``interval_s`` (or sooner when woken) until stopped.

The server's loops (app/background/) and a worker's lease heartbeat (services/jobs/leases.py) are
such services: each one's work is one ``run_once``, which a test can also call directly. A failing
pass is logged and the loop goes on: a database outage must not end a loop that outlives it.
"""

from __future__ import annotations

import logging
import threading
from types import TracebackType

from app.db.engine import is_unavailable

log = logging.getLogger(__name__)


class LoopService:
    """Subclasses give a ``name`` and implement :meth:`run_once`."""

    name = "loop"

    def __init__(self, interval_s: float) -> None:
        self.interval_s = interval_s
        self._wake = threading.Event()
        self._stopping = False
        self._thread: threading.Thread | None = None

    def run_once(self) -> None:
        raise NotImplementedError

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
        self._thread.start()

    def wake(self) -> None:
        """Run the next pass now instead of at the end of the interval."""
        self._wake.set()

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop after the pass under way (if any); waits up to ``timeout_s`` for it."""
        self._stopping = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=timeout_s)

    def __enter__(self) -> LoopService:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def _loop(self) -> None:
        while True:
            self._wake.wait(self.interval_s)
            self._wake.clear()
            if self._stopping:
                return
            try:
                self.run_once()
            except Exception as exc:
                log_failure(f"{self.name} failed", exc)


def log_failure(what: str, exc: Exception) -> None:
    """A warning for a database outage (expected, and over by the next pass), else an error."""
    if is_unavailable(exc):
        log.warning("%s: database unavailable (%s)", what, type(exc).__name__)
    else:
        log.error("%s", what, exc_info=exc)
