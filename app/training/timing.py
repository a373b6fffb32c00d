"""Where a job's run spends its wall time beside the solver: the ``overhead_seconds`` of its metrics
and their parts.

The run's wall time goes from the worker's claim to the model's files written (the final database
write that records them cannot time itself). ``overhead_seconds`` is that wall time minus
``solver_seconds``; its parts are disjoint spans of it, measured where they happen:

* ``load_seconds``: reading the job and its rows (the database, the store's shards) into memory;
* ``preprocessing_seconds``: fitting the job's preprocessing and transforming the rows with it;
* ``compile_seconds``: loading (or compiling) the solver's kernels, before its clock starts;
* ``checkpoint_seconds``: the trace's checkpoints (objective and test score on their samples);
* ``progress_seconds``: the fit's callback: writing progress to the database, noticing a cancel;
* ``final_metrics_seconds``: the returned model's test score on every evaluation row;
* ``model_write_seconds``: the model's files written to the store;
* ``other_seconds``: the rest, so that the parts sum to ``overhead_seconds`` (building the
  estimator, its checks of the data before the solver starts, a study's sigma selection, a
  decision threshold's validation fit, the model's export, Python between the steps).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

# The measured parts, in the order the metrics list them (``other`` is what remains).
PARTS = (
    "load",
    "preprocessing",
    "compile",
    "checkpoint",
    "progress",
    "final_metrics",
    "model_write",
)


@dataclass
class JobClock:
    """The wall clock of one run and its parts. A part timed inside another (preprocessing during
    the load) is taken out of the enclosing one, so the parts never overlap."""

    started: float = field(default_factory=time.perf_counter)
    seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(PARTS, 0.0))
    solver_seconds: float = 0.0
    _open: list[str] = field(default_factory=list)

    @contextmanager
    def part(self, name: str) -> Iterator[None]:
        """Time the block as part ``name``."""
        self._open.append(name)
        began = time.perf_counter()
        try:
            yield
        finally:
            elapsed = time.perf_counter() - began
            self._open.pop()
            self.add(name, elapsed)
            if self._open:
                self.seconds[self._open[-1]] -= elapsed

    def add(self, name: str, seconds: float) -> None:
        """Count ``seconds`` measured elsewhere (by the solver, the reporter) as part ``name``."""
        self.seconds[name] += seconds

    def fitted(self, estimator: object, progress_seconds: float) -> None:
        """The solver's own clocks of a fit, and the time its callback took."""
        self.solver_seconds = float(estimator.solver_seconds_)  # type: ignore[attr-defined]
        self.add("compile", float(estimator.compile_seconds_))  # type: ignore[attr-defined]
        self.add("checkpoint", float(estimator.checkpoint_seconds_))  # type: ignore[attr-defined]
        self.add("progress", progress_seconds)

    def overhead(self) -> dict[str, float]:
        """``overhead_seconds`` (the wall time so far minus the solver's) and its parts."""
        overhead = time.perf_counter() - self.started - self.solver_seconds
        metrics = {f"{name}_seconds": seconds for name, seconds in self.seconds.items()}
        # Never below 0: the measured parts are disjoint spans of the wall time (up to rounding).
        metrics["other_seconds"] = max(0.0, overhead - sum(self.seconds.values()))
        return {"overhead_seconds": sum(metrics.values()), **metrics}
