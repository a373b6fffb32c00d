"""The service as a benchmark runs it: ``python -m app`` from a checkout, on loopback."""

from __future__ import annotations

from pathlib import Path

from app.core.config import Settings
from tests.cluster.harness import ApiServer

# The test harness writes progress every 0.1 s; a benchmark measures the service as deployed.
DEFAULT_PROGRESS_INTERVAL_S = Settings.model_fields["progress_interval_s"].default


class BenchServer(ApiServer):
    """One pool worker, anonymous, progress at the deployed interval, its data and log under
    ``root``; ``src`` is the checkout served (another lets one record hold both sides of a
    change), ``env`` the benchmark's own settings."""

    def __init__(self, src: Path, root: Path, **env: str) -> None:
        super().__init__(
            root / "var",
            root / "server.log",
            src=src,
            PGS_WORKERS="1",
            PGS_PROGRESS_INTERVAL_S=str(DEFAULT_PROGRESS_INTERVAL_S),
            **env,
        )
