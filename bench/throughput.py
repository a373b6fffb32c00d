"""PGS updates per second against a bare Numba loop that only does the sparse dot product and axpy.

    .venv/bin/python -m bench.throughput [--repeats 5] [--iterations 2000000]

Both loops visit the same pre-drawn sample indices of the synthetic RCV1-like set, so the ratio
isolates what PGS adds per update: the loss derivative, lambda and phi(lambda), the incremental
||lambda||_q^q, the lazy average, the scalar C_t with its projection, and (p < 2) one pow() per
touched coordinate. For scale, scikit-learn's SGDClassifier (log loss, its own shuffled epochs,
``fit`` with as many epochs as the updates make) runs in the same loop of repeats. Medians over
interleaved repeats.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from numba import njit
from sklearn.linear_model import SGDClassifier

from solver._sparse import as_kernel_data
from solver.losses import LOSSES
from solver.pgs import PGSState

from . import tables
from .datasets import rcv1_like
from .results import add_results_dir, record


@njit(cache=True)
def bare_sgd_loop(data, indices, indptr, y, order, w, eta):
    """The floor: per sample one sparse dot product and one sparse axpy, nothing else."""
    for i in order:
        dot = 0.0
        for pos in range(indptr[i], indptr[i + 1]):
            dot += data[pos] * w[indices[pos]]
        g = eta * (y[i] - dot)
        for pos in range(indptr[i], indptr[i + 1]):
            w[indices[pos]] += g * data[pos]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=2_000_000)
    add_results_dir(parser)
    args = parser.parse_args(argv)
    recording = record("throughput", argv)

    X, y, _, _ = rcv1_like()
    data = as_kernel_data(X)
    order = np.random.default_rng(0).integers(0, X.shape[0], size=args.iterations)
    nnz = float(np.diff(X.indptr)[order].mean())

    def bare():
        w = np.zeros(X.shape[1])
        # Unsigned rows, like the kernels' index arrays (solver/_sparse.py): no sign tests either.
        bare_sgd_loop(data.data, data.indices, data.indptr, y, order.view(np.uint64), w, 1e-3)

    def pgs(p, average):
        state = PGSState(
            data,
            y,
            loss=LOSSES["logistic"],
            p=p,
            sigma=1e-6,
            radius=1e3,
            fit_intercept=True,
            batch_size=1,
            t0=1e4,
            epsilon=1.0,
            average=average,
            average_power=1.0,
        )
        state.run(order)

    def sklearn_sgd():
        epochs = max(1, round(args.iterations / X.shape[0]))
        SGDClassifier(loss="log_loss", alpha=1e-6, max_iter=epochs, tol=None, random_state=0).fit(X, y)
        return epochs * X.shape[0]

    variants = {
        "bare dot+axpy loop": bare,
        "sklearn SGDClassifier (fit, whole epochs)": sklearn_sgd,
        "PGS p=2, average": lambda: pgs(2.0, True),
        "PGS p=2, last iterate": lambda: pgs(2.0, False),
        "PGS p=1.8, average": lambda: pgs(1.8, True),
        "PGS p=1.8, last iterate": lambda: pgs(1.8, False),
    }
    for fn in variants.values():  # compile / load from cache outside the timings
        fn()
    # Seconds per update of each repeat (SGDClassifier runs whole epochs, not args.iterations).
    per_update: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(args.repeats):
        for name, fn in variants.items():
            start = time.perf_counter()
            updates = fn() or args.iterations
            per_update[name].append((time.perf_counter() - start) / updates)
    results = {
        "data": "rcv1_like",
        "m": X.shape[0],
        "n": X.shape[1],
        "nnz_per_update": nnz,
        "updates_per_run": args.iterations,
        "repeats": args.repeats,
        "ns_per_update": {name: [t * 1e9 for t in ts] for name, ts in per_update.items()},
    }
    path = recording.save(results, args.results_dir)
    print(tables.throughput(results))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
