"""Prometheus metrics: request counts and latencies (ASGI middleware), waiting long polls, jobs by
status, queue."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# Latency buckets from 250 us: predictions are sub-millisecond, uploads take seconds.
BUCKETS = (0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)


class ServiceMetrics:
    """One registry per app instance, so several apps (tests) never share counters."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "pgs_http_requests",
            "HTTP requests",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "pgs_http_request_duration_seconds",
            "HTTP request latency",
            ["method", "route"],
            buckets=BUCKETS,
            registry=self.registry,
        )
        # Each holds a connection (of PGS_MAX_CONNECTIONS) for up to its wait.
        self.long_polls = Gauge(
            "pgs_long_polls_waiting",
            "Long polls (GET /v1/jobs/{id}?wait=) waiting for their job to end",
            registry=self.registry,
        )

    def add_state_collector(self, snapshot: Callable[[], dict[str, Any]]) -> None:
        self.registry.register(_StateCollector(snapshot))


class _StateCollector(Collector):
    """Reads job counts from the database at scrape time: the database is the source of truth."""

    def __init__(self, snapshot: Callable[[], dict[str, Any]]) -> None:
        self._snapshot = snapshot

    def collect(self) -> Iterator[Metric]:
        snap = self._snapshot()
        jobs = GaugeMetricFamily("pgs_jobs", "Jobs by status", labels=["status"])
        for status, n in snap["jobs"].items():
            jobs.add_metric([status], n)
        yield jobs
        yield GaugeMetricFamily(
            "pgs_queue_depth", "Jobs waiting for a worker", value=snap["jobs"].get("queued", 0)
        )
        yield GaugeMetricFamily(
            "pgs_jobs_in_flight", "Jobs submitted to the worker pool", value=snap["in_flight"]
        )
        yield GaugeMetricFamily("pgs_workers", "Size of the worker pool", value=snap["workers"])
        yield GaugeMetricFamily("pgs_model_cache_size", "Models held in memory", value=snap["cache_size"])
        yield GaugeMetricFamily(
            "pgs_model_cache_bytes", "Bytes of the models held in memory", value=snap["cache_bytes"]
        )


class MetricsMiddleware:
    """Pure ASGI (not BaseHTTPMiddleware), so timing adds microseconds, not a task per request."""

    def __init__(self, app: ASGIApp, metrics: ServiceMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def send_wrapper(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            route = scope.get("route")
            # The route template, never the raw path: ids would explode the label set.
            name = getattr(route, "path", None) or "unmatched"
            method = scope.get("method", "")
            self.metrics.requests.labels(method, name, str(status)).inc()
            self.metrics.latency.labels(method, name).observe(time.perf_counter() - started)
