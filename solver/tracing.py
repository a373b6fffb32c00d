"""Time-to-accuracy tracing shared by every iterative solver.

A solver is driven in chunks of iterations. Between chunks the driver may record a checkpoint (a
``TracePoint``: iteration, samples seen, solver seconds, training objective, test score), call the
user's callback (progress, cancellation), and stop at a target score or a time budget. The solver
clock counts only the time spent inside the solver's chunks: evaluation at checkpoints and the
callback are excluded, so ``solver_seconds`` is the training time a user would pay without tracing.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Protocol

import numpy as np


@dataclass(frozen=True)
class TracePoint:
    """One checkpoint of a run. ``test_score`` is accuracy (classification) or RMSE (regression).

    ``objective`` is the training objective of the returned predictor; a multiclass (one-vs-rest)
    run minimises one objective per class, and records their sum.
    """

    iteration: int
    samples_seen: int
    solver_seconds: float
    objective: float
    test_score: float | None = None
    score_name: str | None = None
    # Non-zero weights of the predictor (the L1 paper's density plots) and, for solvers that count
    # them, data accesses (non-zeros of X read so far; the L1 paper's x-axis).
    nnz_weights: int | None = None
    data_accesses: int | None = None

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Progress:
    """What the callback of ``fit`` receives after every chunk."""

    iteration: int
    n_iter: int
    samples_seen: int
    solver_seconds: float
    new_points: list[TracePoint] = field(default_factory=list)


class Engine(Protocol):
    """An iterative solver the driver can advance: ``t`` iterations done so far.

    An engine may also have an integer attribute ``data_accesses`` (recorded in the trace) and a
    boolean ``converged``: once true, the run stops with ``stop_reason == "converged"``.
    """

    t: int
    samples_per_iteration: int

    def run(self, n: int) -> None: ...

    def output_weights(self) -> np.ndarray: ...


@dataclass
class CheckpointSchedule:
    """Checkpoints at geometrically spaced iterations (ratio ``growth``) and every ``interval``
    solver seconds, whichever comes first; always one at iteration 0 and one at the end.

    After iteration 0 the first checkpoint waits until ``first_samples`` samples have been seen:
    before that the model is barely trained, and every checkpoint cuts the run into one more
    short chunk with a fixed cost (about 30 us), which made runs of a few milliseconds look up to
    5x slower than they are (docs/benchmarks.md, section 2).
    """

    growth: float = 1.25
    interval: float | None = 1.0
    first_samples: int = 0

    def next_iteration(self, t: int) -> int:
        return max(t + 1, math.ceil(t * self.growth))


@dataclass
class RunResult:
    trace: list[TracePoint]
    stop_reason: str  # "completed" | "callback" | "target_score" | "time_budget" | "converged"
    solver_seconds: float


def drive(
    engine: Engine,
    n_iter: int,
    *,
    evaluate: Callable[[np.ndarray], tuple[float, float | None]] | None = None,
    score_name: str | None = None,
    higher_is_better: bool = True,
    schedule: CheckpointSchedule | None = None,
    target_score: float | None = None,
    time_budget: float | None = None,
    callback: Callable[[Progress], bool | None] | None = None,
    chunk_seconds: float = 0.1,
) -> RunResult:
    """Advance ``engine`` to ``n_iter`` iterations in chunks of about ``chunk_seconds`` each.

    ``evaluate(weights) -> (objective, test_score)`` is called at checkpoints when given; without it
    no trace is recorded. A callback returning ``False`` stops the run.
    """
    schedule = schedule or CheckpointSchedule()
    trace: list[TracePoint] = []
    pending: list[TracePoint] = []
    solver_seconds = 0.0
    chunk = 16
    next_iter = 0
    next_time = schedule.interval if schedule.interval else math.inf

    def checkpoint() -> TracePoint:
        weights = engine.output_weights()
        objective, score = evaluate(weights)
        accesses = getattr(engine, "data_accesses", None)
        point = TracePoint(
            iteration=engine.t,
            samples_seen=engine.t * engine.samples_per_iteration,
            solver_seconds=solver_seconds,
            objective=float(objective),
            test_score=None if score is None else float(score),
            score_name=score_name if score is not None else None,
            nnz_weights=int(np.count_nonzero(weights)),
            data_accesses=None if accesses is None else int(accesses),
        )
        trace.append(point)
        pending.append(point)
        return point

    def reached(point: TracePoint) -> bool:
        if target_score is None or point.test_score is None:
            return False
        if higher_is_better:
            return point.test_score >= target_score
        return point.test_score <= target_score

    stop_reason = "completed"
    if evaluate is not None and reached(checkpoint()):
        return RunResult(trace, "target_score", 0.0)
    next_iter = schedule.next_iteration(0)
    if engine.samples_per_iteration:
        next_iter = max(next_iter, math.ceil(schedule.first_samples / engine.samples_per_iteration))
    while engine.t < n_iter:
        stop_at = min(n_iter, engine.t + chunk)
        if evaluate is not None:
            stop_at = min(stop_at, next_iter)
        started = time.perf_counter()
        done_before = engine.t
        engine.run(stop_at - engine.t)
        elapsed = time.perf_counter() - started
        solver_seconds += elapsed
        # Size the next chunk to about chunk_seconds of work (never less than one iteration), at
        # most 8x the last one while the per-iteration estimate comes from tiny chunks. (2x took
        # 6 chunks to reach 1,500 iterations; each costs ~20 us of Python and dispatch.)
        per_iter = elapsed / max(engine.t - done_before, 1)
        chunk = int(min(max(chunk_seconds / max(per_iter, 1e-9), 1), 8 * chunk + 16))
        if time_budget is not None:
            remaining = time_budget - solver_seconds
            chunk = max(1, min(chunk, int(remaining / max(per_iter, 1e-9)) + 1))

        over_budget = time_budget is not None and solver_seconds >= time_budget
        converged = bool(getattr(engine, "converged", False))
        at_end = engine.t >= n_iter or over_budget or converged
        if evaluate is not None and (engine.t >= next_iter or solver_seconds >= next_time or at_end):
            point = checkpoint()
            next_iter = schedule.next_iteration(engine.t)
            if schedule.interval:
                next_time = solver_seconds + schedule.interval
            if reached(point):
                stop_reason = "target_score"
        if stop_reason == "completed" and over_budget and engine.t < n_iter:
            stop_reason = "time_budget"
        if stop_reason == "completed" and converged and engine.t < n_iter:
            stop_reason = "converged"
        if callback is not None:
            progress = Progress(
                engine.t, n_iter, engine.t * engine.samples_per_iteration, solver_seconds,
                list(pending),
            )
            pending.clear()
            if callback(progress) is False and stop_reason == "completed":
                stop_reason = "callback"
        if stop_reason != "completed":
            break
    return RunResult(trace, stop_reason, solver_seconds)


def time_to_target(
    trace: Sequence[TracePoint], targets: Sequence[float], higher_is_better: bool
) -> dict[float, float | None]:
    """Solver seconds at the first checkpoint whose test score reached each target (None: never)."""
    result: dict[float, float | None] = {}
    for target in targets:
        result[target] = None
        for point in trace:
            if point.test_score is None:
                continue
            ok = point.test_score >= target if higher_is_better else point.test_score <= target
            if ok:
                result[target] = point.solver_seconds
                break
    return result
