"""Latency summaries shared by the service benchmarks."""

from __future__ import annotations

import statistics


def percentiles(latencies: list[float], digits: int = 1) -> dict[str, float]:
    """The count, median, 99th percentile and maximum of ``latencies`` (seconds) in ms.

    ``inclusive`` quantiles never lie beyond the largest latency measured, which a tail of a few
    hundred requests would otherwise extrapolate past."""
    if len(latencies) < 2:
        return {"n": len(latencies)}
    q = statistics.quantiles(latencies, n=100, method="inclusive")
    return {
        "n": len(latencies),
        "p50_ms": round(q[49] * 1e3, digits),
        "p99_ms": round(q[98] * 1e3, digits),
        "max_ms": round(max(latencies) * 1e3, 1),
    }
