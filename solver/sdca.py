"""Stochastic dual coordinate ascent (SDCA) for L2-regularised losses: Shalev-Shwartz & Zhang,
"Stochastic Dual Coordinate Ascent Methods for Regularized Loss Minimization", JMLR 14 (2013).

The paper's primal, eq. (1), with its lambda = our sigma and its n = our m::

    P(w) = (1/m) sum_i phi_i(<w, x_i>) + (sigma / 2) ||w||^2,   phi_i(z) = c_i l(z; y_i)

which is eq. (7) of the PGS paper for p = 2 (sigma / (2 (p-1)) ||w||_2^2 = sigma/2 ||w||^2) with the
rows' weights c_i of ``solver.weights``: the objective PGS, L-BFGS and gd minimise at p = 2, so the
three reach the same optimum (given the same constant feature). The intercept, when fitted, is
s w_b, w_b the weight of a constant feature of value s regularised like the others (LIBLINEAR's
dual solvers and PGS's convention; s = 1 is the constant feature 1 of L-BFGS). The SDCA paper's
rates depend on the data through R^2 = max ||x_i||^2, the constant feature included: on
L2-normalised text (||x|| = 1, values about 0.1) s = 1 doubles R^2; an s of the values' size keeps
it near 1.

Its dual, eq. (2), and the primal point of a dual one, eq. (3)::

    D(alpha) = (1/m) sum_i -phi_i*(-alpha_i) - (sigma / 2) ||w(alpha)||^2
    w(alpha) = (1 / (sigma m)) sum_i alpha_i x_i

An epoch visits every row once, in a fresh random permutation (the variant the paper's experiments
call "SDCA-Perm", faster in practice than drawing rows with replacement), and for each row maximises
D exactly along alpha_i, keeping w = w(alpha) up to date: the step of the paper's Procedure SDCA,
"find Delta alpha_i to maximise -phi_i*(-(alpha_i + Delta alpha_i)) - (lambda n / 2)
||w + (lambda n)^-1 Delta alpha_i x_i||^2". With z = <w, x_i> and q = ||x_i||^2 / (sigma m), that
is (dropping terms free of delta and the factor 1/m) the maximisation of

    -phi_i*(-(alpha_i + delta)) - delta z - (q / 2) delta^2

in closed form for the hinge (b = alpha_i y_i in [0, c_i]: b <- clip(b + (1 - y z) / q, 0, c_i), the
update the paper works out for the hinge loss), the squared hinge and the squared loss; for the
logistic loss it has no closed form and is solved by Newton's method on the log-odds of b / c_i
(see ``_logistic_step``).

Stopping. The duality gap P(w) - D(alpha) >= P(w) - P(w*) bounds the sub-optimality of w (weak
duality); it is computed exactly after every epoch (one read-only pass over the data), recorded in
the trace, and the run stops ("converged") once it is at most ``tol`` times P(0), the zero model's
objective: a bound relative to the problem's scale, so that one tol serves targets of any size.

Data accesses count the non-zeros of X once per epoch and once per gap pass.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._sparse import KernelData, row_extent
from .compiling import compile_for
from .losses import (
    HINGE,
    LOGISTIC,
    SQUARED,
    SQUARED_HINGE,
    UNWEIGHTED,
    Loss,
    loss_at_zero,
    loss_value,
    row_weight,
)

# The losses with an SDCA step: phi_i* in closed form, and a dual step in closed form or by Newton.
SDCA_LOSSES = ("hinge", "squared_hinge", "logistic", "squared")
# Newton on the logistic step takes its last step once that step changes the log-odds t by at
# most this: in t the derivative's curvature over its slope is at most 1 in size (see
# ``_logistic_step``), so the error after a step of d is about d^2 / 2 <= 5e-13. A step that leaves
# the bracket bisects it instead; the bracket is q c wide (up to ~1e8 at small sigma m), so 100
# steps reach that accuracy even where Newton never takes over.
_NEWTON_TOL = 1e-6
_NEWTON_STEPS = 100


@njit(cache=True, inline="always")
def _sigmoid_pair(t):
    """(1 / (1 + e^-t), 1 / (1 + e^t)) without overflow: the pair sums to 1 to rounding."""
    if t >= 0.0:
        e = math.exp(-t)
        return 1.0 / (1.0 + e), e / (1.0 + e)
    e = math.exp(t)
    return e / (1.0 + e), 1.0 / (1.0 + e)


@njit(cache=True)
def _logistic_step(b, yz, q, c):
    """argmax over b' in (0, c) of the logistic dual along one coordinate:
    -[b' log(b'/c) + (c - b') log((c - b')/c)] - (b' - b) yz - (q/2) (b' - b)^2.

    Its derivative -log(b' / (c - b')) - yz - q (b' - b) vanishes at one point. Newton runs on the
    log-odds t = log(b' / (c - b')), where the derivative's slope lies in [-1 - q c / 4, -1]: bounded
    both ways, so the steps stay well scaled even where b' is nearly 0 or c (the optimum of a row
    classified with a wide margin), which Newton on b' itself reaches only through many halvings.
    Its curvature -q c s (1 - s) (1 - 2 s) is at most the slope's excess over 1 in size, so Newton
    converges quadratically with an error of about half the last step squared.
    The root lies in [-yz - q (c - b), -yz + q b] (b' is in (0, c)); a step that does not land
    strictly inside the bracket bisects it instead (from a box end, b = 0 or c, the flat sigmoid
    makes Newton jump exactly from one end of the bracket to the other, and back). LIBLINEAR's
    dual logistic solver (Yu, Huang & Lin 2011) also solves this sub-problem by Newton's method;
    the Procedure SDCA asks for the exact maximiser, which this is to rounding (the paper's cheaper
    approximate step for smooth losses is not used: exact steps make D rise at every step)."""
    lo, hi = -yz - q * (c - b), -yz + q * b
    # Start from the current b: near the optimum it moves little, and Newton takes a step or two.
    t = math.log(b / (c - b)) if 0.0 < b < c else -yz
    t = min(max(t, lo), hi)
    for _ in range(_NEWTON_STEPS):
        s, _r = _sigmoid_pair(t)
        g = -t - yz - q * (c * s - b)
        if g > 0.0:
            lo = t
        else:
            hi = t
        slope = -1.0 - q * c * s * _r
        new = t - g / slope
        if abs(new - t) <= _NEWTON_TOL:
            # Converged; tested before the bracket, as t itself has just become one of its ends.
            t = new
            break
        if not lo < new < hi:
            new = 0.5 * (lo + hi)
        t = new
    return c * _sigmoid_pair(t)[0]


@njit(cache=True)
def dual_step(code, alpha, z, y, c, q):
    """The new alpha_i: the exact maximiser of D along coordinate i (the Procedure SDCA's step)
    for phi_i = c l(.; y), at z = <w, x_i> and q = ||x_i||^2 / (sigma m) > 0."""
    if code == SQUARED:
        # phi(z) = c (z - y)^2, -phi*(-a) = a y - a^2 / (4c): setting the step's derivative
        # y - (a + d) / (2c) - z - q d to zero (the paper's worked step for the square loss,
        # there with c = 1).
        return alpha + (y - z - alpha / (2.0 * c)) / (q + 1.0 / (2.0 * c))
    b = alpha * y  # the classification losses' dual variable lies in b >= 0
    if code == HINGE:
        # -phi*(-a) = b on [0, c] (the paper's hinge-loss step): the quadratic's maximiser,
        # clipped to the box.
        return y * min(c, max(0.0, b + (1.0 - y * z) / q))
    if code == SQUARED_HINGE:
        # phi(z) = c max(0, 1 - yz)^2, -phi*(-a) = b - b^2 / (4c) for b >= 0 (derived as the square
        # loss's step, with the constraint b >= 0 of the hinge's).
        return y * max(0.0, b + (1.0 - y * z - b / (2.0 * c)) / (q + 1.0 / (2.0 * c)))
    if code == LOGISTIC:
        return y * _logistic_step(b, y * z, q, c)
    return math.nan  # not a loss of SDCA_LOSSES (the estimators accept no other)


@njit(cache=True)
def dual_value(code, alpha, y, c):
    """-phi_i*(-alpha_i) for phi_i = c l(.; y): row i's term of the dual, eq. (2)."""
    if code == SQUARED:
        return alpha * y - alpha * alpha / (4.0 * c)
    b = alpha * y
    if code == HINGE:
        return b
    if code == SQUARED_HINGE:
        return b - b * b / (4.0 * c)
    if code == LOGISTIC:
        # The binary entropy of b / c, times c (0 log 0 = 0 at the box's ends).
        value = 0.0
        if b > 0.0:
            value -= b * math.log(b / c)
        if c - b > 0.0:
            value -= (c - b) * math.log((c - b) / c)
        return value
    return math.nan


@njit(cache=True)
def sdca_epoch(X, y, sample_weight, order, sq_norms, alpha, w, code, bias_value, sigma):
    """One pass of the dual coordinate step over the rows in ``order``, updating ``alpha`` and
    w = w(alpha) (eq. (3); the bias, when ``bias_value`` is 1, is w's last entry) in place.

    ``sq_norms[i]`` is ||x_i||^2 (the constant feature included). A row of weight 0 keeps
    alpha_i = 0 (phi_i = 0, whose conjugate is finite at 0 alone)."""
    data, indices = X[0], X[1]
    scale = 1.0 / (sigma * y.shape[0])
    bias_j = w.shape[0] - 1
    for i in order:
        c = row_weight(sample_weight, i)
        if c == 0.0 or sq_norms[i] == 0.0:
            # An empty row has z = 0 whatever w: its alpha_i moves no weight, so the dual's
            # maximiser along it is phi_i's own and the step's q = 0 would divide by zero.
            if c != 0.0:
                alpha[i] = _empty_row_alpha(code, y[i], c)
            continue
        start, end, base = row_extent(X, i)
        z = 0.0
        for pos in range(start, end):
            z += data[pos] * w[indices[pos - base]]
        z += bias_value * w[bias_j]
        new = dual_step(code, alpha[i], z, y[i], c, sq_norms[i] * scale)
        delta = (new - alpha[i]) * scale
        if delta != 0.0:
            for pos in range(start, end):
                w[indices[pos - base]] += delta * data[pos]
            w[bias_j] += delta * bias_value
            alpha[i] = new


@njit(cache=True, inline="always")
def _empty_row_alpha(code, y, c):
    """argmax of -phi_i*(-a) over a: -phi_i'(0), the loss's slope at z = 0 (up to sign)."""
    if code == SQUARED:
        return 2.0 * c * y
    if code == HINGE:
        return c * y
    if code == SQUARED_HINGE:
        return 2.0 * c * y
    if code == LOGISTIC:
        return 0.5 * c * y
    return math.nan


@njit(cache=True)
def row_gap(code, alpha, z, y, c):
    """phi_i(z) + phi_i*(-alpha_i) + alpha_i z >= 0 (Fenchel-Young): row i's share of the duality
    gap, written without cancellation where a closed form allows (see ``duality_gap``)."""
    if code == SQUARED:
        r = alpha + 2.0 * c * (z - y)
        return r * r / (4.0 * c)
    b = alpha * y
    margin = 1.0 - y * z
    if code == SQUARED_HINGE:
        if margin >= 0.0:
            r = b - 2.0 * c * margin
            return r * r / (4.0 * c)
        return b * b / (4.0 * c) - b * margin
    if code == HINGE:
        return c * max(0.0, margin) - b * margin
    return c * loss_value(code, z, y, 1.0) - dual_value(code, alpha, y, c) + alpha * z


@njit(cache=True)
def duality_gap(X, y, sample_weight, alpha, w, code, bias_value):
    """P(w) - D(alpha) of eqs. (1) and (2) at w = w(alpha), in one read-only pass over the data.

    With w = w(alpha) (eq. (3)), sigma ||w||^2 = (1/m) sum_i alpha_i <w, x_i>, so the gap is
    (1/m) sum_i [phi_i(z_i) + phi_i*(-alpha_i) + alpha_i z_i], a sum of non-negative terms: no
    difference of the two objectives, whose rounding (1e-16 of each, times m) would hide a gap
    smaller than that and stop the run early or never."""
    data, indices = X[0], X[1]
    m = y.shape[0]
    bias_j = w.shape[0] - 1
    gap = 0.0
    for i in range(m):
        c = row_weight(sample_weight, i)
        if c == 0.0:
            continue
        start, end, base = row_extent(X, i)
        z = 0.0
        for pos in range(start, end):
            z += data[pos] * w[indices[pos - base]]
        z += bias_value * w[bias_j]
        gap += max(row_gap(code, alpha[i], z, y[i], c), 0.0)
    return gap / m


@njit(cache=True)
def row_squared_norms(X, m, bias_value):
    """||x_i||^2 of every row, the constant feature included."""
    data = X[0]
    out = np.empty(m)
    for i in range(m):
        start, end, _base = row_extent(X, i)
        total = bias_value * bias_value
        for pos in range(start, end):
            total += float(data[pos]) * data[pos]
        out[i] = total
    return out


@njit(cache=True)
def dual_start(X, y, sample_weight, w, code, bias_value):
    """alpha_i = -phi_i'(<w, x_i>) (projected into phi_i*'s domain): the dual point of a warm start
    from weights w. At the optimum these are the optimal alpha (the paper's optimality condition,
    w* = w(alpha*) with alpha*_i = -phi_i'(<w*, x_i>))."""
    data, indices = X[0], X[1]
    m = y.shape[0]
    bias_j = w.shape[0] - 1
    alpha = np.zeros(m)
    for i in range(m):
        c = row_weight(sample_weight, i)
        if c == 0.0:
            continue
        start, end, base = row_extent(X, i)
        z = 0.0
        for pos in range(start, end):
            z += data[pos] * w[indices[pos - base]]
        z += bias_value * w[bias_j]
        yi = y[i]
        if code == SQUARED:
            alpha[i] = -2.0 * c * (z - yi)
        elif code == HINGE:
            alpha[i] = c * yi if yi * z < 1.0 else 0.0
        elif code == SQUARED_HINGE:
            alpha[i] = 2.0 * c * yi * max(0.0, 1.0 - yi * z)
        elif code == LOGISTIC:
            alpha[i] = c * yi * _sigmoid_pair(-yi * z)[0]
        else:
            alpha[i] = math.nan
    return alpha


@njit(cache=True)
def primal_from_dual(X, alpha, n_weights, bias_value, sigma):
    """w(alpha) = (1 / (sigma m)) sum_i alpha_i x_i, eq. (3)."""
    data, indices = X[0], X[1]
    m = alpha.shape[0]
    scale = 1.0 / (sigma * m)
    w = np.zeros(n_weights)
    for i in range(m):
        a = alpha[i] * scale
        if a == 0.0:
            continue
        start, end, base = row_extent(X, i)
        for pos in range(start, end):
            w[indices[pos - base]] += a * data[pos]
        w[n_weights - 1] += a * bias_value
    return w


class SDCAEngine:
    """One SDCA run per output column (one-vs-rest), advanced an epoch (one iteration) at a time.

    After each epoch the duality gap of every run still going is computed; a run whose gap is at
    most ``tol`` P(0) stops there, and ``converged`` becomes true once every run has.
    ``duality_gap`` is the sum of the runs' last gaps (the trace records it, as it records the sum
    of their objectives).
    """

    def __init__(
        self,
        data: KernelData,
        targets: np.ndarray,
        *,
        loss: Loss,
        sigma: float,
        fit_intercept: bool,
        tol: float,
        intercept_scaling: float = 1.0,
        rng: np.random.Generator,
        initial: np.ndarray | None = None,
        sample_weight: np.ndarray = UNWEIGHTED,
    ):
        """``initial``: weights to start from, one row per output, the intercept b last (a warm
        start from the dual point they imply, ``dual_start``); None: alpha = 0, w = 0.
        ``intercept_scaling``: s, the value of the constant feature (when ``fit_intercept``)."""
        m = targets.shape[1]
        self._data = data
        self._targets = [np.ascontiguousarray(y, dtype=np.float64) for y in targets]
        self._sample_weight = sample_weight
        self._code = loss.code
        self._sigma = float(sigma)
        self._bias = float(intercept_scaling) if fit_intercept else 0.0
        # The weights as the estimator reads them end with the intercept b = s w_b.
        self._output_scale = np.ones(data.n_features + int(fit_intercept))
        if fit_intercept:
            self._output_scale[-1] = self._bias
        self._rng = rng
        n_weights = data.n_features + int(fit_intercept)
        self._sq_norms = row_squared_norms(data, m, self._bias)
        if initial is None:
            self._alphas = [np.zeros(m) for _ in self._targets]
        else:
            self._alphas = [
                dual_start(
                    data,
                    y,
                    sample_weight,
                    np.asarray(w, dtype=np.float64) / self._output_scale,
                    self._code,
                    self._bias,
                )
                for y, w in zip(self._targets, initial, strict=True)
            ]
        self._weights = [
            primal_from_dual(data, alpha, n_weights, self._bias, self._sigma) for alpha in self._alphas
        ]
        self._scale = [loss_at_zero(loss.name, y, 1.0, sample_weight) for y in self._targets]
        self._tol = float(tol)
        self._gaps = [math.inf] * len(self._targets)
        self._pass_cost = int(data.indptr[-1])
        self.data_accesses = 0
        self.samples_per_iteration = m
        self.t = 0
        self.converged = False

    @property
    def duality_gap(self) -> float | None:
        """The sum over the runs of P(w) - D(alpha) after the last epoch (None before the first)."""
        return None if self.t == 0 else float(sum(self._gaps))

    def compile(self) -> None:
        y, alpha, w = self._targets[0], self._alphas[0], self._weights[0]
        order = np.arange(y.shape[0], dtype=np.int64)
        compile_for(
            sdca_epoch,
            self._data,
            y,
            self._sample_weight,
            order,
            self._sq_norms,
            alpha,
            w,
            self._code,
            self._bias,
            self._sigma,
        )
        compile_for(duality_gap, self._data, y, self._sample_weight, alpha, w, self._code, self._bias)

    def run(self, n: int) -> None:
        m = self.samples_per_iteration
        for _ in range(n):
            if self.converged:
                return
            order = self._rng.permutation(m)
            for o, (y, alpha, w) in enumerate(zip(self._targets, self._alphas, self._weights, strict=True)):
                if self._gaps[o] <= self._tol * self._scale[o]:
                    continue  # this output has converged; the others go on
                sdca_epoch(
                    self._data,
                    y,
                    self._sample_weight,
                    order,
                    self._sq_norms,
                    alpha,
                    w,
                    self._code,
                    self._bias,
                    self._sigma,
                )
                gap = duality_gap(self._data, y, self._sample_weight, alpha, w, self._code, self._bias)
                if not math.isfinite(gap):
                    raise FloatingPointError(
                        f"SDCA: the duality gap overflowed at epoch {self.t + 1}. Scale the "
                        "features (e.g. StandardScaler) or the targets."
                    )
                self._gaps[o] = gap
                self.data_accesses += 2 * self._pass_cost
            self.t += 1
            self.converged = all(
                gap <= self._tol * scale for gap, scale in zip(self._gaps, self._scale, strict=True)
            )

    def output_weights(self) -> np.ndarray:
        return np.stack(self._weights) * self._output_scale
