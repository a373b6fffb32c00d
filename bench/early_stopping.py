"""Early stopping: how long a run goes on after it has reached the accuracy it ends with.

    .venv/bin/python -m bench.early_stopping [--datasets a9a w8a rcv1_like german_credit]
                                             [--solvers pgs sgd] [--seeds 0 1 2 3 4]

Each solver fits with ``early_stopping=True`` and its defaults otherwise (validation_fraction 0.2,
n_iter_no_change 5, tol 1e-3, no n_iter) on the train part of each data set, with the test part as
``eval_set``: the trace records the test accuracy at every checkpoint. The goal's ratio is the
run's solver seconds over the solver seconds of the first checkpoint whose test accuracy reached
the accuracy the run ends with (its last checkpoint is the returned model). The same fit without
early stopping (the solver's default length, every training row) is timed beside it. The Numba
kernels are compiled before any clock starts.

german_credit.csv has 13 text columns, one-hot encoded (and its 7 numeric ones standardised) by
``solver.make_preprocessor`` fitted on its train part, a seeded 75/25 split of its 1,000 rows.
rcv1_like is ``bench.datasets.rcv1_like``'s generator with its defaults.
"""

from __future__ import annotations

import argparse
import csv
from typing import Any

import numpy as np
import scipy.sparse as sp

from solver import PGSClassifier, SGDClassifier, make_preprocessor
from solver.tracing import time_to_target

from .datasets import DATA_DIR, load_real, rcv1_like
from .results import add_results_dir, record
from .tables.early_stopping import early_stopping

ESTIMATORS = {"pgs": PGSClassifier, "sgd": SGDClassifier}
DATASETS = ("a9a", "w8a", "rcv1_like", "german_credit")
# german_credit.csv: 20 columns, then the label (1 good, 2 bad); these are its text columns.
GERMAN_TEXT_COLUMNS = (0, 2, 3, 5, 6, 8, 9, 11, 13, 14, 16, 18, 19)


def load(name: str) -> tuple[Any, np.ndarray, Any, np.ndarray]:
    if name == "rcv1_like":
        return rcv1_like()
    if name == "german_credit":
        return german_credit()
    return load_real(name)


def german_credit() -> tuple[Any, np.ndarray, Any, np.ndarray]:
    with open(DATA_DIR / "german_credit.csv", newline="") as handle:
        rows = list(csv.reader(handle))
    raw = np.array([row[:-1] for row in rows], dtype=object)
    for j in set(range(raw.shape[1])) - set(GERMAN_TEXT_COLUMNS):
        raw[:, j] = raw[:, j].astype(np.float64)
    y = np.where(np.array([row[-1] for row in rows]) == "1", 1.0, -1.0)
    order = np.random.default_rng(0).permutation(len(rows))
    cut = int(0.75 * len(rows))
    train, test = order[:cut], order[cut:]
    pre = make_preprocessor(raw.shape[1], categorical=GERMAN_TEXT_COLUMNS).fit(raw[train])
    encode = lambda part: sp.csr_matrix(np.asarray(pre.transform(raw[part]), dtype=np.float64))  # noqa: E731
    X, X_test = encode(train), encode(test)
    return X, y[train], X_test, y[test]


def run(name: str, solvers: list[str], seeds: list[int]) -> list[dict[str, Any]]:
    X, y, X_test, y_test = load(name)
    rows = []
    for key in solvers:
        cls = ESTIMATORS[key]
        cls(n_iter=2).fit(X[:100], y[:100], eval_set=(X_test[:10], y_test[:10]))  # compile
        for seed in seeds:
            est = cls(early_stopping=True, random_state=seed).fit(X, y, eval_set=(X_test, y_test))
            final = est.trace_[-1]
            reached = time_to_target(est.trace_, [final.test_score], True)[final.test_score]
            full = cls(random_state=seed).fit(X, y, eval_set=(X_test, y_test))
            rows.append(
                {
                    "dataset": name,
                    "solver": key,
                    "seed": seed,
                    "m": int(X.shape[0]),
                    "stop_reason": est.stop_reason_,
                    "epochs": est.n_iter_ * getattr(est, "batch_size", 1) / (0.8 * X.shape[0]),
                    "accuracy": final.test_score,
                    "solver_seconds": est.solver_seconds_,
                    "reached_seconds": reached,
                    "checkpoints": len(est.trace_),
                    "checkpoint_seconds": est.checkpoint_seconds_,
                    "full_accuracy": full.trace_[-1].test_score,
                    "full_solver_seconds": full.solver_seconds_,
                }
            )
            print(rows[-1], flush=True)
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--solvers", nargs="+", default=list(ESTIMATORS), choices=list(ESTIMATORS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    add_results_dir(parser)
    args = parser.parse_args(argv)
    recording = record("early_stopping", argv)
    results = [row for name in args.datasets for row in run(name, args.solvers, args.seeds)]
    recording.save(results, args.results_dir)
    print(early_stopping(results))


if __name__ == "__main__":
    main()
