"""app/training/timing.py, the parts of a run's wall time beside the solver: disjoint (a part
timed inside another is taken out of it), never negative, summing to ``overhead_seconds``."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from app.training.timing import PARTS, JobClock


def test_a_nested_part_is_taken_out_of_the_enclosing_one():
    clock = JobClock()
    began = time.perf_counter()
    with clock.part("load"):
        time.sleep(0.01)
        with clock.part("preprocessing"):
            time.sleep(0.02)
    outer = time.perf_counter() - began
    # Counted in both, the two parts would add up to more than the span that holds them.
    assert clock.seconds["load"] > 0.0 and clock.seconds["preprocessing"] > 0.0
    assert clock.seconds["load"] + clock.seconds["preprocessing"] <= outer


def test_the_parts_are_present_non_negative_and_sum_to_the_overhead():
    clock = JobClock()
    with clock.part("load"):
        pass
    fitted = SimpleNamespace(solver_seconds_=0.0, compile_seconds_=0.001, checkpoint_seconds_=0.002)
    clock.fitted(fitted, progress_seconds=0.0005)
    metrics = clock.overhead()
    names = [f"{name}_seconds" for name in PARTS] + ["other_seconds"]
    assert set(metrics) == {"overhead_seconds", *names}
    assert all(metrics[name] >= 0.0 for name in names)
    assert sum(metrics[name] for name in names) == pytest.approx(metrics["overhead_seconds"], rel=1e-12)
    assert (metrics["compile_seconds"], metrics["checkpoint_seconds"]) == (0.001, 0.002)
