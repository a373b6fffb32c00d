"""The reporter of a running fit: its checkpoints become the job's trace and progress in the
database, and its answers tell the solver when to stop (cancel, time budget, shutdown)."""

from __future__ import annotations

import enum
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.db.engine import SessionFactory, is_unavailable
from app.services.jobs import state as jobs
from app.services.jobs.trace_thinning import ThinnedTrace

log = logging.getLogger(__name__)


class Stop(enum.Enum):
    """Why a run stopped before the end of its fit."""

    CANCEL = "cancel"  # the user asked
    TIME_BUDGET = "time_budget"  # the job's own time_budget_s ran out, in wall-clock time
    TIME_LIMIT = "time_limit"  # the server's PGS_MAX_JOB_SECONDS ran out (the job gave no budget)
    SHUTDOWN = "shutdown"  # the server is stopping gracefully: the job goes back to the queue
    ORPHANED = "orphaned"  # the server died: its successor re-queues the job
    LOST = "lost"  # another process settled the job (the lease expired): this run is void


TRACE_FIELDS = (
    "iteration",
    "samples_seen",
    "solver_seconds",
    "objective",
    "test_score",
    "score_name",
    "nnz_weights",
    "data_accesses",
    "duality_gap",
)


def trace_row(point: Any) -> dict[str, Any]:
    """The stored columns of a solver TracePoint (extra fields a solver adds are not stored)."""
    row = {name: getattr(point, name) for name in TRACE_FIELDS}
    row["objective"] = _finite(row["objective"])
    row["test_score"] = _finite(row["test_score"])
    row["duality_gap"] = _finite(row["duality_gap"])
    return row


def _finite(v: float | None) -> float | None:
    return None if v is None or not math.isfinite(v) else float(v)


def running_metrics(
    points: list[Any], targets: list[float], higher_is_better: bool, score_name: str | None = None
) -> dict[str, Any]:
    """Metrics from the checkpoints so far (the final ones replace the test score at the end).
    The test score is ``test_<score_name>`` for the metric targets name (``score_name``), else
    test_accuracy (``higher_is_better``) or test_rmse."""
    from solver.tracing import time_to_target

    last = points[-1] if points else None
    if score_name is not None:
        score_key = f"test_{score_name}"
    else:
        score_key = "test_accuracy" if higher_is_better else "test_rmse"
    ttt = time_to_target(points, targets, higher_is_better)
    return {
        "solver_seconds": last.solver_seconds if last else 0.0,
        "objective": _finite(last.objective) if last else None,
        score_key: _finite(last.test_score) if last else None,
        "time_to_target": {repr(float(t)): v for t, v in ttt.items()},
    }


# Stops that end the job with the fit's last iterate as its model (the others leave the job to
# the queue or to another process).
KEEPS_MODEL = (Stop.CANCEL, Stop.TIME_BUDGET, Stop.TIME_LIMIT)


@dataclass
class Reporter:
    """The fit callback: thins and buffers trace points, writes progress every ``interval``
    seconds, and stops the fit (returns False) on a cancel request, a lost claim,
    ``interrupted()``, or at the wall-clock ``deadline`` (``time.monotonic()``; the stop is
    ``deadline_stop``)."""

    factory: SessionFactory
    job_id: int
    token: int
    interval: float
    targets: list[float]
    higher_is_better: bool
    # The process's own reasons to stop (a shutdown, a dead parent); see app/training/worker.py.
    interrupted: Callable[[], Stop | None] = lambda: None
    max_points: int = 10_000
    deadline: float = math.inf
    deadline_stop: Stop = Stop.TIME_LIMIT
    # The metric the targets name (the trace's test score); None: accuracy or RMSE.
    score_name: str | None = None
    trace: ThinnedTrace = field(init=False)
    # Points of the current fit seen so far (a study's sigma selection runs fits before it).
    fit_points: int = 0
    last_write: float = 0.0
    stop: Stop | None = None
    last: Any = None
    # Metrics of the job beyond the trace's (a study's sigma selection).
    extra: dict[str, Any] = field(default_factory=dict)
    # Wall time spent in this callback during the current fit (the job's progress_seconds).
    seconds: float = 0.0
    # What the progress counts ("fit", "select_sigma", "choose_threshold") and since when
    # (epoch seconds): the API's progress.phase, and the start of the rate its ETA carries on.
    phase: str = "fit"
    phase_started: float = field(default_factory=time.time)

    def __post_init__(self) -> None:
        self.trace = ThinnedTrace(self.max_points, self.targets, self.higher_is_better)

    def progress(self) -> jobs.Progress:
        p = self.last
        new, dropped = self.trace.take()
        return jobs.Progress(
            iteration=p.iteration if p else 0,
            n_iter=p.n_iter if p else None,
            samples_seen=p.samples_seen if p else 0,
            metrics={
                **running_metrics(self.trace.points, self.targets, self.higher_is_better, self.score_name),
                **self.extra,
                "phase": self.phase,
                "phase_started": self.phase_started,
            },
            points=[{"seq": seq, **trace_row(pt)} for seq, pt in new],
            dropped=dropped,
        )

    def stopped(self) -> bool:
        return self.stop is not None

    def start_fit(self) -> None:
        """The job's real fit begins: progress is its own from here on."""
        self.last = None
        self.fit_points = 0
        self.seconds = 0.0
        self._enter("fit")

    def _enter(self, phase: str) -> None:
        if phase != self.phase:
            self.phase, self.phase_started = phase, time.time()

    def add_points(self, points: list[Any]) -> None:
        for point in points:
            self.trace.add(point)
        self.fit_points += len(points)

    def __call__(self, progress: Any) -> bool | None:
        began = time.perf_counter()
        self.last = progress
        self._enter(progress.phase if progress.phase != "fit" else self.extra.get("phase", "fit"))
        self.add_points(progress.new_points)
        if self.stop is None:
            self.stop = self.interrupted() or self._out_of_time() or self._write_when_due()
        self.seconds += time.perf_counter() - began
        return False if self.stop is not None else None

    def _out_of_time(self) -> Stop | None:
        return self.deadline_stop if time.monotonic() >= self.deadline else None

    def _write_when_due(self) -> Stop | None:
        now = time.monotonic()
        if now - self.last_write < self.interval:
            return None
        p = self.progress()
        try:
            owned, cancel = jobs.record_progress(self.factory, self.job_id, self.token, p)
        except Exception as exc:
            if not is_unavailable(exc):
                raise
            # A database outage is not the job's fault: keep training; the points not written
            # go with the next write.
            log.warning("job %d: progress not written: database unavailable", self.job_id)
            self.trace.put_back([pt["seq"] for pt in p.points], p.dropped)
            self.last_write = now
            return None
        self.last_write = now
        if not owned:
            return Stop.LOST
        return Stop.CANCEL if cancel else None
