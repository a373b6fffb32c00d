"""Time-to-accuracy tracing shared by every iterative solver.

A solver is driven in chunks of iterations. Between chunks the driver may record a checkpoint (a
``TracePoint``: iteration, samples seen, solver seconds, training objective, test score), call the
user's callback (progress, cancellation), and stop at a target score or a time budget. The solver
clock counts only the time spent inside the solver's chunks: evaluation at checkpoints and the
callback are excluded, so ``solver_seconds`` is the training time a user would pay without tracing.
What the checkpoints cost is reported beside it (``checkpoint_seconds``).

Numba compilation is never on the solver clock: before the clock starts, ``drive`` asks the engine
to compile (or load from Numba's disk cache) every kernel its ``run`` will call for this data
(``Engine.compile``), and reports that time apart as ``compile_seconds``.

Checkpoints follow the samples seen, not the data set's size: the first after
``first_samples`` samples, then at samples growing geometrically, so a study of time to target
against m sees the solver at the same points for every m.
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

    ``objective`` is the training objective of the returned predictor (on more rows than the
    estimator's ``objective_rows``, that of an even sample of them); a multiclass (one-vs-rest)
    run minimises one objective per class, and records their sum. ``test_score`` likewise is that
    of an even sample of the test set when it has more rows than ``eval_rows``.
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
    # The duality gap P(w) - D(alpha) of the solvers that keep a dual point (sdca): a bound on
    # objective - optimum.
    duality_gap: float | None = None

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Progress:
    """What the callback of ``fit`` receives after every chunk. ``phase`` names what the counts
    count: "fit" (the fit's own iterations) or "select_sigma" (sigma "auto"'s path: its fits
    done over its fits planned, before the fit at the chosen sigma)."""

    iteration: int
    n_iter: int
    samples_seen: int
    solver_seconds: float
    new_points: list[TracePoint] = field(default_factory=list)
    phase: str = "fit"


class Engine(Protocol):
    """An iterative solver the driver can advance: ``t`` iterations done so far.

    An engine may also have an integer attribute ``data_accesses`` and a float ``duality_gap``
    (recorded in the trace) and a boolean ``converged``: once true, the run stops with
    ``stop_reason == "converged"``.
    """

    t: int
    samples_per_iteration: int

    def compile(self) -> None:
        """Load or compile every Numba kernel ``run`` calls, for this engine's argument types,
        without running any iteration (``solver.compiling.compile_for``)."""
        ...

    def run(self, n: int) -> None: ...

    def output_weights(self) -> np.ndarray: ...


# The first checkpoint after iteration 0 comes once this many samples have been seen.
FIRST_CHECKPOINT_SAMPLES = 1000


@dataclass
class CheckpointSchedule:
    """Checkpoints at geometrically spaced samples seen (ratio ``growth``) and every ``interval``
    solver seconds, whichever comes first; always one at iteration 0 and one at the end.

    After iteration 0 the first checkpoint waits until ``first_samples`` samples have been seen,
    whatever the data set's size: before that the model is barely trained, and every checkpoint
    cuts the run into one more chunk with a fixed cost (about 30 us of Python and dispatch).
    Engines whose iterations see no samples (coordinate descent: ``samples_per_iteration = 0``)
    are scheduled by iterations, growing from the first.
    """

    growth: float = 1.25
    interval: float | None = 1.0
    first_samples: int = FIRST_CHECKPOINT_SAMPLES

    def next_iteration(self, t: int, samples_per_iteration: int) -> int:
        """The iteration of the checkpoint after one at iteration ``t``."""
        if not samples_per_iteration:
            return max(t + 1, math.ceil(t * self.growth))
        samples = max(self.first_samples, math.ceil(t * samples_per_iteration * self.growth))
        return max(t + 1, math.ceil(samples / samples_per_iteration))


@dataclass
class NoImprovement:
    """Early stopping's rule, scikit-learn SGDClassifier's: a checkpoint whose validation score
    does not beat the best so far by more than ``tol`` counts as no improvement; ``patience``
    of them in a row stop the run. ``validate(weights)`` scores a model on the validation rows.

    The count starts once a checkpoint has improved on the first by more than ``tol``: the
    first checkpoints (a thousand samples apart, where scikit-learn's are an epoch apart) may all
    hold the trivial model, the majority class of imbalanced data (w8a), a plateau the run must
    cross, not stop on."""

    validate: Callable[[np.ndarray], float]
    patience: int
    tol: float
    higher_is_better: bool
    scores: list[float] = field(default_factory=list)
    best: float = -math.inf  # as "higher is better"
    since: int = 0
    moved: bool = False  # a checkpoint has improved on the first

    def exhausted(self, weights: np.ndarray) -> bool:
        """Score ``weights``; whether ``patience`` checkpoints in a row have not improved."""
        score = float(self.validate(weights))
        self.scores.append(score)
        key = score if self.higher_is_better else -score
        if not math.isfinite(key):  # a diverged model improves nothing
            key = -math.inf
        improved = key >= self.best + self.tol
        self.moved = self.moved or (improved and len(self.scores) > 1)
        self.since = 0 if improved or not self.moved else self.since + 1
        self.best = max(self.best, key)
        return self.since >= self.patience


@dataclass
class RunResult:
    trace: list[TracePoint]
    # "completed" | "callback" | "target_score" | "time_budget" | "converged" | "no_improvement"
    stop_reason: str
    solver_seconds: float
    compile_seconds: float = 0.0  # Engine.compile, before the solver clock started
    checkpoint_seconds: float = 0.0  # recording the checkpoints (their evaluation), off the clock


class _Checkpoints:
    """The checkpoints of one run: when the next is due, and the points recorded so far."""

    def __init__(
        self,
        engine: Engine,
        evaluate: Callable[[np.ndarray], tuple[float, float | None]],
        score_name: str | None,
        higher_is_better: bool,
        target_score: float | None,
        schedule: CheckpointSchedule,
        early_stop: NoImprovement | None = None,
    ):
        self.engine = engine
        self.evaluate = evaluate
        self.score_name = score_name
        self.higher_is_better = higher_is_better
        self.target_score = target_score
        self.schedule = schedule
        self.early_stop = early_stop
        self.no_improvement = False  # early_stop's patience ran out at the last checkpoint
        self.trace: list[TracePoint] = []
        self.pending: list[TracePoint] = []  # not yet passed to the callback
        self.next_iter = 0
        self.next_time = schedule.interval if schedule.interval else math.inf
        self.seconds = 0.0  # spent in record: what the trace costs beside the solver clock

    def due(self, solver_seconds: float, at_end: bool) -> bool:
        return self.engine.t >= self.next_iter or solver_seconds >= self.next_time or at_end

    def record(self, solver_seconds: float) -> bool:
        """Record a checkpoint at the engine's iteration; whether it reached the target score."""
        started = time.perf_counter()
        engine = self.engine
        weights = engine.output_weights()
        objective, score = self.evaluate(weights)
        accesses = getattr(engine, "data_accesses", None)
        gap = getattr(engine, "duality_gap", None)
        point = TracePoint(
            iteration=engine.t,
            samples_seen=engine.t * engine.samples_per_iteration,
            solver_seconds=solver_seconds,
            objective=float(objective),
            test_score=None if score is None else float(score),
            score_name=self.score_name if score is not None else None,
            nnz_weights=int(np.count_nonzero(weights)),
            data_accesses=None if accesses is None else int(accesses),
            duality_gap=None if gap is None else float(gap),
        )
        self.trace.append(point)
        self.pending.append(point)
        self.next_iter = self.schedule.next_iteration(engine.t, engine.samples_per_iteration)
        if self.schedule.interval:
            self.next_time = solver_seconds + self.schedule.interval
        if self.early_stop is not None and engine.t > 0:
            self.no_improvement = self.early_stop.exhausted(weights)
        self.seconds += time.perf_counter() - started
        return self._reached(point)

    def _reached(self, point: TracePoint) -> bool:
        if self.target_score is None or point.test_score is None:
            return False
        if self.higher_is_better:
            return point.test_score >= self.target_score
        return point.test_score <= self.target_score


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
    early_stop: NoImprovement | None = None,
) -> RunResult:
    """Advance ``engine`` to ``n_iter`` iterations in chunks of about ``chunk_seconds`` each.

    ``evaluate(weights) -> (objective, test_score)`` is called at checkpoints when given; without it
    no trace is recorded. ``early_stop`` (which needs ``evaluate``: it scores at the checkpoints)
    ends the run with stop_reason "no_improvement". A callback returning ``False`` stops the run.
    """
    schedule = schedule or CheckpointSchedule()
    compile_started = time.perf_counter()
    engine.compile()
    compile_seconds = time.perf_counter() - compile_started
    checkpoints = None
    if early_stop is not None and evaluate is None:
        raise ValueError("early_stop scores the model at checkpoints: it needs evaluate")
    if evaluate is not None:
        checkpoints = _Checkpoints(
            engine, evaluate, score_name, higher_is_better, target_score, schedule, early_stop
        )
        if checkpoints.record(0.0):
            return RunResult(checkpoints.trace, "target_score", 0.0, compile_seconds, checkpoints.seconds)
    solver_seconds = 0.0
    chunk = 16
    stop_reason = "completed"
    while engine.t < n_iter and stop_reason == "completed":
        stop_at = min(n_iter, engine.t + chunk)
        if checkpoints is not None:
            stop_at = min(stop_at, checkpoints.next_iter)
        started = time.perf_counter()
        done_before = engine.t
        engine.run(stop_at - engine.t)
        elapsed = time.perf_counter() - started
        solver_seconds += elapsed
        chunk = _next_chunk(
            chunk,
            elapsed / max(engine.t - done_before, 1),
            chunk_seconds,
            None if time_budget is None else time_budget - solver_seconds,
        )

        over_budget = time_budget is not None and solver_seconds >= time_budget
        converged = bool(getattr(engine, "converged", False))
        at_end = engine.t >= n_iter or over_budget or converged
        reached = (
            checkpoints is not None
            and checkpoints.due(solver_seconds, at_end)
            and checkpoints.record(solver_seconds)
        )
        no_improvement = checkpoints is not None and checkpoints.no_improvement
        stop_reason = _stop_reason(reached, over_budget, converged, no_improvement, engine.t < n_iter)
        if callback is not None:
            pending = checkpoints.pending if checkpoints is not None else []
            progress = Progress(
                engine.t, n_iter, engine.t * engine.samples_per_iteration, solver_seconds, list(pending)
            )
            pending.clear()
            if callback(progress) is False and stop_reason == "completed":
                stop_reason = "callback"
    if checkpoints is None:
        return RunResult([], stop_reason, solver_seconds, compile_seconds)
    return RunResult(checkpoints.trace, stop_reason, solver_seconds, compile_seconds, checkpoints.seconds)


def _next_chunk(chunk: int, per_iter: float, chunk_seconds: float, remaining: float | None) -> int:
    """The iterations of the next chunk: about ``chunk_seconds`` of work at ``per_iter`` seconds per
    iteration (never less than one), at most 8x the last one while the estimate comes from tiny
    chunks (2x took 6 chunks to reach 1,500 iterations; each costs ~20 us of Python and dispatch),
    and no more than the ``remaining`` time budget needs."""
    chunk = int(min(max(chunk_seconds / max(per_iter, 1e-9), 1), 8 * chunk + 16))
    if remaining is not None:
        chunk = max(1, min(chunk, int(remaining / max(per_iter, 1e-9)) + 1))
    return chunk


def _stop_reason(
    reached: bool, over_budget: bool, converged: bool, no_improvement: bool, unfinished: bool
) -> str:
    if reached:
        return "target_score"
    if over_budget and unfinished:
        return "time_budget"
    if converged and unfinished:
        return "converged"
    if no_improvement and unfinished:
        return "no_improvement"
    return "completed"


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
