"""Warm starts (``init_model``): refreshing a model on new rows from the stored one against a cold
fit on the same rows, by the time each takes to reach the cold fit's final test accuracy.

    .venv/bin/python -m bench.warm_start [--datasets a9a w8a] [--solvers pgs sgd lbfgs] [--seeds 3]
                                         [--old-fraction 0.1]

For each data set and seed, the training rows are shuffled and split: the first ``old_fraction``
trains the stored model (a cold fit with the solver's defaults), the rest are the "new rows". On the new
rows, a cold fit (defaults) and a fit started from the stored model's weights
(``coef_init``/``intercept_init``, what a job's init_model does) run with the same iteration
budget, both traced on the test set at the usual checkpoints (solver seconds, without the
checkpoints' own cost). The target is the cold fit's final test accuracy; each fit's time to it is
the solver seconds of its first checkpoint after iteration 0 at or above it (the warm fit's
iteration 0 is the stored model itself, whose accuracy is recorded apart: the time measured is
that of a refresh, not of keeping the old model). Also recorded: the stored model's own
accuracy, and what the warm fit with its default budget (one epoch for PGS) reaches. Numba
kernels are compiled before any clock starts.
"""

from __future__ import annotations

import argparse
import statistics
from typing import Any

import numpy as np

from solver import LBFGSClassifier, PGSClassifier, SGDClassifier

from . import tables
from .datasets import load_real
from .results import add_results_dir, record

ESTIMATORS: dict[str, tuple[type, dict[str, Any]]] = {
    "pgs": (PGSClassifier, {"sigma": 1e-5}),
    "sgd": (SGDClassifier, {"sigma": 1e-5}),
    "lbfgs": (LBFGSClassifier, {"sigma": 1e-5, "tol": 1e-8}),
}


def _time_to(trace: list[Any], target: float) -> float | None:
    """Solver seconds of the first checkpoint whose test accuracy reaches ``target``."""
    reached = [
        p.solver_seconds
        for p in trace
        if p.iteration > 0 and p.test_score is not None and p.test_score >= target
    ]
    return reached[0] if reached else None


def run_case(name: str, solver: str, seed: int, data: tuple[Any, ...], old_fraction: float) -> dict[str, Any]:
    X, y, X_test, y_test = data
    cls, params = ESTIMATORS[solver]
    order = np.random.default_rng(seed).permutation(X.shape[0])
    cut = int(old_fraction * X.shape[0])
    old, new = order[:cut], order[cut:]
    stored = cls(**params, random_state=seed).fit(X[old], y[old])
    X_new, y_new, evaluation = X[new], y[new], (X_test, y_test)
    cold = cls(**params, random_state=seed).fit(X_new, y_new, eval_set=evaluation)
    target = float(cold.score(X_test, y_test))
    start = {"coef_init": stored.coef_, "intercept_init": stored.intercept_}
    warm = cls(**params, random_state=seed, n_iter=cold.n_iter_).fit(
        X_new, y_new, eval_set=evaluation, **start
    )
    refresh = cls(**params, random_state=seed).fit(X_new, y_new, **start)
    cold_seconds, warm_seconds = _time_to(cold.trace_, target), _time_to(warm.trace_, target)
    return {
        "dataset": name,
        "solver": solver,
        "seed": seed,
        "old_rows": int(old.shape[0]),
        "new_rows": int(new.shape[0]),
        "target": target,
        "stored_accuracy": float(stored.score(X_test, y_test)),
        "cold_seconds": cold_seconds,
        "cold_total_seconds": float(cold.solver_seconds_),
        "warm_seconds": warm_seconds,
        "ratio": None if cold_seconds is None or warm_seconds is None else warm_seconds / cold_seconds,
        "refresh_accuracy": float(refresh.score(X_test, y_test)),
        "refresh_seconds": float(refresh.solver_seconds_),
        "refresh_iterations": int(refresh.n_iter_),
        "cold_iterations": int(cold.n_iter_),
    }


def summarise(cases: list[dict[str, Any]]) -> dict[str, Any]:
    """The cases and, per (data set, solver), the median ratio over the seeds."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for case in cases:
        groups.setdefault((case["dataset"], case["solver"]), []).append(case)
    rows = []
    for (dataset, solver), group in groups.items():
        ratios = [c["ratio"] for c in group if c["ratio"] is not None]
        rows.append(
            {
                "dataset": dataset,
                "solver": solver,
                "seeds": len(group),
                "reached": len(ratios),
                "target": statistics.median(c["target"] for c in group),
                "stored_accuracy": statistics.median(c["stored_accuracy"] for c in group),
                "cold_seconds": statistics.median(c["cold_seconds"] or 0.0 for c in group),
                "cold_total_seconds": statistics.median(c["cold_total_seconds"] for c in group),
                "warm_seconds": (
                    statistics.median(c["warm_seconds"] for c in group if c["ratio"] is not None)
                    if ratios
                    else None
                ),
                "median_ratio": statistics.median(ratios) if ratios else None,
                "refresh_accuracy": statistics.median(c["refresh_accuracy"] for c in group),
                "refresh_seconds": statistics.median(c["refresh_seconds"] for c in group),
            }
        )
    return {"cases": cases, "rows": rows}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["a9a", "w8a"])
    parser.add_argument("--solvers", nargs="+", default=list(ESTIMATORS), choices=list(ESTIMATORS))
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument(
        "--old-fraction", type=float, default=0.1, help="share of the rows the stored model saw"
    )
    add_results_dir(parser)
    args = parser.parse_args(argv)
    recording = record("warm_start", argv)
    for cls, params in ESTIMATORS.values():  # compile outside the clock
        X, y, _, _ = load_real("agaricus")
        cls(**params, n_iter=2).fit(X[:100], y[:100], coef_init=np.zeros((1, X.shape[1])))
    cases = []
    for name in args.datasets:
        data = load_real(name)
        for solver in args.solvers:
            for seed in range(args.seeds):
                case = run_case(name, solver, seed, data, args.old_fraction)
                print(case, flush=True)
                cases.append(case)
    summary = summarise(cases)
    recording.save(summary, args.results_dir)
    print(tables.warm_start(summary), flush=True)


if __name__ == "__main__":
    main()
