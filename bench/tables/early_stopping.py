"""Early stopping (bench.early_stopping): how far past the accuracy it ends with a run goes."""

from __future__ import annotations

import math
from typing import Any

from .format import md_table, median_of, sig3
from .goals import Goal, ratio_goal

# The goal: solver seconds at most 1.3x the time at which the run first reached the
# accuracy it ends with.
GOAL_RATIO = 1.3


def _cases(results: list[dict[str, Any]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    cases: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in results:
        cases.setdefault((row["dataset"], row["solver"]), []).append(row)
    return cases


def _ratio(row: dict[str, Any]) -> float:
    """Infinite for a run that ends with the accuracy of its start (the trivial model)."""
    reached = row["reached_seconds"]
    return math.inf if not reached else row["solver_seconds"] / reached


def _median_ratio(rows: list[dict[str, Any]]) -> float:
    return median_of([_ratio(row) for row in rows])


def early_stopping(results: list[dict[str, Any]]) -> str:
    """Per data set and solver, medians over the seeds: the early-stopped run (stop reasons,
    epochs, test accuracy, solver seconds, when it first reached that accuracy, their ratio, what
    its checkpoints cost off the clock) beside the run of the solver's default length."""
    table = []
    for (dataset, solver), rows in _cases(results).items():
        reasons = sorted({row["stop_reason"] for row in rows})
        ratio = _median_ratio(rows)
        table.append(
            [
                dataset,
                solver,
                len(rows),
                ", ".join(reasons),
                f"{median_of([row['epochs'] for row in rows]):.2f}",
                f"{median_of([row['accuracy'] for row in rows]):.4f}",
                sig3(median_of([row["solver_seconds"] for row in rows])),
                sig3(median_of([row["reached_seconds"] or 0.0 for row in rows])),
                f"{ratio:.2f}",
                sig3(median_of([row["checkpoint_seconds"] for row in rows])),
                f"{median_of([row['full_accuracy'] for row in rows]):.4f}",
                sig3(median_of([row["full_solver_seconds"] for row in rows])),
            ]
        )
    return md_table(
        [
            "data set",
            "solver",
            "seeds",
            "stop reason",
            "epochs",
            "test accuracy",
            "solver s",
            "first reached (s)",
            "ratio",
            "checkpoints s (off the clock)",
            "default length: accuracy",
            "default length: solver s",
        ],
        table,
    )


def early_stopping_goals(results: list[dict[str, Any]]) -> list[Goal]:
    cases = _cases(results)
    return [
        ratio_goal(
            "Early stopping: solver seconds over the time the run first reached the accuracy it "
            "ends with (median over seeds; a9a, w8a, rcv1_like, german_credit; pgs and sgd)",
            [_median_ratio(rows) for rows in cases.values()],
            GOAL_RATIO,
        )
    ]
