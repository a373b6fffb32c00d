"""The goals the benchmarks judge, as one table: what, the target, the measured value, the verdict.

Each family module turns a record into its ``Goal`` rows; ``goals_table`` puts the rows of every
record at the top of docs/benchmarks.md, with the benchmark and the record they come from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .format import md_table, span


@dataclass(frozen=True)
class Goal:
    """One goal, judged in ``cases`` cases (data sets, setups, variants), ``met`` of which meet it."""

    what: str
    target: str
    measured: str
    met: int
    cases: int = 1

    @property
    def verdict(self) -> str:
        if self.cases == 1:
            return "met" if self.met else "missed"
        if self.met == self.cases:
            return f"met ({self.met} of {self.cases})"
        return f"missed (met in {self.met} of {self.cases})"


def ratio_goal(
    what: str, ratios: Sequence[float | None], goal: float, *, at_least: bool = False, note: str = ""
) -> Goal:
    """A goal on a ratio, judged in each case with a ratio (None: no ratio, not judged)."""
    judged = [r for r in ratios if r is not None]
    met = sum(r >= goal if at_least else r <= goal for r in judged)
    measured = span(judged, ".2f") + "x" + (f"; {note}" if note else "")
    return Goal(what, f"{'at least' if at_least else 'at most'} {goal:g}x", measured, met, len(judged))


def goals_table(goals: list[tuple[dict, str, Goal]]) -> str:
    """One row per (record, its name in docs/results/, goal), in the order given."""
    return md_table(
        ["goal", "target", "measured", "verdict", "benchmark (record)"],
        [
            [
                goal.what,
                goal.target,
                goal.measured,
                f"**{goal.verdict}**",
                f"`python -m bench.{record['benchmark']}` ([{name}.json](results/{name}.json))",
            ]
            for record, name, goal in goals
        ],
    )
