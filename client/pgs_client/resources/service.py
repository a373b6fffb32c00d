"""The service's own health: ``/healthz`` (alive, its version), ``/readyz`` (database, store,
disk and workers usable) and ``/metrics`` (Prometheus text)."""

from __future__ import annotations

from typing import Any

from pgs_client.convert import from_json
from pgs_client.operations import covers
from pgs_client.schemas import Health
from pgs_client.transport import Transport


class Service:
    def __init__(self, transport: Transport):
        self._t = transport

    @covers("GET /healthz")
    def health(self) -> Health:
        """The process answers; ``version`` is the service's."""
        return from_json(Health, self._t.get("/healthz"))

    @covers("GET /readyz")
    def ready(self) -> dict[str, Any]:
        """Every check ``ok`` (``{"status": "ready", "checks": {...}}``); a service that is not
        ready raises :class:`~pgs_client.errors.ServiceUnavailable` naming the failed check."""
        answer: dict[str, Any] = self._t.get("/readyz")
        return answer

    @covers("GET /metrics")
    def metrics(self) -> str:
        """The Prometheus exposition text (``PGS_METRICS_ACCESS`` decides who may read it)."""
        return self._t.request("GET", "/metrics", safe=True).text
