"""sigma="auto" against scikit-learn's LogisticRegressionCV: test accuracy and wall time, one run.

    .venv/bin/python -m bench.sigma_auto [--datasets a9a w8a] [--estimators pgs lbfgs]
                                         [--lrcv-solvers lbfgs saga]

Each estimator fits with ``sigma="auto"`` and its defaults (5 stratified folds below 100,000 rows,
the data-derived grid, patience 3), on the train part of the data set (``bench.datasets``); the
Numba kernels are compiled before the clock starts. LogisticRegressionCV gets the same folds (the
same StratifiedKFold, seed 0) and every point of the same grid, as C = 1 / (sigma m_fold) (its C
multiplies the summed loss, sigma the mean one), with accuracy as its score. Prints one line per
run: chosen sigma, test accuracy, wall seconds and, for sigma="auto", the points its path fitted.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.linear_model import LogisticRegressionCV
from sklearn.model_selection import StratifiedKFold

from solver import LBFGSClassifier, PGSClassifier
from solver.estimators.sigma_search import DEFAULT_FOLDS
from solver.selection import default_grid

from .datasets import load_real

ESTIMATORS = {"pgs": PGSClassifier, "lbfgs": LBFGSClassifier}


def run(name: str, estimators: list[str], lrcv_solvers: list[str]) -> None:
    X, y, X_test, y_test = load_real(name)
    for cls in ESTIMATORS.values():  # compile outside the clock
        cls(sigma=1e-3, n_iter=2).fit(X[:100], y[:100])
    for key in estimators:
        start = time.perf_counter()
        est = ESTIMATORS[key](sigma="auto", random_state=0).fit(X, y)
        wall = time.perf_counter() - start
        print(
            f"{name} {key:6s} sigma_={est.sigma_:.3g} accuracy={est.score(X_test, y_test):.4f} "
            f"wall={wall:.2f}s points={len(est.selection_.path)} ({est.selection_.stop_reason})"
        )
    grid = default_grid(X, y[None, :], "logistic")
    m_fold = X.shape[0] * (DEFAULT_FOLDS - 1) / DEFAULT_FOLDS
    # scikit-learn's liblinear/saga refuse 64-bit sparse indices.
    X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)
    for solver in lrcv_solvers:
        start = time.perf_counter()
        cv = StratifiedKFold(DEFAULT_FOLDS, shuffle=True, random_state=0)
        lrcv = LogisticRegressionCV(
            Cs=1.0 / (grid * m_fold), cv=cv, solver=solver, scoring="accuracy", max_iter=1000
        ).fit(X, y)
        wall = time.perf_counter() - start
        print(
            f"{name} LogisticRegressionCV({solver}) sigma={1.0 / (lrcv.C_[0] * m_fold):.3g} "
            f"accuracy={lrcv.score(X_test, y_test):.4f} wall={wall:.2f}s points={len(grid)}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["a9a", "w8a"])
    parser.add_argument("--estimators", nargs="+", default=list(ESTIMATORS), choices=list(ESTIMATORS))
    parser.add_argument("--lrcv-solvers", nargs="+", default=["lbfgs", "saga"])
    args = parser.parse_args()
    for name in args.datasets:
        run(name, args.estimators, args.lrcv_solvers)


if __name__ == "__main__":
    main()
