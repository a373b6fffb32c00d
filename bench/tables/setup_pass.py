"""bench.setup_pass's record: PGS's set-up on many rows against one pass over the stored values."""

from __future__ import annotations

from .format import md_table, sig3
from .goals import Goal, ratio_goal

# fit() to the target at most twice the time of one pass over the values plus the solver's.
GOAL_RATIO = 2.0


def setup_pass(r: dict) -> str:
    t = r["medians"]
    return md_table(
        [
            "set (m x n, values)",
            "one einsum pass, s",
            "prepare (the estimator's pass), s",
            "fit() set-up outside the solver, s",
            "solver, s",
            "fit() total, s",
            "set-up / one pass",
            "fit() / (one pass + solver)",
        ],
        [
            [
                f"{r['set']} ({r['m']:,} x {r['n']}, {r['nnz']:,})",
                sig3(t["one_pass"]),
                sig3(t["prepare"]),
                sig3(t["setup"]),
                sig3(t["solver"]),
                sig3(t["fit"]),
                f"{t['setup'] / t['one_pass']:.2f}x",
                f"{r['ratio']:.2f}x",
            ]
        ],
    ) + (
        f"\n\nPGS p=2, sigma {r['sigma']:g}, {r['n_iter']:,} iterations (test accuracy "
        f"{r['test_accuracy']:.4f}); medians of {r['repeats']} interleaved repeats."
    )


def _passes(r: dict, part: str) -> str:
    """A part's median time in einsum passes over the values: 'prepare' or 'setup'."""
    return f"{r['medians'][part] / r['medians']['one_pass']:.2f}"


FIGURES = {("setup_pass", "passes"): _passes}


def setup_pass_goals(r: dict) -> list[Goal]:
    return [
        ratio_goal(
            "PGS fit() on kdd_like to its target against one einsum pass over the values plus the solver",
            [r["ratio"]],
            GOAL_RATIO,
            note=f"set-up {r['medians']['setup'] / r['medians']['one_pass']:.2f}x one pass",
        )
    ]
