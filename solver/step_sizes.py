"""Step sizes: the rules behind every ``t0="auto"`` and ``eta="auto"``, and the curvature estimates
of the data they read.

Each rule sizes the first (or the constant) step by how far it moves a sample's margin <w, x>:
a step eta along a sub-gradient g x moves the margin by about eta g times a curvature of the data
(||x||^2 for the Euclidean methods, a q-norm or the curvature of the link for p-norm ones), and a
smooth loss with l'' <= c stays stable for moves up to about 1 / c.

``first_step_t0`` (PGS, ogd, kernel PGS)
    t0 with the first step 1 / ((1 + t0) sigma) = 1 / (c * margin gain), then steps ~ 1 / (sigma t).
    For p = 2 this is SGD's "optimal" 1 / (sigma (t + t0)) schedule (Bottou; the lecture's eq. (6)).
``pnorm_margin_gain`` (PGS, p < 2)
    The margin gain of a p-norm step: the curvature of r* at the dual point the first steps build.
``gradient_descent_step`` (gd), ``constant_sgd_step`` (sgd), ``mirror_descent_step`` (SMIDAS and
truncated gradient)
    The constant steps: 1 / L for the full gradient, a tenth of the largest stable step for averaged
    SGD, and Proposition 4 of the L1 paper.
``column_mean_squares`` (SCD, GCD)
    beta_j / sup l'', the per-coordinate curvature behind coordinate descent's step 1 / beta_j.

All estimates read the data through ``solver._sparse`` (dense and CSR alike) and sum in float64
whatever the data's type, so that float32 input gets the steps of the same values in float64.
E||x||^2 comes from ``solver._sparse.prepare``'s one pass over the data (``DataStats.mean_sq``).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from numba import njit

from ._sparse import DataStats, KernelData, row_extent
from .losses import Loss, derivatives_at_zero, row_weight
from .penalties import integer_power

# sgd's eta="auto" as a fraction of the largest stable step (see constant_sgd_step).
_SGD_FRACTION = 0.1
# The q-norm estimates read at most this many evenly spaced rows. Against the exact means over every
# row (p = 1.8, s = 0.3), 1,024 rows were within 0.9% on a9a, ijcnn1, w8a, reuters_moneyfx and
# rt_polarity (4,096: within 1.8%), and their |x|^q powers cost a quarter of 4,096 rows', which on
# those sets cost 1-6 ms, more than prepare's whole pass over the data (0.2-1 ms).
_SAMPLE_ROWS = 1024


def first_step_t0(curvature: float, margin_gain: float, sigma: float) -> float:
    """The t0 that makes the first step 1 / ((1 + t0) sigma) about 1 / (curvature * margin_gain).

    ``margin_gain``: how far a step moves a sample's own margin, per unit of step and sub-gradient
    (E||x||^2 for p = 2). The result is at least 1, the PGS paper's (t + 1) sigma.
    """
    if not math.isfinite(margin_gain):
        raise ValueError(
            "The feature values are too large: the mean squared row norm overflows float64. Scale "
            "the features (e.g. MaxAbsScaler or StandardScaler)."
        )
    first_step = 1.0 / (curvature * max(margin_gain, 1e-12))
    return max(1.0, 1.0 / (sigma * first_step) - 1.0)


def pnorm_margin_gain(
    data: KernelData,
    targets: np.ndarray,
    loss: Loss,
    p: float,
    epsilon: float,
    constant: float,
    dual_sq: float,
) -> float:
    """How far a PGS step of size eta moves a sample's own margin, per eta and unit of sub-gradient.

    The move is eta times the curvature of r* along x at the current dual point theta =
    lambda / ((t + t0) sigma). For p = 2 it is ||x||^2 everywhere: E||(x, s)||^2 (``dual_sq``:
    E||(x, s)||_q^2, s = ``constant`` the intercept's feature). For p < 2, r*(theta) =
    (p - 1) / 2 ||theta||_q^2 has curvature ||theta||_q^(2-q) sum_j |theta_j|^(q-2) x_j^2 less a term
    that is never positive ((p - 1)(q - 1) = 1), which depends on where lambda has its mass:

    - at theta along x, as for the very first step, it is (p - 1) ||x||_q^2 (the identities of
      tests/solver/test_pgs.py give <w_1, x> = -(p - 1) g ||x||_q^2 / ((1 + t0) sigma));
    - it never exceeds ||x||_q^2 (r* is 1-smooth in the q-norm, r being 1-strongly convex in the
      p-norm), 1 / (p - 1) times more, reached once lambda concentrates on x's coordinates;
    - on sparse data lambda spreads over many coordinates, and for q > 2 a coordinate that holds
      little of it weighs little: (|theta_j| / ||theta||_q)^(q-2).

    Lipschitz losses, where a step that is too long only adds noise (which the average smooths),
    get the curvature at the dual point the first steps build, theta ~ sum_i l'(0; y_i) (x_i, s)
    with w still about 0 (``mean_dual_curvature``, the dropped term making it an upper estimate).
    On a9a, w8a and ijcnn1 that is within 10% of the first move; on the text sets the first move
    overestimates it 1.7-2.5x, and steps 2-4x longer than the first move's took p = 1.8 to its
    targets in 1.3-2.9x fewer epochs (one-off runs of ``python -m bench.time_to_accuracy``). The
    squared losses get the bound, since steps too long for it make their iterates oscillate ever
    wider (p = 1.05: R^2 of -60 after 5 epochs with the first move, tests/solver/estimators/test_pgs.py).
    """
    if p == 2.0 or not loss.lipschitz:
        return dual_sq
    q = p / (p - 1.0)
    gains = [
        mean_dual_curvature(data, derivatives_at_zero(loss.code, y, epsilon), q, constant) for y in targets
    ]
    gain = float(np.mean(gains))
    # No dual mass at w = 0 (every l'(0; y) zero, or X^T l'(0) = 0): the first move instead.
    return gain if gain > 0.0 else (p - 1.0) * dual_sq


def gradient_descent_step(loss: Loss, data: KernelData, fit_intercept: bool, sigma: float) -> float:
    """1 / L, L = curvature * lambda_max(X^T X) / m + sigma: the Lipschitz constant of grad F of
    lecture eq. (1), so that gradient descent (Algorithm 1) is stable (up to 2 / L)."""
    return 1.0 / (loss.curvature * largest_curvature(data, fit_intercept) + sigma)


def constant_sgd_step(loss: Loss, stats: DataStats, fit_intercept: bool, sigma: float) -> float:
    """A tenth of PGS's first step 1 / (curvature E||x||^2), for SGD with a constant step
    (Algorithm 2): averaged constant-step SGD keeps a bias growing like eta^2 for non-quadratic
    losses (Bach & Moulines, 2013). On a9a the full step left the logistic objective 6% above the
    optimum, a tenth 0.04%."""
    sq = stats.mean_sq + float(fit_intercept)
    return _SGD_FRACTION / (loss.curvature * sq + sigma)


def mirror_descent_step(loss: Loss, data: KernelData, p: int, fit_intercept: bool) -> float:
    """Proposition 4 of the L1 paper with K = 1: eta = 2K / ((1 + K)(p - 1) rho X^2) for losses with
    l'^2 <= rho l, where X^2 bounds ||x_i||_p^2 (the paper's e ||x_i||_inf^2 for p = 2 ln d). A
    non-negative loss whose second derivative is at most beta has rho = 2 beta."""
    x_sq = max_row_norm_sq(data, p, 1.0 if fit_intercept else 0.0)
    return 1.0 / (2.0 * (p - 1) * loss.curvature * x_sq) if x_sq > 0.0 else 1.0


# -- curvature estimates of the data --------------------------------------------------------------


def mean_sq_dual_norm(X: KernelData, q: float, constant: float) -> float:
    """E||(x, constant)||_q^2 over the rows, estimated on at most 1,024 evenly spaced rows.

    An estimate suffices for what it is used for (the first step of t0="auto"), and a sample keeps
    the |x|^q powers off the whole data set.
    """
    m = X.indptr.shape[0] - 1
    if m == 0:
        return constant * constant
    return _mean_sq_q_norm(X, _evenly_spaced_rows(m), q, abs(constant))


def mean_dual_curvature(X: KernelData, g0: np.ndarray, q: float, constant: float) -> float:
    """E_x sum_j (|theta_j| / ||theta||_q)^(q-2) x_j^2 over the rows (and the constant feature),
    with theta = sum_i g0_i (x_i, constant), estimated on at most 1,024 evenly spaced rows; theta
    itself is summed over every row. 0 if theta is 0.

    This is the curvature of r*(theta) = (p - 1) / 2 ||theta||_q^2 along a row x, less a term that
    is never positive, at the dual point theta (``pnorm_margin_gain`` says why it matters).
    """
    m = X.indptr.shape[0] - 1
    if m == 0:
        return 0.0
    return _mean_dual_curvature(
        X, np.ascontiguousarray(g0, dtype=np.float64), _evenly_spaced_rows(m), q, constant
    )


def largest_curvature(X: KernelData, fit_intercept: bool, tol: float = 1e-3, max_iter: int = 100) -> float:
    """lambda_max(X^T X) / m of the data (with a column of ones for the intercept), by power
    iteration, which approaches it from below."""
    m = X.indptr.shape[0] - 1
    n = X.n_features
    A = X.data.reshape(m, n) if X.dense else sp.csr_matrix((X.data, X.indices, X.indptr), shape=(m, n))
    u = np.ones(n + int(fit_intercept))
    u /= np.linalg.norm(u)
    value = 0.0
    for _ in range(max_iter):
        z = A @ u[:n]
        if fit_intercept:
            z = z + u[n]
        g = A.T @ z
        if fit_intercept:
            g = np.append(g, z.sum())
        new = float(np.linalg.norm(g))
        if new == 0.0:
            return 0.0
        u = g / new
        if abs(new - value) <= tol * new:
            value = new
            break
        value = new
    return value / max(m, 1)


@njit(cache=True)
def max_row_norm_sq(X, p, bias_value):
    """max_i ||(x_i, bias_value)||_p^2 over the rows of X, for an integer p (computed relative to
    each row's max, so that |x|^p cannot overflow)."""
    data = X[0]
    m = X[2].shape[0] - 1
    best = 0.0
    for i in range(m):
        start, end, _ = row_extent(X, i)
        amax = abs(bias_value)
        for pos in range(start, end):
            amax = max(amax, abs(data[pos]))
        if amax == 0.0:
            continue
        total = integer_power(abs(bias_value) / amax, p)
        for pos in range(start, end):
            total += integer_power(abs(data[pos]) / amax, p)
        best = max(best, amax * amax * total ** (2.0 / p))
    return best


@njit(cache=True)
def column_mean_squares(C, m, sample_weight):
    """(1/m) sum_i c_i x_ij^2 for every column j of the column view C (``C[j]`` = column j; c_i =
    ``row_weight``, 1 for an unweighted fit)."""
    data, rows = C[0], C[1]
    n = C[2].shape[0] - 1
    out = np.zeros(n)
    for j in range(n):
        start, end, base = row_extent(C, j)
        total = 0.0
        for pos in range(start, end):
            total += row_weight(sample_weight, rows[pos - base]) * data[pos] * data[pos]
        out[j] = total / m
    return out


def _evenly_spaced_rows(m: int) -> np.ndarray:
    """At most 1,024 row indices spread evenly over 0..m-1, unsigned like the kernels' indices.

    Strictly increasing without np.unique (whose sort cost milliseconds per p < 2 fit): with more
    rows than samples the spacing is at least 1, so the truncated values all differ.
    """
    if m <= _SAMPLE_ROWS:
        return np.arange(m, dtype=np.uint64)
    return np.linspace(0, m - 1, _SAMPLE_ROWS).astype(np.int64).view(np.uint64)


@njit(cache=True)
def _mean_sq_q_norm(X, rows, q, constant):
    data = X[0]
    total = 0.0
    for i in rows:
        start, end, base = row_extent(X, i)
        # Powers of |x| / (the row's largest |x|): |x|^q overflows for |x| > 1e14 when q = 21.
        largest = constant
        for pos in range(start, end):
            largest = max(largest, abs(data[pos]))
        if largest == 0.0:
            continue
        acc = (constant / largest) ** q
        for pos in range(start, end):
            acc += (abs(data[pos]) / largest) ** q
        total += acc ** (2.0 / q) * largest * largest
    return total / rows.shape[0]


@njit(cache=True)
def _mean_dual_curvature(X, g0, rows, q, constant):
    data, indices, indptr = X[0], X[1], X[2]
    m = indptr.shape[0] - 1
    theta = np.zeros(X[4])
    theta_constant = 0.0
    for i in range(m):
        start, end, base = row_extent(X, i)
        for pos in range(start, end):
            theta[indices[pos - base]] += g0[i] * data[pos]
        theta_constant += g0[i] * constant
    # Powers of |theta_j| / max |theta|, then divided by ||theta||_q: no overflow for any q. One
    # power per feature: r_j = (|theta_j| / max)^(q-2) gives both (|theta_j| / max)^q = r_j
    # (theta_j / max)^2 for the norm and the weight (|theta_j| / ||theta||_q)^(q-2) =
    # r_j (max / ||theta||_q)^(q-2); features theta does not touch weigh 0 (q > 2).
    largest = abs(theta_constant)
    for j in range(theta.shape[0]):
        largest = max(largest, abs(theta[j]))
    if largest == 0.0:
        return 0.0
    weight = np.zeros_like(theta)
    weight_constant = (abs(theta_constant) / largest) ** (q - 2.0)
    norm = weight_constant * (theta_constant / largest) ** 2
    for j in range(theta.shape[0]):
        if theta[j] != 0.0:
            ratio = abs(theta[j]) / largest
            weight[j] = ratio ** (q - 2.0)
            norm += weight[j] * ratio * ratio
    norm = norm ** (1.0 / q) * largest
    rescale = (largest / norm) ** (q - 2.0)
    weight *= rescale
    weight_constant *= rescale
    total = 0.0
    for i in rows:
        start, end, base = row_extent(X, i)
        acc = weight_constant * constant * constant
        for pos in range(start, end):
            value = data[pos]
            acc += weight[indices[pos - base]] * value * value
        total += acc
    return total / rows.shape[0]
