"""Coordinate descent for L1-regularised losses: SCD (L1 paper, Algorithm 2) and its greedy twin GCD.

Objective, eq. (1) of Shalev-Shwartz & Tewari (JMLR 2011), with lambda called ``sigma`` here::

    P(w) = (1/m) sum_i L(<w, x_i> + b; y_i) + sigma ||w||_1

(the intercept b, when fitted, is one more coordinate: the constant column 1, left out of the L1 term).

Both methods update one coordinate j per iteration with the step of Algorithm 2,

    w_j <- s_{lambda_j / beta_j}(w_j - g_j / beta_j),   g_j = (1/m) sum_i L'(z_i; y_i) x_ij,

where s_tau is soft-thresholding and z = Xw (+ b) is kept up to date through column access (CSC):
an update of w_j touches only the rows where x_ij != 0. They differ in how j is chosen:

* ``scd``: uniformly at random (Algorithm 2); parameter-free.
* ``gcd``: greedily (Section 4.2), the coordinate whose update has the largest guaranteed decrease
  of P, ``lambda_j |w_j| - (eta g_j + beta_j/2 eta^2 + lambda_j |w_j + eta|)`` for the step eta above
  (the bound of eq. (10)). The full gradient g is maintained: changing w_j changes L'(z_i) on the
  rows of column j, and each of those rows then changes g on its own non-zeros (row access, CSR).

beta_j. The paper takes beta = sup L'' (1 for its squared loss (1/2)(a - y)^2, 1/4 for the logistic
loss) under the assumption x in [-1, 1]^d. Condition (9) of Theorem 1 is needed per coordinate, and
the tightest constant satisfying it is ``beta_j = sup L'' * (1/m) sum_i x_ij^2`` (``beta="column"``,
the default): it never exceeds the paper's beta on data in [-1, 1]^d (it equals it on +-1 columns),
is still parameter-free, and keeps the method stable on unscaled data, where the paper's beta
diverges. ``beta="uniform"`` is the paper's single beta, ``sup L'' * max_ij x_ij^2`` for every
coordinate: exactly sup L'' on data in [-1, 1]^d that reaches +-1, and still a valid bound on
other data. Our
squared loss is (z - y)^2 without the 1/2, so its sup L'' is 2 (``LOSSES["squared"].curvature``), and
sigma here is twice the paper's lambda for the same problem.

Data accesses (the paper's x-axis) count each non-zero x_ij an iteration reads, once per iteration:
nnz of column j for SCD; for GCD that plus the non-zeros of every row whose derivative changed, plus
a full pass over the data whenever the maintained gradient is recomputed exactly (every n_weights
iterations, which removes floating-point drift). Dense input counts every entry, zeros included.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.sparse as sp
from numba import njit

from ._sparse import KernelData, as_kernel_data, row_extent
from .compiling import compile_for
from .losses import UNWEIGHTED, Loss, loss_derivative, max_weight, row_weight
from .penalties import soft_threshold
from .step_sizes import column_mean_squares

# Columns of the per-coordinate constants ``coef``.
BETA, LAM = 0, 1
# How beta is chosen: per coordinate (the tightest bound) or one for all (the paper's).
BETA_RULES = ("column", "uniform")


# -- the coordinate update both methods share -----------------------------------------------------


@njit(cache=True, inline="always")
def _column_gradient(C, j, z, y, sample_weight, code, eps):
    """(sum_i c_i L'(z_i; y_i) x_ij, nnz of column j): the sum behind g_j, read from the column
    view C (c_i = ``row_weight``: 1 for an unweighted fit)."""
    data, indices = C[0], C[1]
    start, end, base = row_extent(C, j)
    g = 0.0
    for pos in range(start, end):
        i = indices[pos - base]
        g += row_weight(sample_weight, i) * loss_derivative(code, z[i], y[i], eps) * data[pos]
    return g, end - start


@njit(cache=True, inline="always")
def _coordinate_step(w_j, g, beta, lam):
    """Algorithm 2's three cases: argmin_u g (u - w_j) + beta/2 (u - w_j)^2 + lam |u| (eq. (10))."""
    return soft_threshold(w_j - g / beta, lam / beta)


@njit(cache=True, inline="always")
def _guaranteed_decrease(w_j, new, g, beta, lam):
    """The decrease of P that the quadratic bound (9) guarantees for the step w_j -> new (>= 0):
    lam |w_j| - (eta g + beta/2 eta^2 + lam |w_j + eta|) for eta = new - w_j.

    Written without cancellation: when new != 0 the optimality of the step gives
    g = -beta eta - lam sign(new), and the bound becomes beta/2 eta^2 + lam (|w_j| - sign(new) w_j),
    so tiny steps near the optimum still compare correctly.
    """
    if new == 0.0:
        return lam * abs(w_j) + w_j * g - 0.5 * beta * w_j * w_j
    step = new - w_j
    crossed = abs(w_j) - w_j if new > 0.0 else abs(w_j) + w_j
    return 0.5 * beta * step * step + lam * crossed


@njit(cache=True)
def scd_chunk(C, y, sample_weight, coords, w, z, coef, code, eps):
    """Algorithm 2 for the coordinates ``coords`` in turn; returns the data accesses made.

    ``C`` is the column view (``C[j]`` = column j of [X, 1]), ``coef[:, BETA]`` and ``coef[:, LAM]``
    the per-coordinate beta_j and L1 weight, ``z`` the margins Xw (+ b), updated in place.
    """
    data, indices = C[0], C[1]
    inv_m = 1.0 / y.shape[0]
    accesses = 0
    for j in coords:
        beta = coef[j, BETA]
        if beta == 0.0:
            continue  # an all-zero column: its weight stays 0 and reading it costs nothing
        g, nnz = _column_gradient(C, j, z, y, sample_weight, code, eps)
        accesses += nnz
        new = _coordinate_step(w[j], g * inv_m, beta, coef[j, LAM])
        delta = new - w[j]
        if delta != 0.0:
            start, end, base = row_extent(C, j)
            for pos in range(start, end):
                z[indices[pos - base]] += delta * data[pos]
            w[j] = new
    return accesses


@njit(cache=True)
def gcd_refresh(C, y, sample_weight, z, grad, code, eps):
    """The exact gradient g = (1/m) [X, 1]^T L'(z) into ``grad``; returns the data accesses made."""
    inv_m = 1.0 / y.shape[0]
    accesses = 0
    for j in range(grad.shape[0]):
        g, nnz = _column_gradient(C, j, z, y, sample_weight, code, eps)
        grad[j] = g * inv_m
        accesses += nnz
    return accesses


@njit(cache=True)
def gcd_chunk(C, R, y, sample_weight, n, w, z, grad, coef, code, eps):
    """Up to ``n`` greedy steps. Returns (iterations done, data accesses, converged).

    ``R`` is the row view of [X, 1] (CSR); ``grad`` the maintained gradient. Converged means no
    coordinate step changes w any more (every guaranteed decrease is 0 in floating point): w
    satisfies the optimality conditions of (1) to rounding.
    """
    cdata, cindices = C[0], C[1]
    rdata, rindices = R[0], R[1]
    inv_m = 1.0 / y.shape[0]
    accesses = 0
    for it in range(n):
        best = -1
        best_gain = 0.0
        best_new = 0.0
        for j in range(w.shape[0]):
            beta = coef[j, BETA]
            if beta == 0.0:
                continue
            new = _coordinate_step(w[j], grad[j], beta, coef[j, LAM])
            gain = _guaranteed_decrease(w[j], new, grad[j], beta, coef[j, LAM])
            if gain > best_gain:
                best, best_gain, best_new = j, gain, new
        if best < 0:
            return it, accesses, True
        delta = best_new - w[best]
        w[best] = best_new
        start, end, base = row_extent(C, best)
        accesses += end - start
        for pos in range(start, end):
            i = cindices[pos - base]
            before = loss_derivative(code, z[i], y[i], eps)
            z[i] += delta * cdata[pos]
            change = (loss_derivative(code, z[i], y[i], eps) - before) * row_weight(sample_weight, i) * inv_m
            if change != 0.0:
                rstart, rend, rbase = row_extent(R, i)
                accesses += rend - rstart
                for rpos in range(rstart, rend):
                    grad[rindices[rpos - rbase]] += change * rdata[rpos]
    return n, accesses, False


# -- the Python front -----------------------------------------------------------------------------


def with_bias_column(
    data: KernelData, fit_intercept: bool, rows: bool
) -> tuple[KernelData | None, KernelData]:
    """(row view or None, column view) of [X, 1] (or of X): CSR and CSC arrays in the kernel layout.

    The constant column makes the intercept an ordinary coordinate (with L1 weight 0), so the
    kernels need no special case for it. Both views are new float64 arrays whatever the input
    (the column view is a transposed copy anyway), so the kernels are compiled for one signature
    only. Dense input stays dense; sparse input stays sparse. The row view (GCD's) is built only
    when asked for.
    """
    m = data.indptr.shape[0] - 1
    n = data.n_features
    if data.dense:
        X = data.data.reshape(m, n)
        if fit_intercept:
            X = np.hstack([X, np.ones((m, 1), dtype=X.dtype)])
        return (
            as_kernel_data(np.array(X, dtype=np.float64)) if rows else None,
            as_kernel_data(np.ascontiguousarray(X.T, dtype=np.float64)),
        )
    X = sp.csr_matrix((data.data, data.indices, data.indptr), shape=(m, n)).astype(np.float64)
    if fit_intercept:
        X = sp.hstack([X, np.ones((m, 1))], format="csr")
    return (as_kernel_data(X) if rows else None), as_kernel_data(X.T.tocsr())


def _as_matrix(view: KernelData, n_rows: int, n_cols: int) -> Any:
    """A kernel-layout view (with_bias_column) as a NumPy or SciPy matrix of that shape."""
    if view.dense:
        return view.data.reshape(n_rows, n_cols)
    indices, indptr = view.indices.astype(np.int64), view.indptr.astype(np.int64)
    return sp.csr_matrix((view.data, indices, indptr), shape=(n_rows, n_cols))


class CoordinateEngine:
    """One coordinate-descent run per output column (one-vs-rest); an iteration is one coordinate
    update. ``StochasticCoordinateEngine`` (SCD) and ``GreedyCoordinateEngine`` (GCD) choose the
    coordinates."""

    samples_per_iteration = 0  # a coordinate step reads one column, not whole samples
    converged = False

    def __init__(
        self,
        data: KernelData,
        targets: np.ndarray,
        *,
        loss: Loss,
        epsilon: float,
        sigma: float,
        fit_intercept: bool,
        rng,
        beta: str = "column",
        rows: bool = False,
        initial: np.ndarray | None = None,
        sample_weight: np.ndarray = UNWEIGHTED,
    ):
        """``initial``: the weights to start from, one row per output, the intercept last (a
        warm start); None: 0."""
        self.rows, self.cols = with_bias_column(data, fit_intercept, rows=rows)
        m = targets.shape[1]
        n_weights = self.cols.indptr.shape[0] - 1
        self.coef = np.empty((n_weights, 2))
        self.sample_weight = sample_weight
        # The bound (9) on the weighted loss: beta_j from (1/m) sum_i c_i x_ij^2.
        column_sq = column_mean_squares(self.cols, m, sample_weight)
        if beta == "uniform":
            # The paper's beta = sup L'' for x in [-1, 1]^d (eq. (7)), scaled by the largest x_ij^2
            # (and row weight) so that condition (9) holds on any data; all-zero columns keep
            # beta 0 (never updated).
            largest = float(np.max(np.abs(self.cols.data), initial=0.0)) ** 2 * max_weight(sample_weight)
            self.coef[:, BETA] = np.where(column_sq > 0.0, loss.curvature * largest, 0.0)
        else:
            self.coef[:, BETA] = loss.curvature * column_sq
        if not np.isfinite(self.coef[:, BETA]).all():
            raise ValueError(
                "coordinate descent needs the column means of x_ij^2, which overflow for these "
                "features. Scale the features (e.g. MaxAbsScaler or StandardScaler)."
            )
        self.coef[:, LAM] = sigma
        if fit_intercept:
            self.coef[-1, LAM] = 0.0
        self.targets = [np.ascontiguousarray(y, dtype=np.float64) for y in targets]
        self.w = [np.zeros(n_weights) for _ in self.targets]
        self.z = [np.zeros(m) for _ in self.targets]
        if initial is not None:
            # The margins z = X w the updates keep in step with w (the bias column included).
            columns = _as_matrix(self.cols, n_weights, m)
            self.w = [np.array(w, dtype=np.float64) for w in initial]
            self.z = [np.asarray(columns.T @ w, dtype=np.float64) for w in self.w]
        self.loss = (loss.code, float(epsilon))
        self.rng = rng
        self.t = 0
        self.data_accesses = 0

    def run(self, n: int) -> None:
        self._advance(n)
        if not all(np.isfinite(z).all() for z in self.z):
            raise FloatingPointError(
                f"coordinate descent diverged at iteration {self.t}: the weights are no longer "
                "finite. Scale the features (e.g. StandardScaler) or increase sigma."
            )

    def _advance(self, n: int) -> None:
        raise NotImplementedError

    def compile(self) -> None:
        raise NotImplementedError

    def output_weights(self) -> np.ndarray:
        return np.stack(self.w)


class StochasticCoordinateEngine(CoordinateEngine):
    """SCD: coordinates drawn uniformly at random (Algorithm 2), the same for every output."""

    def compile(self) -> None:
        for y, w, z in zip(self.targets, self.w, self.z, strict=True):
            compile_for(
                scd_chunk,
                self.cols,
                y,
                self.sample_weight,
                np.empty(0, dtype=np.int64),
                w,
                z,
                self.coef,
                *self.loss,
            )

    def _advance(self, n: int) -> None:
        coords = self.rng.integers(0, self.coef.shape[0], size=n)
        for y, w, z in zip(self.targets, self.w, self.z, strict=True):
            self.data_accesses += scd_chunk(
                self.cols, y, self.sample_weight, coords, w, z, self.coef, *self.loss
            )
        self.t += n


class GreedyCoordinateEngine(CoordinateEngine):
    """GCD: each output picks its own coordinates greedily, with its gradient maintained.

    ``converged`` becomes true once no coordinate step changes any output's weights (in practice
    only at an exactly sparse fixed point such as w = 0 for a large sigma: near other optima the
    steps shrink but stay representable).
    """

    def __init__(
        self,
        data: KernelData,
        targets: np.ndarray,
        *,
        loss: Loss,
        epsilon: float,
        sigma: float,
        fit_intercept: bool,
        rng=None,
        beta: str = "column",
        initial: np.ndarray | None = None,
        sample_weight: np.ndarray = UNWEIGHTED,
    ):
        super().__init__(
            data,
            targets,
            loss=loss,
            epsilon=epsilon,
            sigma=sigma,
            fit_intercept=fit_intercept,
            rng=rng,
            beta=beta,
            rows=True,
            initial=initial,
            sample_weight=sample_weight,
        )
        self.grad = [np.zeros(self.coef.shape[0]) for _ in self.targets]
        self.done = [False] * len(self.targets)
        self._since_refresh = self.coef.shape[0]  # compute the exact gradient before the first step

    def compile(self) -> None:
        for y, w, z, grad in zip(self.targets, self.w, self.z, self.grad, strict=True):
            compile_for(gcd_refresh, self.cols, y, self.sample_weight, z, grad, *self.loss)
            compile_for(
                gcd_chunk, self.cols, self.rows, y, self.sample_weight, 0, w, z, grad, self.coef, *self.loss
            )

    def _advance(self, n: int) -> None:
        n_weights = self.coef.shape[0]
        while n > 0 and not self.converged:
            if self._since_refresh >= n_weights:
                self._refresh_gradients()
            step = min(n, n_weights - self._since_refresh)
            advanced = 0
            for k, (y, w, z, grad) in enumerate(zip(self.targets, self.w, self.z, self.grad, strict=True)):
                if self.done[k]:
                    continue
                done, accesses, converged = gcd_chunk(
                    self.cols, self.rows, y, self.sample_weight, step, w, z, grad, self.coef, *self.loss
                )
                self.data_accesses += accesses
                self.done[k] = converged
                advanced = max(advanced, done)
            self.converged = all(self.done)
            self.t += advanced if self.converged else step
            self._since_refresh += step
            n -= step

    def _refresh_gradients(self) -> None:
        """The exact gradients, recomputed every n_weights steps (removes floating-point drift)."""
        for k, (y, z, grad) in enumerate(zip(self.targets, self.z, self.grad, strict=True)):
            if not self.done[k]:
                self.data_accesses += gcd_refresh(self.cols, y, self.sample_weight, z, grad, *self.loss)
        self._since_refresh = 0


def default_coordinate_iterations(n_weights: int, passes: float) -> int:
    """``passes`` sweeps' worth of coordinate updates (one sweep reads about the whole data once)."""
    return max(1, math.ceil(passes * n_weights))
