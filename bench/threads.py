"""Threads within one PGS job: a parallel minibatch against the serial kernel, same data, one process.

    NUMBA_CACHE_DIR=var/numba-cache .venv/bin/python -m bench.threads \
        [--sets w8a,kdd_like,rcv1_like] [--sigma 1e-5] [--batch-sizes 64,256,1024] \
        [--threads 2] [--repeats 5] [--max-epochs 10] [--kernel-samples 400000] [--results-dir DIR]

The parallel variant (``pgs_chunk_parallel``) runs each PGS iteration (Figure 1, lines 4-7) in
two parallel phases, with Numba's ``prange``:

1. the k sub-gradients of the minibatch at w_{t-1} (one dot product <w_{t-1}, x_i> per drawn row),
   over fixed contiguous slices of the k rows; each is written by one thread, the same value as
   the serial kernel's;
2. the update lambda <- lambda - lambda_t over the rows' non-zeros, split by coordinate: part p of
   ``parts`` updates the coordinates in [bounds[p], bounds[p + 1]) of every row (found by binary
   search in the row's sorted column indices), in the rows' order. So every coordinate of lambda
   gets the same additions in the same order as in the serial kernel (no two threads write one
   coordinate, nothing to reduce over n), and the parts' changes of S = sum |lambda_j|^q are
   summed in part order after the phase.

The result thus depends on ``parts`` alone (it fixes the order of S's sum), not on scheduling:
a run is reproducible for a given ``random_state`` and thread count (``parts`` = threads); with
one part it is the serial kernel's, bit for bit. The bounds split the update work evenly: they
are quantiles of the column counts of the first ``BOUNDS_ROWS`` rows. A lock-free (Hogwild-style)
update of shared coordinates would not be reproducible, and is not tried. The rest of the
iteration (S's periodic refresh, the scale C_t, the average) stays serial.

Batch sizes. The serial default is k = 1; a thread split pays only at a k large enough to
outweigh two fork-joins per iteration. PGS's ``t0="auto"`` counts iterations, so at the same t0 a
minibatch of k rows damps the steps as if t0 were k times larger in samples; the minibatch runs
therefore get t0 = max(1, t0_auto / k), t0_auto being what ``t0="auto"`` picks at k = 1, so that
w_t = (sum of the gradients seen) / ((samples + k t0) sigma) follows the same schedule in samples.

Measured, per set (sigma ``--sigma``, logistic loss, p = 2, the estimator's other defaults):

* the target: the exact optimum's test accuracy minus 0.5 points, as in ``bench.peers``;
* for k = 1 (serial) and each k of ``--batch-sizes`` with 1 and ``--threads`` threads: the
  iteration budget at which a traced fit (checkpoints at samples growing by 1.1) first reaches
  the target,
  then ``--repeats`` fresh fits of that budget, interleaved, their medians of fit() wall time and
  of ``solver_seconds_`` (the iterations alone), and the solver's microseconds per iteration;
* the speed-up of each threaded run over the serial one at the same k, and over serial k = 1
  (the configuration a user has without threads);
* reproducibility: two threaded fits with the same ``random_state`` give the same weights, bit for
  bit, and a one-part run equals the serial kernel's.

The machine's load average is in the record: on a machine whose other work holds a core, the
second thread competes with it.
"""

from __future__ import annotations

import argparse
import gc
import math
import statistics
import sys
import time
import warnings
from dataclasses import dataclass, field

import numba
import numpy as np
from numba import njit, prange
from sklearn.exceptions import ConvergenceWarning

from solver import PGSClassifier, warm_up
from solver._sparse import KernelData, prepare, row_extent
from solver.compiling import compile_for
from solver.losses import UNWEIGHTED, loss_derivative
from solver.pgs import (
    _NO_ROWS,
    S_STATUS,
    PGSState,
    _finish_iteration,
    _load_scalars,
    _move_coordinate,
    _row_dot,
    _store_scalars,
)
from solver.sampling import InMemoryRows

from . import tables
from .peers import load_set
from .results import add_results_dir, record
from .time_to_accuracy import TARGET_DROP, TO_TARGET, exact_optimum_p, exact_optimum_p2

DEFAULT_SETS = ("w8a", "kdd_like", "rcv1_like")
# The rows whose column counts set the parts' coordinate bounds.
BOUNDS_ROWS = 10_000


def log(*args) -> None:
    print(*args, file=sys.stderr, flush=True)


# -- the kernel ------------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _update_part(X, rows, grad, weights, hyp, inv_ref, prefix, lo, hi, s):
    """lambda -= sum_b grad[b] x_rows[b] on the coordinates in [lo, hi) alone, rows in order
    (Figure 1, line 7, restricted to one part); returns (S + the change of S, the largest term
    removed from S) for the S passed in as ``s``."""
    indices, values = X[1], X[0]
    q, quarters, average, bias_value = hyp.q, hyp.quarters, hyp.average, hyp.bias
    last = np.uint32(weights.shape[1] - 1)  # the constant feature's coordinate
    top = 0.0
    for b in range(rows.shape[0]):
        g = grad[b]
        if g == 0.0:
            continue
        start, end, base = row_extent(X, rows[b])
        # The row's first column index at or above lo (they increase: canonical CSR).
        pos = start + np.uint64(np.searchsorted(indices[start - base : end - base], lo))
        while pos < end and indices[pos - base] < hi:
            change, old = _move_coordinate(
                weights, indices[pos - base], -g * values[pos], q, quarters, inv_ref, prefix, average
            )
            s += change
            top = max(top, old)
            pos += np.uint64(1)
        if bias_value != 0.0 and lo <= last < hi:
            change, old = _move_coordinate(
                weights, last, -g * bias_value, q, quarters, inv_ref, prefix, average
            )
            s += change
            top = max(top, old)
    return s, top


@njit(cache=True, parallel=True)
def pgs_chunk_parallel(X, y, batches, hyp, weights, scal, bounds):
    """``solver.pgs.pgs_chunk`` (for k > 1) with the sub-gradients and the update of lambda each
    split over threads (the module docstring); ``bounds`` (uint32, parts + 1 entries from 0 to
    n_weights) give each part's coordinates."""
    code, bias_value, k, eps = hyp.loss, hyp.bias, hyp.k, hyp.epsilon
    parts = bounds.shape[0] - 1
    t, coef, sumq, ref, prefix, peak, wsum = _load_scalars(scal)
    inv_ref = 1.0 / ref
    grad = np.empty(k)
    part_sumq = np.empty(parts)
    part_peak = np.empty(parts)
    for it in range(batches.shape[0] // k):
        t += 1
        first = it * k
        # Figure 1, lines 4-6: each thread a contiguous slice of the minibatch.
        for b in prange(k):
            i = batches[first + b]
            dot, _ = _row_dot(X, i, weights, bias_value, False)
            grad[b] = loss_derivative(code, coef * dot, y[i], eps) / k
        # Line 7, each part its own coordinates, every row in order. Part 0 continues S; the
        # others start at 0 and are added in part order below.
        for part in prange(parts):
            s, top = _update_part(
                X,
                batches[first : first + k],
                grad,
                weights,
                hyp,
                inv_ref,
                prefix,
                bounds[part],
                bounds[part + 1],
                sumq if part == 0 else 0.0,
            )
            part_sumq[part] = s
            part_peak[part] = top
        sumq = part_sumq[0]
        for part in range(1, parts):
            sumq += part_sumq[part]
        for part in range(parts):
            peak = max(peak, part_peak[part])
        coef, sumq, ref, prefix, peak, wsum, diverged = _finish_iteration(
            hyp, weights, scal, t, sumq, ref, prefix, peak, wsum
        )
        inv_ref = 1.0 / ref
        if diverged:
            break
    _store_scalars(scal, t, coef, sumq, ref, prefix, peak, wsum)


def part_bounds(data: KernelData, n_weights: int, parts: int) -> np.ndarray:
    """Coordinate bounds (uint32, ``parts + 1`` of them, 0 to ``n_weights``) that split the update
    work evenly: quantiles of the column counts of the first ``BOUNDS_ROWS`` rows (the constant
    feature, last, is in every row)."""
    m = data.indptr.shape[0] - 1
    rows = min(BOUNDS_ROWS, m)
    counts = np.full(n_weights, float(rows))
    if not data.dense:
        counts[: data.n_features] = np.bincount(
            data.indices[: int(data.indptr[rows])], minlength=data.n_features
        )
    cumulative = np.cumsum(counts)
    cuts = np.searchsorted(cumulative, cumulative[-1] * np.arange(1, parts) / parts) + 1
    return np.concatenate([[0], np.minimum(cuts, n_weights), [n_weights]]).astype(np.uint32)


class _ThreadedState(PGSState):
    """A PGSState whose iterations run ``pgs_chunk_parallel`` over the parts of ``bounds``."""

    bounds: np.ndarray

    @classmethod
    def of(cls, state: PGSState, bounds: np.ndarray) -> _ThreadedState:
        threaded = cls.__new__(cls)
        threaded.__dict__.update(vars(state))
        threaded.bounds = bounds
        return threaded

    def compile(self) -> None:
        compile_for(
            pgs_chunk_parallel, self.X, self.y, _NO_ROWS, self.hyp, self.weights, self.scal, self.bounds
        )

    def run(self, batches, X=None, y=None, sample_weight=UNWEIGHTED) -> None:
        # The measured variant is the unweighted kernel: the benchmark's fits have no weights.
        if sample_weight.size:
            raise ValueError("the threaded PGS variant takes no row weights")
        rows = np.ascontiguousarray(batches, dtype=np.int64).view(np.uint64)
        pgs_chunk_parallel(
            self.X if X is None else X,
            self.y if y is None else y,
            rows,
            self.hyp,
            self.weights,
            self.scal,
            self.bounds,
        )
        if self.scal[S_STATUS]:
            raise FloatingPointError(f"PGS diverged at iteration {self.t}")


class _ThreadedPGSClassifier(PGSClassifier):
    """PGSClassifier on ``pgs_chunk_parallel`` with ``parts`` coordinate parts (set after
    construction: a variant under measurement, not a parameter)."""

    parts = 1

    def _engine_over(self, rows, rng):
        engine = super()._engine_over(rows, rng)
        data, _ = rows.template()
        bounds = part_bounds(data, engine.states[0].weights.shape[1], self.parts)
        engine.states = [_ThreadedState.of(state, bounds) for state in engine.states]
        return engine


def make(threads: int | None, **params) -> PGSClassifier:
    """The serial PGSClassifier (``threads`` None) or the parallel kernel on ``threads`` threads
    and as many parts."""
    if threads is None:
        return PGSClassifier(**params)
    est = _ThreadedPGSClassifier(**params)
    est.parts = threads
    return est


def use_threads(threads: int | None) -> None:
    """Numba's thread count for the next parallel regions: ``threads`` (None: the serial kernel,
    1), or as many as Numba has if fewer (the parts, and so the results, stay the same)."""
    numba.set_num_threads(min(threads or 1, numba.config.NUMBA_NUM_THREADS))


def fit(threads: int | None, X, y, eval_set=None, **params) -> PGSClassifier:
    """A fit of ``make(threads, **params)`` on ``threads`` threads (``use_threads``)."""
    use_threads(threads)
    return make(threads, **params).fit(X, y, eval_set=eval_set)


# -- the measurements ------------------------------------------------------------------------------


def fresh_state(threads: int | None, X, y, **params) -> PGSState:
    """The compiled state of a fit of ``make(threads, **params)`` before its first iteration,
    built as ``fit`` builds it (binary labels: y > 0 is the positive class)."""
    est = make(threads, **params)
    est.fit(X, y)  # checks the parameters and sets what the engine reads (n_features_in_, ...)
    data, stats = prepare(X)
    targets = np.where(y > 0, 1.0, -1.0)[None, :]
    state = est._engine_over(InMemoryRows(data, stats, targets), np.random.default_rng(0)).states[0]
    use_threads(threads)
    state.compile()
    return state


def kernel_times(
    X, y, k: int, t0: float, threads: int, iterations: int, repeats: int, sigma: float
) -> dict[str, list[float]]:
    """Microseconds per iteration of the kernels alone on the same pre-drawn minibatches, each
    repeat from a fresh state (the fit's set-up and sampling excluded): the serial kernel, the
    parallel one on 1 thread (the cost of the split itself) and on ``threads``; interleaved."""
    rng = np.random.default_rng(0)
    batches = rng.integers(0, X.shape[0], size=iterations * k).astype(np.int64)
    variants = {"serial": None, "1 thread": 1, f"{threads} threads": threads}
    times: dict[str, list[float]] = {label: [] for label in variants}
    for _ in range(repeats):
        for label, parts in variants.items():
            state = fresh_state(parts, X, y, batch_size=k, t0=t0, sigma=sigma, n_iter=1, random_state=0)
            gc.collect()
            started = time.perf_counter()
            state.run(batches)
            times[label].append((time.perf_counter() - started) / iterations * 1e6)
    return times


@dataclass
class Run:
    """One configuration's time to the target: serial (``threads`` None) or threaded, at k."""

    k: int
    threads: int | None
    t0: float | str
    budget: int | None = None  # iterations to the target (None: not reached)
    walls: list[float] = field(default_factory=list)  # fit() wall seconds
    solvers: list[float] = field(default_factory=list)  # solver_seconds_

    def params(self, sigma: float, n_iter: int) -> dict:
        return {"batch_size": self.k, "t0": self.t0, "sigma": sigma, "n_iter": n_iter, "random_state": 0}

    def find_budget(self, data, sigma: float, target: float, max_epochs: float) -> None:
        """The iteration of the first checkpoint (growth 1.1) that reaches ``target``, untimed.
        Checkpoints follow the samples seen alone (no ``checkpoint_interval``), so a slower run
        is not read at other iterations."""
        X, y, Xt, yt = data
        n_iter = max(1, math.ceil(max_epochs * X.shape[0] / self.k))
        est = fit(
            self.threads,
            X,
            y,
            eval_set=(Xt, yt),
            target_score=target,
            checkpoint_interval=None,
            **TO_TARGET,
            **self.params(sigma, n_iter),
        )
        if est.stop_reason_ == "target_score":
            self.budget = est.n_iter_

    def record(self, m: int) -> dict:
        return {
            "k": self.k,
            "threads": self.threads or 1,
            "t0": self.t0,
            "budget": self.budget,
            "epochs": None if self.budget is None else self.budget * self.k / m,
            "fit_seconds": statistics.median(self.walls) if self.walls else None,
            "solver_seconds": statistics.median(self.solvers) if self.solvers else None,
            "fit_runs": self.walls,
            "solver_runs": self.solvers,
        }


def time_runs(runs: list[Run], X, y, sigma: float, repeats: int) -> None:
    """``repeats`` fresh fits of each run's budget, interleaved (the order rotated per repeat)."""
    reached = [run for run in runs if run.budget is not None]
    for rep in range(repeats):
        shift = rep % max(len(reached), 1)
        for run in reached[shift:] + reached[:shift]:
            est = make(run.threads, **run.params(sigma, run.budget))
            use_threads(run.threads)
            gc.collect()
            started = time.perf_counter()
            est.fit(X, y)
            run.walls.append(time.perf_counter() - started)
            run.solvers.append(est.solver_seconds_)


def reproducibility(X, y, k: int, t0: float, sigma: float, threads: int, n_iter: int) -> dict:
    """Whether two threaded fits with one random_state give the same weights, and a one-part
    fit the serial kernel's, bit for bit; and how far the threaded weights are from the serial."""
    params = {"batch_size": k, "t0": t0, "sigma": sigma, "n_iter": n_iter, "random_state": 0}
    first, second = (fit(threads, X, y, **params) for _ in range(2))
    serial, one_part = fit(None, X, y, **params), fit(1, X, y, **params)

    def weights(est):
        return np.concatenate([est.coef_.ravel(), est.intercept_])

    return {
        "iterations": n_iter,
        "same_weights_twice": bool(np.array_equal(weights(first), weights(second))),
        "one_part_equals_serial": bool(np.array_equal(weights(one_part), weights(serial))),
        "max_difference_to_serial": float(np.max(np.abs(weights(first) - weights(serial)))),
    }


def bench_set(name: str, args) -> dict:
    data = load_set(name)
    X, y, Xt, yt = data
    m = X.shape[0]
    _, stats = prepare(X)
    s = math.sqrt(stats.sum_sq / stats.n_values)  # PGS's intercept_scaling="auto"
    log(f"[{name}] exact optimum ...")
    optimum = exact_optimum_p(
        X, y, Xt, yt, args.sigma, 2.0, s, exact_optimum_p2(X, y, Xt, yt, args.sigma, s).weights
    )
    target = optimum.accuracy - TARGET_DROP
    t0_auto = fit(None, X, y, sigma=args.sigma, n_iter=1, random_state=0).t0_
    log(f"  optimum accuracy {optimum.accuracy:.4f}, target {target:.4f}, t0 at k = 1 {t0_auto:.4g}")
    baseline = Run(1, None, "auto")
    runs = [baseline]
    for k in args.batch_sizes:
        t0 = max(1.0, t0_auto / k)
        runs += [Run(k, None, t0), Run(k, args.threads, t0)]
    for run in runs:
        run.find_budget(data, args.sigma, target, args.max_epochs)
        log(f"  k={run.k} threads={run.threads or 1}: budget {run.budget}")
    time_runs(runs, X, y, args.sigma, args.repeats)
    rows = []
    for k in args.batch_sizes:
        t0 = max(1.0, t0_auto / k)
        iterations = max(10, min(2000, args.kernel_samples // k))
        kernels = kernel_times(X, y, k, t0, args.threads, iterations, args.repeats, args.sigma)
        serial, threaded = (run for run in runs if run.k == k)
        budget = threaded.budget or serial.budget or iterations
        rows.append(
            {
                "k": k,
                "t0": t0,
                "kernel_iterations": iterations,
                "kernel_us_per_iteration": {label: statistics.median(v) for label, v in kernels.items()},
                "kernel_runs": kernels,
                "serial": serial.record(m),
                "threaded": threaded.record(m),
                "reproducibility": reproducibility(X, y, k, t0, args.sigma, args.threads, budget),
            }
        )
        log(f"  k={k}: kernel us/iteration {rows[-1]['kernel_us_per_iteration']}")
    return {
        "set": name,
        "m": m,
        "n": X.shape[1],
        "nnz": int(X.nnz),
        "sigma": args.sigma,
        "optimum_accuracy": optimum.accuracy,
        "target": target,
        "t0_auto": t0_auto,
        "baseline": baseline.record(m),
        "rows": rows,
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=",".join(DEFAULT_SETS))
    parser.add_argument("--sigma", type=float, default=1e-5)
    parser.add_argument("--batch-sizes", default="64,256,1024")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--max-epochs", type=float, default=10.0)
    parser.add_argument(
        "--kernel-samples",
        type=int,
        default=400_000,
        help="samples per timed kernel run (10 to 2,000 iterations)",
    )
    add_results_dir(parser)
    args = parser.parse_args(argv)
    args.batch_sizes = [int(k) for k in args.batch_sizes.split(",") if k]
    if args.threads < 2 or min(args.batch_sizes) < 2:
        parser.error("--threads and every batch size must be at least 2")
    recording = record("threads", argv)
    warnings.simplefilter("ignore", ConvergenceWarning)
    warm_up(("pgs",))
    cases: list[dict] = []
    results = {"threads": args.threads, "repeats": args.repeats, "target_drop": TARGET_DROP, "cases": cases}
    for name in (s for s in args.sets.split(",") if s):
        cases.append(bench_set(name, args))
        results["threading_layer"] = numba.threading_layer()
        print(tables.threads_case(cases[-1], args.threads), flush=True)
        path = recording.save(results, args.results_dir)  # each set as soon as it is done
        gc.collect()
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
