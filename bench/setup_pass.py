"""The set-up of a PGS fit on many rows against one pass over the stored values: what fit() spends
before (and besides) its updates, and its whole time to the target against the goal's bound.

    .venv/bin/python -m bench.setup_pass [--repeats 7] [--rows 494021]

On kdd_like (bench/datasets.py, canonical CSR), each repeat times, one after the other:

- one ``einsum`` pass over the stored values (``X.data``): the reference;
- ``solver._sparse.prepare``, the estimator's own pass over the values and their column indices
  (finite check, structure check, the statistics the step sizes read);
- ``PGSClassifier(sigma=1e-6, n_iter=N).fit(X, y)`` with N the iterations in which PGS p=2 reaches
  the target on this set (the exact optimum's test accuracy minus 0.5 points, as bench.peers
  finds it): its wall time, its solver seconds and, as the set-up, everything outside the solver
  clock (validation, labels, that pass, the engine, the fitted attributes).

The figures are medians over the repeats. The goal: fit() at most twice one pass plus the solver
time. Numba kernels are compiled before any clock starts.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from solver import PGSClassifier
from solver._sparse import prepare

from . import tables
from .datasets import kdd_like
from .end_to_end import N_ITER, SIGMA
from .results import add_results_dir, record


def one_repeat(X, y, n_iter: int) -> dict[str, float]:
    """One timing of each part, interleaved so that a busy spell of the machine hits them alike."""
    started = time.perf_counter()
    np.einsum("i,i->", X.data, X.data)
    one_pass = time.perf_counter() - started
    started = time.perf_counter()
    prepare(X)
    prepare_seconds = time.perf_counter() - started
    started = time.perf_counter()
    model = PGSClassifier(sigma=SIGMA, n_iter=n_iter, random_state=0).fit(X, y)
    fit_seconds = time.perf_counter() - started
    solver = float(model.solver_seconds_)
    outside = float(model.compile_seconds_ + model.checkpoint_seconds_)  # 0 once warm and untraced
    return {
        "one_pass": one_pass,
        "prepare": prepare_seconds,
        "fit": fit_seconds,
        "solver": solver,
        "setup": fit_seconds - solver - outside,
    }


def measure(X, y, X_test, y_test, n_iter: int, repeats: int) -> dict:
    PGSClassifier(sigma=SIGMA, n_iter=1000, random_state=0).fit(X, y)  # compile outside the clock
    runs = [one_repeat(X, y, n_iter) for _ in range(repeats)]
    medians = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
    accuracy = PGSClassifier(sigma=SIGMA, n_iter=n_iter, random_state=0).fit(X, y).score(X_test, y_test)
    return {
        "set": "kdd_like",
        "m": X.shape[0],
        "n": X.shape[1],
        "nnz": int(X.nnz),
        "sigma": SIGMA,
        "n_iter": n_iter,
        "test_accuracy": float(accuracy),
        "repeats": repeats,
        "medians": medians,
        "ratio": medians["fit"] / (medians["one_pass"] + medians["solver"]),
        "runs": runs,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--rows", type=int, default=494_021, help="kdd_like's rows (80%% train)")
    parser.add_argument("--n-iter", type=int, default=N_ITER, help="PGS iterations: those to the target")
    add_results_dir(parser)
    args = parser.parse_args(argv)
    recording = record("setup_pass", argv)
    results = measure(*kdd_like(m=args.rows), n_iter=args.n_iter, repeats=args.repeats)
    recording.save(results, args.results_dir)
    print(tables.setup_pass(results), flush=True)


if __name__ == "__main__":
    main()
