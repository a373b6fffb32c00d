"""The Primal Gradient Solver (PGS paper, Figures 1 and 2) at O(k d) cost per iteration for every p.

Objective, eq. (7)::

    F(w) = sigma / (2 (p - 1)) * ||w||_p^2 + (1/m) * sum_i l(<w, x_i>; y_i),   p in (1, 2]

Figure 1 keeps lambda, the running sum of negated minibatch sub-gradients, and sets
``w_t = grad r*(lambda / ((t + 1) sigma))``. Figure 2 evaluates that gradient coordinate by coordinate,
which costs O(n) per iteration for p < 2. Its line 3, w^(j) = ||theta||_q^(2-q) |theta^(j)|^(q-1)
sgn(theta^(j)) / (q - 1) at theta = lambda / ((t + 1) sigma), factors into a scalar times a map of
lambda alone, and Hoelder's equality gives the norm (``solver.penalties`` has the link)::

    w_t = C_t * phi(lambda),   phi(x) = sgn(x) |x|^(q-1),   C_t = ||lambda||_q^(2-q) / ((q-1)(t+1) sigma)
    ||w_t||_p = (p - 1) ||lambda||_q / ((t + 1) sigma)

so that only the coordinates a minibatch touches change, and the scalar C_t absorbs both the
1/((t+1) sigma) decay and the projection onto the ball {||w||_p <= B}, a scaling by B / ||w_t||_p
(Figure 2, line 6 prints ||w_t||_q; the projection onto the p-norm ball is the p-norm's, as in the
Appendix, Corollary 2, eq. (28)). The sum S = sum_j |lambda_j|^q is updated with each touched
coordinate and recomputed exactly every ``refresh_every`` iterations, which removes floating-point
drift at amortised O(1) cost.

Numerical range. For p < 2, q = p / (p - 1) reaches 21 at p = 1.05, and |lambda_j|^q overflows for
|lambda_j| beyond about 1e14. ``phi`` and S are therefore kept relative to a power-of-two scale
``ref``: phi_j = sgn |lambda_j / ref|^(q-1), which the refresh re-picks when max |lambda / ref| leaves
[2^-8, 2^8] (and at once when a coordinate nears overflow). The products C * phi are independent of
``ref``.

The running average of w_1..w_T (``output="average"``) is kept lazily, with one number per
coordinate. With P_t = sum_{s <= t} rho_s C_s, summation by parts gives

    sum_{t <= T} rho_t C_t phi_t = P_T phi_T - sum_{t <= T} P_{t-1} (phi_t - phi_{t-1}),

so CORR_j accumulates P_{t-1} times each change of phi_j, in the same loop that makes the change,
and the weighted sum is P phi - CORR (scikit-learn's averaged SGD keeps its average the same way).
The weights rho_t = t^a give the plain mean for a = 0 and, for a = 1, the t-weighted average of
Lacoste-Julien, Schmidt and Bach (2012), which discounts the early iterates.

The per-coordinate state is three rows, PHI, LAM and CORR, rather than one record per
coordinate, since the dot products read only PHI (one-off comparison on the RCV1-like set: records
4-7% slower at p = 2, 3-6% faster at p = 1.8, whose update touches all three). For p = 2,
phi(lambda) = lambda (ref stays 1), so LAM is not kept.

``t0`` generalises the paper's (t + 1) sigma to (t + t0) sigma: t0 = 1 is Figure 1 exactly; a larger
t0 adds t0 - 1 rounds of pure regulariser to the follow-the-regularised-leader sum, which keeps the
objective and the logarithmic-regret argument (Lemma 1) while taming the first steps.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from ._sparse import KernelData, mean_row_nnz, row_extent
from .compiling import compile_for
from .losses import UNWEIGHTED, Loss, loss_derivative, row_weight
from .penalties import conjugate_exponent, link_power, link_quarters
from .sampling import Sampler

# Rows of the per-coordinate state array ``weights`` (shape (3, n_weights)): phi(lambda / ref),
# lambda (p < 2 only) and the correction of the lazy average.
PHI, LAM, CORR = range(3)
# Entries of the scalar state ``scal``.
S_T, S_COEF, S_SUMQ, S_REF, S_PREFIX, S_STATUS, S_PEAK, S_WSUM = range(8)
# The ``batches`` argument's type (PGSState.run), for compiling ahead of the first run.
_NO_ROWS = np.empty(0, dtype=np.uint64)


class PGSHyperParameters(NamedTuple):
    """What ``pgs_chunk`` needs to know of a run, fixed for the run (a record of scalars, which
    Numba's disk cache accepts, unlike a jitclass)."""

    loss: int  # the loss code (solver.losses)
    sigma: float
    q: float  # the dual exponent p / (p - 1)
    t0: float
    radius: float  # B, the ball's radius (inf: S = R^n)
    bias: float  # the constant feature's value s; 0 without an intercept
    k: int  # the minibatch size
    epsilon: float
    average: bool
    refresh_every: int  # S is recomputed exactly every this many iterations
    quarters: int  # link_quarters(q): link_power's fast path
    average_power: float
    max_norm: float  # ||w_t||_p above this counts as diverged


# S = sum |lambda_j / ref|^q above 2^900 triggers a refresh (p < 2), which re-picks ref: a single
# term below 2^900 cannot overflow, nor can a sum of up to 2^60 of them.
_OVERFLOW_AT = 2.0**900
# The refresh re-picks ref when max |lambda / ref| leaves [1 / _REF_BAND, _REF_BAND].
_REF_BAND = 256.0
# S += new - old carries an absolute error of about eps times the largest term ever added or
# removed since S was last exact. When that peak exceeds 2^12 S (a dominant term shrank: with
# q = 21, a 1.5-fold drop of the largest |lambda_j| divides its term by 2^12), S is recomputed.
_CANCEL_SPAN = 2.0**12
# The lazy average P phi_j - CORR_j loses about log2(P / C_t) bits to cancellation; for p < 2 a
# refresh restarts P once that passes 12. (C_t ~ ||lambda||_q^(2-q) / t shrinks fast while lambda
# grows when q is large, so this restart happens about once per 1.3- to 2-fold growth of lambda for
# p near 1, and every few thousand iterations for p near 2. For p = 2, C_t ~ 1 / t and the periodic
# refresh keeps P / C_t near refresh_every.)
_PREFIX_SPAN = 2.0**12


@njit(cache=True, inline="always")
def _move_coordinate(weights, j, delta, q, quarters, inv_ref, prefix, average):
    """lambda_j += delta, and CORR_j += P (phi_j's change) for the lazy average.

    Returns the change of S = sum |lambda_j / ref|^q and the term of S removed.
    (The state is one 2-D array, not three row views: each array argument of an inlined function
    costs Numba reference counts in the loop, which made the p = 1.8 update 50% slower.)
    """
    if q == 2.0:
        # phi = lambda (ref is 1 for p = 2): LAM is not kept.
        old = weights[PHI, j]
        new = old + delta
        weights[PHI, j] = new
        if average:
            weights[CORR, j] += prefix * delta
        return new * new - old * old, old * old
    old = weights[LAM, j]
    new = old + delta
    weights[LAM, j] = new
    a_old = abs(old) * inv_ref
    a_new = abs(new) * inv_ref
    magnitude = link_power(a_new, q, quarters)
    phi_new = magnitude if new >= 0.0 else -magnitude
    removed = a_old * abs(weights[PHI, j])
    if average:
        weights[CORR, j] += prefix * (phi_new - weights[PHI, j])
    weights[PHI, j] = phi_new
    return a_new * magnitude - removed, removed


@njit(cache=True, inline="always")
def _row_dot(X, i, weights, bias_value, with_sq):
    """(<phi, (x_i, bias_value)>, ||(x_i, bias_value)||^2 if ``with_sq`` (a constant) else 0)."""
    data, indices = X[0], X[1]
    start, end, base = row_extent(X, i)
    dot = bias_value * weights[PHI, weights.shape[1] - 1]
    sq = bias_value * bias_value
    for pos in range(start, end):
        value = data[pos]
        dot += value * weights[PHI, indices[pos - base]]
        if with_sq:
            sq += value * value
    return dot, sq


@njit(cache=True, inline="always")
def _move_row(X, i, g, bias_value, weights, q, quarters, inv_ref, prefix, average, track, sumq, peak):
    """lambda -= g (x_i, bias_value) over the non-zeros of row i and the constant feature (when
    bias_value != 0); returns (S, peak), updated when ``track`` (else the caller does)."""
    data, indices = X[0], X[1]
    start, end, base = row_extent(X, i)
    for pos in range(start, end):
        change, old = _move_coordinate(
            weights, indices[pos - base], -g * data[pos], q, quarters, inv_ref, prefix, average
        )
        if track:
            sumq += change
            peak = max(peak, old)
    if bias_value != 0.0:
        change, old = _move_coordinate(
            weights, weights.shape[1] - 1, -g * bias_value, q, quarters, inv_ref, prefix, average
        )
        if track:
            sumq += change
            peak = max(peak, old)
    return sumq, peak


@njit(cache=True, inline="always")
def _move_row_specialised(
    X, i, g, bias_value, weights, q, quarters, inv_ref, prefix, average, track, sumq, peak
):
    """``_move_row`` inlined once per case, with ``average``, ``track`` and (for p = 2, k = 1) q and
    ref = 1 as constants, so that the compiler drops the untaken work from each copy of the loop.

    Measured on rcv1_like (one-off interleaved runs of ``python -m bench.throughput``): a run-time
    ``average`` test inside the loop made the p = 2 update ~35% slower and the p = 1.8 one ~30%, a
    run-time q ~10%, and tracking S per coordinate ~7%. Each copy also costs compile time (a cold
    ``warm_up()``: 35 s with two copies, 66 s with these four, 84 s with a fifth and sixth for p = 2
    with k > 1), so p = 2 with minibatches takes the general copy.
    """
    if q == 2.0 and not track:
        if average:
            return _move_row(X, i, g, bias_value, weights, 2.0, 0, 1.0, prefix, True, False, sumq, peak)
        return _move_row(X, i, g, bias_value, weights, 2.0, 0, 1.0, prefix, False, False, sumq, peak)
    if average:
        return _move_row(X, i, g, bias_value, weights, q, quarters, inv_ref, prefix, True, True, sumq, peak)
    return _move_row(X, i, g, bias_value, weights, q, quarters, inv_ref, prefix, False, True, sumq, peak)


@njit(cache=True)
def _flush_average(weights, prefix):
    """Fold P phi into CORR so that the prefix sum P can restart at 0 (the caller resets P).

    Afterwards -CORR_j is the weighted sum so far, in units of w (independent of ``ref``); restarting
    P bounds the cancellation in P phi_j - CORR_j, and must precede any change of ``ref``.
    """
    phi, corr = weights[PHI], weights[CORR]
    for j in range(phi.shape[0]):
        corr[j] -= prefix * phi[j]


@njit(cache=True)
def _refresh(weights, q, quarters, ref):
    """The exact S = sum |lambda_j / ref|^q, after re-picking ``ref`` if needed (p < 2)."""
    phi, lam = weights[PHI], weights[LAM]
    n = phi.shape[0]
    sumq = 0.0
    if q == 2.0:
        for j in range(n):
            sumq += phi[j] * phi[j]
        return sumq, ref
    amax = 0.0
    for j in range(n):
        amax = max(amax, abs(lam[j]))
    scaled = amax / ref
    if amax > 0.0 and (scaled > _REF_BAND or scaled < 1.0 / _REF_BAND):
        ref = 2.0 ** math.ceil(math.log2(amax))
        for j in range(n):
            magnitude = link_power(abs(lam[j]) / ref, q, quarters)
            phi[j] = magnitude if lam[j] >= 0.0 else -magnitude
    inv_ref = 1.0 / ref
    for j in range(n):
        sumq += abs(lam[j]) * inv_ref * abs(phi[j])
    return sumq, ref


@njit(cache=True, inline="always")
def _update_by_dot(track, peak, sumq, g, row_sq, dot):
    """(peak, S) after lambda -= g x when S is not tracked coordinate by coordinate (p = 2, k = 1):
    ||lambda - g x||^2 = S - 2 g <lambda, x> + g^2 ||x||^2 in O(1). Unchanged when ``track``."""
    if track:
        return peak, sumq
    # S's rounding error is about eps times the largest of these terms (the middle one is at most
    # the sum of the other two).
    return max(peak, sumq, g * g * row_sq), sumq + g * (g * row_sq - 2.0 * dot)


@njit(cache=True, inline="always")
def _needs_refresh(t, refresh_every, q, sumq, peak):
    """Whether S is recomputed exactly after iteration t: periodically, when it nears overflow
    (p < 2), or when cancellation may have eaten its accuracy (see _CANCEL_SPAN)."""
    return (
        t == 1 or t % refresh_every == 0 or (q != 2.0 and sumq > _OVERFLOW_AT) or peak > _CANCEL_SPAN * sumq
    )


@njit(cache=True, inline="always")
def _iterate_scale(sumq, ref, q, offset_t, sigma, radius):
    """(C_t, ||w_t||_p) for w_t = C_t phi: Figure 1, line 8, and Figure 2 at offset_t = t + t0.

    w_t = grad r*(lambda / ((t + t0) sigma)); with S = sumq = sum |lambda_j / ref|^q,
    ||lambda||_q = ref S^(1/q). Then Figure 2, line 6 projects onto ||w||_p <= B by the scalar
    B / ||w_t||_p.
    """
    s = 1.0 / (offset_t * sigma)
    if sumq == 0.0:
        coef = 0.0
        norm_w = 0.0
    elif q == 2.0:
        norm_w = ref * math.sqrt(sumq) * s
        coef = ref * s
    else:
        # ||w_t||_p = (p - 1) ||lambda||_q s, and p - 1 = 1 / (q - 1).
        norm_w = ref * sumq ** (1.0 / q) * s / (q - 1.0)
        coef = ref * sumq ** ((2.0 - q) / q) * s / (q - 1.0)
    if norm_w > radius:
        coef *= radius / norm_w
    return coef, norm_w


@njit(cache=True, inline="always")
def _load_scalars(scal):
    """(t, C_t, S, ref, P, peak, sum of the average's weights) from the run's ``scal``."""
    return (
        int(scal[S_T]),
        scal[S_COEF],
        scal[S_SUMQ],
        scal[S_REF],
        scal[S_PREFIX],
        scal[S_PEAK],
        scal[S_WSUM],
    )


@njit(cache=True, inline="always")
def _store_scalars(scal, t, coef, sumq, ref, prefix, peak, wsum):
    """The inverse of ``_load_scalars``, at the end of a chunk."""
    scal[S_T] = t
    scal[S_COEF] = coef
    scal[S_SUMQ] = sumq
    scal[S_REF] = ref
    scal[S_PREFIX] = prefix
    scal[S_PEAK] = peak
    scal[S_WSUM] = wsum


@njit(cache=True, inline="always")
def _finish_iteration(hyp, weights, scal, t, sumq, ref, prefix, peak, wsum):
    """The rest of iteration t once lambda is updated: S recomputed when due, w_t = C_t phi
    (Figure 1, line 8, with Figure 2's projection) and the average's prefix sums.

    Returns (C_t, S, ref, P, peak, sum of the average's weights, whether the run diverged); a
    diverged run is also marked in ``scal[S_STATUS]`` (the caller stops).
    """
    q, average = hyp.q, hyp.average
    if _needs_refresh(t, hyp.refresh_every, q, sumq, peak):
        if average:
            _flush_average(weights, prefix)
            prefix = 0.0
        sumq, ref = _refresh(weights, q, hyp.quarters, ref)
        peak = sumq
    sumq = max(sumq, 0.0)
    coef, norm_w = _iterate_scale(sumq, ref, q, t + hyp.t0, hyp.sigma, hyp.radius)
    # The average weighs w_t by rho_t = t^a (a = 0: the plain mean of the iterates).
    avg_power = hyp.average_power
    # The default a = 2 as a product: pow() took ~6% of a p = 2 iteration (agaricus, a9a:
    # 148 -> 139 ns per iteration of 14-22 non-zeros).
    if avg_power == 2.0:
        rho = float(t) * float(t)
    elif avg_power == 1.0:
        rho = float(t)
    else:
        rho = 1.0 if avg_power == 0.0 else float(t) ** avg_power
    if average and q != 2.0 and prefix > _PREFIX_SPAN * rho * coef:
        _flush_average(weights, prefix)
        prefix = 0.0
    prefix += rho * coef
    wsum += rho
    # Diverged: not finite, or so large that margins near 1e100 are possible (PGSState).
    diverged = not (math.isfinite(coef) and math.isfinite(sumq)) or min(norm_w, hyp.radius) > hyp.max_norm
    if diverged:
        scal[S_STATUS] = 1.0
    return coef, sumq, ref, prefix, peak, wsum, diverged


@njit(cache=True)
def pgs_chunk(X, y, sample_weight, batches, hyp, weights, scal):
    """Run ``len(batches) // k`` iterations of Figure 1, continuing from the state in ``weights``/``scal``.

    ``batches`` holds the sample indices of A_t for each iteration, k at a time. On return ``scal``
    describes w_t = scal[S_COEF] * weights[PHI] for the last t; ``scal[S_STATUS]`` is 1 if the
    iterate stopped being finite or its p-norm passed ``hyp.max_norm`` (the caller raises).
    """
    code = hyp.loss
    q = hyp.q
    bias_value = hyp.bias  # 0 without an intercept
    k = hyp.k
    eps = hyp.epsilon
    average = hyp.average
    quarters = hyp.quarters
    # For p = 2 and k = 1, S = ||lambda||^2 follows from the sub-gradient's dot product in O(1):
    # ||lambda - g x||^2 = ||lambda||^2 - 2 g <lambda, x> + g^2 ||x||^2. Otherwise (p < 2, or
    # rows of one minibatch that share coordinates) S is updated coordinate by coordinate.
    track = not (q == 2.0 and k == 1)

    t, coef, sumq, ref, prefix, peak, wsum = _load_scalars(scal)
    inv_ref = 1.0 / ref
    grad = np.empty(k)

    for it in range(batches.shape[0] // k):
        t += 1
        # Figure 1, lines 4-6: lambda_t, the minibatch sub-gradient at w_{t-1} = coef * phi.
        for b in range(k):
            i = batches[it * k + b]
            if track:
                dot, row_sq = _row_dot(X, i, weights, bias_value, False)
            else:
                dot, row_sq = _row_dot(X, i, weights, bias_value, True)
            grad[b] = row_weight(sample_weight, i) * loss_derivative(code, coef * dot, y[i], eps) / k
        # Line 7: lambda <- lambda - lambda_t, touching only the minibatch's coordinates.
        for b in range(k):
            g = grad[b]
            if g == 0.0:
                continue
            i = batches[it * k + b]
            sumq, peak = _move_row_specialised(
                X, i, g, bias_value, weights, q, quarters, inv_ref, prefix, average, track, sumq, peak
            )
            peak, sumq = _update_by_dot(track, peak, sumq, g, row_sq, dot)
        coef, sumq, ref, prefix, peak, wsum, diverged = _finish_iteration(
            hyp, weights, scal, t, sumq, ref, prefix, peak, wsum
        )
        inv_ref = 1.0 / ref
        if diverged:
            break

    _store_scalars(scal, t, coef, sumq, ref, prefix, peak, wsum)


class PGSState:
    """The state of one PGS run on one binary or regression problem, advanced chunk by chunk.

    Parameters
    ----------
    X : KernelData
        The training data (see ``solver._sparse``).
    y : ndarray of shape (m,), float64
        Targets: +-1 for classification losses, real values for regression.
    loss, p, sigma, radius, fit_intercept, batch_size, t0, epsilon, average
        As in ``PGSClassifier``; ``radius`` is a number or ``math.inf``, ``average`` whether to
        maintain the running average of the iterates.
    intercept_scaling : float
        The value s of the constant feature that carries the intercept (when ``fit_intercept``).
        The vectors returned by ``current`` and ``average`` end with the intercept b = s w_b.
    average_power : float
        The average weighs iterate t by t^average_power (0: the plain mean).
    max_norm : float
        The run counts as diverged once ||w_t||_p passes this. The estimators pass 1e100 over the
        rows' root mean square q-norm, so by Hoelder typical margins |<w, x>| <= ||w||_p ||x||_q
        near 1e100 are possible: no model is meaningful there, and squared losses would overflow,
        yet the iterate itself is still finite.
    mean_nnz : float or None
        The mean non-zeros per row of the whole training data (None: those of ``X``), which sets
        how often S is recomputed; given when ``X`` is one shard of it, or a template without
        rows (``solver.sampling.TrainingShards.template``).

    ``run`` reads ``X`` and ``y`` unless given a block of rows of its own (a shard, when training
    streams): the iterate carries over from block to block.
    """

    def __init__(
        self,
        X: KernelData,
        y: np.ndarray,
        *,
        loss: Loss,
        p: float,
        sigma: float,
        radius: float,
        fit_intercept: bool,
        batch_size: int,
        t0: float,
        epsilon: float,
        average: bool,
        intercept_scaling: float = 1.0,
        average_power: float = 0.0,
        max_norm: float = math.inf,
        mean_nnz: float | None = None,
    ):
        self.X = X
        self.y = y
        n_weights = X.n_features + int(fit_intercept)
        q = conjugate_exponent(p)
        row_cost = (mean_row_nnz(X) if mean_nnz is None else mean_nnz) + int(fit_intercept)
        refresh_every = max(1, math.ceil(16.0 * n_weights / (batch_size * max(row_cost, 1.0))))
        # Every field converted to its declared type: another type would compile another kernel.
        self.hyp = PGSHyperParameters(
            loss=loss.code,
            sigma=float(sigma),
            q=float(q),
            t0=float(t0),
            radius=float(radius),
            bias=float(intercept_scaling) if fit_intercept else 0.0,
            k=int(batch_size),
            epsilon=float(epsilon),
            average=bool(average),
            refresh_every=int(refresh_every),
            quarters=link_quarters(q),
            average_power=float(average_power),
            max_norm=float(max_norm),
        )
        self.weights = np.zeros((3, n_weights))
        self.scal = np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0])
        # Maps the kernel's weights (the constant feature's weight last) to (coef, intercept).
        self._output_scale = np.ones(n_weights)
        if fit_intercept:
            self._output_scale[-1] = intercept_scaling
        self.fit_intercept = fit_intercept
        self.p = p

    @property
    def t(self) -> int:
        return int(self.scal[S_T])

    def start_from(self, w: np.ndarray) -> None:
        """Start the run at w_0 = ``w`` (laid out as ``current`` returns it) instead of 0: a warm
        start from a nearby problem's solution, e.g. the previous sigma of a regularisation path.

        lambda is set so that w_0 = grad r*(lambda / (t0 sigma)) = w, i.e. lambda = t0 sigma
        grad r(w) with grad r(w) = ||w||_p^(2-p) sgn(w) |w|^(p-1) / (p - 1): w then weighs in the
        follow-the-regularised-leader sum like t0 rounds at w, and every later step is the one a
        cold run takes. Only before the first iteration."""
        if self.t != 0:
            raise RuntimeError("start_from is only for a run that has not started")
        w = np.asarray(w, dtype=np.float64) / self._output_scale  # the constant feature's weight
        p, q = self.p, self.hyp.q
        norm = float(np.linalg.norm(w, ord=p))
        if not (math.isfinite(norm) and norm > 0.0):
            return  # from 0, as a cold run
        lam = (
            self.hyp.t0 * self.hyp.sigma * norm ** (2.0 - p) * np.sign(w) * np.abs(w) ** (p - 1.0) / (p - 1.0)
        )
        if q == 2.0:
            ref = 1.0
            self.weights[PHI] = lam
        else:
            # phi and S relative to a power-of-two scale, as _refresh keeps them.
            ref = 2.0 ** math.ceil(math.log2(float(np.max(np.abs(lam)))))
            self.weights[LAM] = lam
            self.weights[PHI] = np.sign(lam) * np.abs(lam / ref) ** (q - 1.0)
        sumq = float(np.sum(np.abs(lam / ref) ** q))
        coef, _ = _iterate_scale(sumq, ref, q, self.hyp.t0, self.hyp.sigma, self.hyp.radius)
        self.scal[S_COEF], self.scal[S_SUMQ], self.scal[S_REF], self.scal[S_PEAK] = coef, sumq, ref, sumq

    def compile(self) -> None:
        """Load or compile ``pgs_chunk`` for this run's argument types (tracing.Engine.compile)."""
        compile_for(pgs_chunk, self.X, self.y, UNWEIGHTED, _NO_ROWS, self.hyp, self.weights, self.scal)

    def run(
        self,
        batches: np.ndarray,
        X: KernelData | None = None,
        y: np.ndarray | None = None,
        sample_weight: np.ndarray = UNWEIGHTED,
    ) -> None:
        """Advance by ``len(batches) // batch_size`` iterations (``batches``: sample indices into
        the rows of ``X``, ``y`` and ``sample_weight``; by default the state's own, unweighted)."""
        # Unsigned, like the data's index arrays (solver/_sparse.py): no sign tests in the kernel.
        rows = np.ascontiguousarray(batches, dtype=np.int64).view(np.uint64)
        pgs_chunk(
            self.X if X is None else X,
            self.y if y is None else y,
            sample_weight,
            rows,
            self.hyp,
            self.weights,
            self.scal,
        )
        if self.scal[S_STATUS]:
            raise FloatingPointError(
                f"PGS diverged at iteration {self.t} (p={self.p}, sigma={self.hyp.sigma:g}): the "
                "iterate is no longer finite, or large enough for margins near 1e100. Scale the "
                "features (e.g. MaxAbsScaler or StandardScaler), increase sigma, keep "
                "radius='auto' (an unbounded domain lets the squared loss blow up), or use a p "
                "closer to 2."
            )

    def current(self) -> np.ndarray:
        """w_t, the last iterate, as a dense vector of length n_weights (intercept last)."""
        return self.scal[S_COEF] * self.weights[PHI] * self._output_scale

    def dual(self) -> np.ndarray:
        """lambda, the sum of the negated minibatch sub-gradients (Figure 1, line 7)."""
        if self.hyp.q == 2.0:
            return self.weights[PHI] * self.scal[S_REF]
        return self.weights[LAM].copy()

    def average(self) -> np.ndarray:
        """sum_t rho_t w_t / sum_t rho_t, or the last iterate when averaging was not requested or
        t = 0."""
        if not self.hyp.average or self.t == 0:
            return self.current()
        total = self.scal[S_PREFIX] * self.weights[PHI] - self.weights[CORR]
        return total * (self._output_scale / self.scal[S_WSUM])


class PGSEngine:
    """Advances one PGSState per output column (one-vs-rest for multiclass) on shared minibatches,
    drawn by ``sampler`` (``solver.sampling``: all rows in memory, or shard by shard).

    ``output="random"`` is Figure 1, line 9: a uniformly random iterate among w_1..w_t, kept by
    reservoir sampling so that it stays uniform however early the run stops. Iterate s replaces the
    kept one with probability 1/s; the next replacement time after t is floor(t / u) + 1 for
    u ~ U(0, 1], which costs one O(n) snapshot per replacement, about ln(T) in all.
    """

    def __init__(self, states: list[PGSState], sampler: Sampler, batch_size: int, output: str, rng):
        self.states = states
        self.sampler = sampler
        self.batch_size = batch_size
        self.samples_per_iteration = batch_size
        self.output = output
        self.rng = rng
        self.t = 0
        self._next_pick = 1
        self._picked: np.ndarray | None = None

    def compile(self) -> None:
        for state in self.states:
            state.compile()
        self.sampler.compile()

    def run(self, n: int) -> None:
        target = self.t + n
        while self.t < target:
            stop = min(target, self._next_pick) if self.output == "random" else target
            for segment in self.sampler.draw((stop - self.t) * self.batch_size):
                for state, y in zip(self.states, segment.targets, strict=True):
                    state.run(segment.rows, segment.data, y, segment.sample_weight)
            self.t = stop
            if self.output == "random" and self.t == self._next_pick:
                self._picked = np.stack([state.current() for state in self.states])
                u = 1.0 - self.rng.random()
                self._next_pick = math.floor(self.t / u) + 1

    def output_weights(self) -> np.ndarray:
        """Shape (n_outputs, n_weights): the predictor ``output`` asks for, at iteration t."""
        if self.output == "random" and self._picked is not None:
            return self._picked
        if self.output == "average":
            return np.stack([state.average() for state in self.states])
        return np.stack([state.current() for state in self.states])
