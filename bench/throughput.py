"""PGS updates per second against a bare Numba loop that only does the sparse dot product and axpy.

    .venv/bin/python -m bench.throughput [--repeats 5] [--iterations 2000000]

Both loops visit the same pre-drawn sample indices of the synthetic RCV1-like set, so the ratio
isolates what PGS adds per update: the loss derivative, lambda and phi(lambda), the incremental
||lambda||_q^q, the lazy average, the scalar C_t with its projection, and (p < 2) one pow() per
touched coordinate. Medians over interleaved repeats.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from numba import njit

from solver._sparse import as_kernel_data
from solver.losses import LOSSES
from solver.pgs import PGSState

from .datasets import rcv1_like


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


def _time(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=2_000_000)
    args = parser.parse_args(argv)

    X, y, _, _ = rcv1_like()
    data = as_kernel_data(X)
    order = np.random.default_rng(0).integers(0, X.shape[0], size=args.iterations)
    nnz = float(np.diff(X.indptr)[order].mean())
    print(f"rcv1_like: {X.shape[0]} x {X.shape[1]}, {nnz:.1f} non-zeros per visited row, "
          f"{args.iterations} updates per run, median of {args.repeats}")

    def bare():
        w = np.zeros(X.shape[1])
        # Unsigned rows, like the kernels' index arrays (solver/_sparse.py): no sign tests either.
        bare_sgd_loop(data.data, data.indices, data.indptr, y, order.view(np.uint64), w, 1e-3)

    def pgs(p, average):
        state = PGSState(data, y, loss_code=LOSSES["logistic"].code, p=p, sigma=1e-6,
                         radius=1e3, fit_intercept=True, batch_size=1, t0=1e4, epsilon=1.0,
                         average=average)
        state.run(order)

    variants = {
        "bare dot+axpy loop": bare,
        "PGS p=2, average": lambda: pgs(2.0, True),
        "PGS p=2, last iterate": lambda: pgs(2.0, False),
        "PGS p=1.8, average": lambda: pgs(1.8, True),
        "PGS p=1.8, last iterate": lambda: pgs(1.8, False),
    }
    for fn in variants.values():  # compile / load from cache outside the timings
        fn()
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(args.repeats):
        for name, fn in variants.items():
            times[name].append(_time(fn))
    floor = statistics.median(times["bare dot+axpy loop"])
    print("| loop | median s | updates/s | non-zeros/s | throughput vs bare |")
    print("|---|---|---|---|---|")
    for name, ts in times.items():
        med = statistics.median(ts)
        rate = args.iterations / med
        print(f"| {name} | {med:.3f} | {rate / 1e6:.2f} M | {rate * nnz / 1e6:.0f} M | "
              f"{floor / med:.2f} |")


if __name__ == "__main__":
    main()
