"""app/services/jobs/trace_thinning.py: a pathological stream of checkpoints keeps at most the bound,
evenly spread, with the first, the last and each target's first crossing, so that
time_to_target over the kept points is the full trace's."""

from __future__ import annotations

import numpy as np
import pytest

from app.services.jobs.trace_thinning import ThinnedTrace
from solver.tracing import TracePoint, time_to_target


def _points(n: int, seed: int = 0) -> list[TracePoint]:
    """A noisy rising test accuracy: targets are crossed at scattered places, some once only."""
    rng = np.random.default_rng(seed)
    score = np.clip(np.linspace(0.3, 0.9, n) + rng.normal(0, 0.05, n), 0, 1)
    return [
        TracePoint(
            iteration=i,
            samples_seen=i,
            solver_seconds=i * 1e-4,
            objective=1.0,
            test_score=float(s),
            score_name="accuracy",
        )
        for i, s in enumerate(score)
    ]


@pytest.mark.parametrize("n", [10, 1000, 100_000])
def test_at_most_the_bound_with_first_last_and_target_crossings(n: int):
    targets = [0.5, 0.8, 0.95, 0.99]
    points = _points(n)
    trace = ThinnedTrace(256, targets, higher_is_better=True)
    stored: dict[int, TracePoint] = {}
    for i, point in enumerate(points):
        trace.add(point)
        if i % 97 == 0:  # the worker writes now and then: what the store holds follows
            new, dropped = trace.take()
            stored.update(new)
            for seq in dropped:
                del stored[seq]
    trace.finish()
    new, dropped = trace.take()
    stored.update(new)
    for seq in dropped:
        del stored[seq]

    kept = [stored[seq] for seq in sorted(stored)]
    assert kept == trace.points and len(kept) <= 256
    assert kept[0] is points[0] and kept[-1] is points[-1]
    assert time_to_target(kept, targets, True) == time_to_target(points, targets, True)
    if n > 256:
        # Evenly spread: no gap between kept points is more than twice the stride's.
        gaps = np.diff([p.iteration for p in kept])
        assert gaps.max() <= 4 * n / 256


def test_a_failed_write_goes_with_the_next():
    trace = ThinnedTrace(256, [], higher_is_better=True)
    points = _points(300)
    for point in points[:100]:
        trace.add(point)
    new, dropped = trace.take()
    trace.put_back([seq for seq, _ in new], dropped)
    for point in points[100:]:
        trace.add(point)
    trace.finish()
    new, dropped = trace.take()
    assert [p for _, p in new] == trace.points and dropped == []
