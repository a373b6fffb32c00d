"""Stochastic mirror descent made sparse (SMIDAS, L1 paper Algorithm 3) and truncated gradient.

Objective (1) of the L1 paper, as in ``solver.coordinate_descent``::

    (1/m) sum_i L(<w, x_i> + b; y_i) + sigma ||w||_1

Algorithm 3 keeps a dual vector theta and, per iteration on a sample i (or a minibatch, averaged),

    theta~ = theta - eta L'(<w, x_i>; y_i) x_i                      (mirror gradient step)
    theta_j = sign(theta~_j) max(0, |theta~_j| - eta sigma)  for all j   (truncation)
    w = f^-1(theta),   f^-1_j(theta) = sign(theta_j) |theta_j|^(p-1) / ||theta||_p^(p-2)     (eq. (12))

with p = 2 ln(d) the exponent of the DUAL side: f^-1 is the gradient of (1/2) ||theta||_p^2, the link
``solver.penalties`` describes with the PGS paper's q in the role of this p, and the primal norm
q = p/(p-1) of eq. (12) is close to 1. We use the paper's experimental choice p = ceil(2 ln d), d the
number of features (at least 2), which makes every power an integer power.

Truncated gradient (Langford et al. 2009, in the variant the L1 paper compares with in Section 4.2:
truncation by eta sigma at every step, no threshold) is the same iteration with the identity link,
which is f^-1 for p = 2. Both solvers therefore run one kernel, ``mirror_chunk``:

* p = 2 (``truncgrad``): theta is w, and the truncation of a coordinate no sample touches is
  deferred until it is read. k skipped truncations by eta sigma are one truncation by k eta sigma,
  so this is exact and an iteration costs O(nnz(x_i)).
* p > 2 (``smidas``): f^-1 couples every coordinate through ||theta||_p, so every non-zero theta_j
  is truncated and mapped at every iteration. The kernel keeps the list of non-zero coordinates
  and visits only those: O(nnz(x_i) + nnz(w)) per iteration, which is the sparsity SMIDAS is
  designed to keep, in a single pass that truncates, drops zeros and recomputes ||theta||_p exactly
  (no drift), relative to a scale that follows max |theta_j| so that |theta_j|^p cannot overflow.
  The weights are kept as w = C * PHI with one scalar C, as PGS keeps its w_t.

The intercept, when fitted, is the weight of a constant feature 1: it takes the mirror step like
the other coordinates (and, for p > 2, enters ||theta||_p) but is never truncated, so it is not
penalised. The model is the last iterate (the analysis uses a random one; the paper's experiments,
like this code, report the iterate itself, whose sparsity is the point).

Data accesses: each iteration counts the non-zeros of its samples once (they are read twice, for
<w, x_i> and for the step, as in every stochastic method here). Dense input counts every entry.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from ._sparse import KernelData, row_extent
from .compiling import compile_for
from .losses import UNWEIGHTED, Loss, loss_derivative, row_weight
from .penalties import integer_power, soft_threshold
from .sampling import InMemorySampler, Sampler

# Columns of the per-coordinate state (one row per coordinate): theta, and either w_j / C (p > 2) or
# the iteration up to which theta_j has been truncated (p = 2).
THETA, PHI, STAMP = range(3)
# Columns of the integer state: the list of non-zero coordinates (p > 2) and each one's slot in it.
ACTIVE, SLOT = range(2)
# Entries of the scalar state ``scal``.
S_T, S_ACTIVE, S_STATUS, S_COEF, S_REF = range(5)


class MirrorHyperParameters(NamedTuple):
    """What ``mirror_chunk`` needs to know of a run, fixed for the run."""

    loss: int  # the loss code (solver.losses)
    epsilon: float
    eta: float
    sigma: float
    p: int  # the link's exponent: 2 is the identity (truncated gradient)
    k: int  # samples per iteration
    bias: float  # the constant feature's value; 0 without an intercept


# ref follows max |theta_j| within this factor: r^p then stays within 2^(8p) <= 2^360 for p <= 45.
_REF_BAND = 256.0


@njit(cache=True)
def _weight(state, j, t, tau, coef, identity, bias_j):
    """w_j at the start of iteration t + 1. For the identity link this first applies the
    truncations that coordinate j has skipped since it was last read."""
    if not identity:
        return coef * state[j, PHI]
    if j != bias_j and state[j, STAMP] < t:
        state[j, THETA] = soft_threshold(state[j, THETA], tau * (t - state[j, STAMP]))
        state[j, STAMP] = t
    return state[j, THETA]


@njit(cache=True)
def _dual_step(state, members, j, delta, n_active, identity):
    """theta_j += delta; for p > 2 a coordinate that becomes non-zero joins the active list."""
    state[j, THETA] += delta
    if not identity and members[j, SLOT] < 0 and state[j, THETA] != 0.0:
        members[n_active, ACTIVE] = j
        members[j, SLOT] = n_active
        n_active += 1
    return n_active


@njit(cache=True)
def _link_power(state, j, theta, inv_ref, p):
    """PHI_j = sign(theta_j) r_j^(p-1) for r_j = |theta_j| / ref; returns r_j^p."""
    r = abs(theta) * inv_ref
    power = integer_power(r, p - 1)
    state[j, PHI] = power if theta > 0.0 else -power
    return power * r


@njit(cache=True)
def _truncate_and_link(state, members, n_active, tau, p, bias_j, ref):
    """For p > 2: truncate every active theta_j, drop the zeros, and map w = f^-1(theta) (eq. (12)).

    Relative to a scale ``ref``, with r_j = |theta_j| / ref and S = sum r_j^p, ||theta||_p = ref S^(1/p)
    and w_j = C PHI_j for PHI_j = sign(theta_j) r_j^(p-1) and C = ref S^((2-p)/p): one pass over the
    active coordinates. ``ref`` follows max |theta_j| within a factor _REF_BAND either way, so that
    r_j^p can neither overflow nor vanish for the largest coordinate. Returns
    (n_active, C, ref), with n_active = -1 if theta is no longer finite.
    """
    inv_ref = 1.0 / ref
    amax = 0.0
    total = 0.0
    a = 0
    while a < n_active:
        j = members[a, ACTIVE]
        theta = state[j, THETA]
        if not math.isfinite(theta):
            return -1, 0.0, ref
        if j != bias_j:
            theta = soft_threshold(theta, tau)
            state[j, THETA] = theta
        if theta == 0.0:
            # Swap the last active coordinate into slot a and look at slot a again.
            state[j, PHI] = 0.0
            n_active -= 1
            last = members[n_active, ACTIVE]
            members[a, ACTIVE] = last
            members[last, SLOT] = a
            members[j, SLOT] = -1
            continue
        total += _link_power(state, j, theta, inv_ref, p)
        amax = max(amax, abs(theta))
        a += 1
    if n_active == 0:
        return 0, 0.0, ref
    if not (1.0 / _REF_BAND <= amax * inv_ref <= _REF_BAND):
        # The largest |theta_j| moved 2^8-fold since ref was picked (rare): re-pick, map again.
        ref = amax
        inv_ref = 1.0 / ref
        total = 0.0
        for a in range(n_active):
            j = members[a, ACTIVE]
            total += _link_power(state, j, state[j, THETA], inv_ref, p)
    return n_active, ref * total ** ((2.0 - p) / p), ref


@njit(cache=True, inline="always")
def _margin(X, i, state, t, tau, coef, identity, bias_j, bias_value):
    """(<w, (x_i, bias_value)>, the non-zeros of row i read) at the start of iteration t + 1."""
    data, indices = X[0], X[1]
    start, end, base = row_extent(X, i)
    dot = 0.0
    for pos in range(start, end):
        dot += data[pos] * _weight(state, indices[pos - base], t, tau, coef, identity, bias_j)
    if bias_j >= 0:
        dot += bias_value * _weight(state, bias_j, t, tau, coef, identity, bias_j)
    return dot, end - start


@njit(cache=True)
def mirror_chunk(X, y, sample_weight, batches, hyp, state, members, scal):
    """Run ``len(batches) // k`` iterations of Algorithm 3 (identity link when p = 2).

    Returns the data accesses made; sets ``scal[S_STATUS]`` to 1 if the iterate stopped being
    finite (the caller raises).
    """
    data, indices = X[0], X[1]
    code = hyp.loss
    eps = hyp.epsilon
    eta = hyp.eta
    tau = eta * hyp.sigma
    p = hyp.p
    k = hyp.k
    bias_value = hyp.bias
    identity = p == 2
    bias_j = state.shape[0] - 1 if bias_value != 0.0 else -1
    t = int(scal[S_T])
    n_active = int(scal[S_ACTIVE])
    coef = scal[S_COEF]
    ref = scal[S_REF]
    step = np.empty(k)
    accesses = 0
    finite = True

    for it in range(batches.shape[0] // k):
        # v = L'(<w, x_i>; y_i) x_i, averaged over the minibatch, at the current w.
        for b in range(k):
            i = batches[it * k + b]
            dot, nnz = _margin(X, i, state, t, tau, coef, identity, bias_j, bias_value)
            accesses += nnz
            step[b] = eta * row_weight(sample_weight, i) * loss_derivative(code, dot, y[i], eps) / k
            finite = finite and math.isfinite(step[b])
        # theta~ = theta - eta v, on the minibatch's coordinates only.
        for b in range(k):
            g = step[b]
            if g == 0.0:
                continue
            i = batches[it * k + b]
            start, end, base = row_extent(X, i)
            for pos in range(start, end):
                n_active = _dual_step(state, members, indices[pos - base], -g * data[pos], n_active, identity)
            if bias_j >= 0:
                n_active = _dual_step(state, members, bias_j, -g * bias_value, n_active, identity)
        t += 1
        # The truncation of iteration t: deferred per coordinate for the identity link.
        if not identity:
            n_active, coef, ref = _truncate_and_link(state, members, n_active, tau, p, bias_j, ref)
            finite = finite and n_active >= 0
        if not finite:
            scal[S_STATUS] = 1.0
            break

    scal[S_T] = t
    scal[S_ACTIVE] = n_active
    scal[S_COEF] = coef
    scal[S_REF] = ref
    return accesses


def dual_exponent(n_features: int) -> int:
    """The L1 paper's p = ceil(2 ln d) (Section 4.3.3), at least 2 (where f^-1 is the identity)."""
    return max(2, math.ceil(2.0 * math.log(max(n_features, 1))))


class MirrorEngine:
    """Advances one mirror-descent run per output column (one-vs-rest) on shared minibatches.

    The samples come from ``sampler`` (``solver.sampling``; shard by shard when training streams),
    by default drawn uniformly with replacement from ``data`` and ``targets`` (shape
    (n_outputs, m)), which otherwise only give the kernel's argument types.
    """

    def __init__(
        self,
        data: KernelData,
        targets: np.ndarray,
        *,
        loss: Loss,
        epsilon: float,
        sigma: float,
        eta: float,
        p: int,
        batch_size: int,
        fit_intercept: bool,
        rng,
        sampler: Sampler | None = None,
        initial: np.ndarray | None = None,
    ):
        """``initial``: the weights to start from, one row per output, the intercept last (a
        warm start, ``start_from``); None: 0."""
        n_weights = data.n_features + int(fit_intercept)
        # Every field converted to its declared type: another type would compile another kernel.
        self.hyp = MirrorHyperParameters(
            loss=loss.code,
            epsilon=float(epsilon),
            eta=float(eta),
            sigma=float(sigma),
            p=int(p),
            k=int(batch_size),
            bias=1.0 if fit_intercept else 0.0,
        )
        targets = np.ascontiguousarray(targets, dtype=np.float64)
        self.sampler = sampler or InMemorySampler(data, targets, "replacement", rng)
        self._types = (data, targets[0])  # what mirror_chunk compiles for
        self.states = [np.zeros((n_weights, 3)) for _ in targets]
        self.members = [np.full((n_weights, 2), -1, dtype=np.int64) for _ in targets]
        self.scals = [np.array([0.0, 0.0, 0.0, 0.0, 1.0]) for _ in targets]
        self.batch_size = batch_size
        self.samples_per_iteration = batch_size
        self.t = 0
        self.data_accesses = 0
        if initial is not None:
            for o, w in enumerate(initial):
                self._start_from(o, np.asarray(w, dtype=np.float64))

    def _start_from(self, o: int, w: np.ndarray) -> None:
        """Output ``o``'s run starts at ``w`` (before its first iteration).

        The dual vector is theta = f(w), the inverse of eq. (12)'s link: f^-1 is the gradient of
        (1/2) ||theta||_p^2, so f is the gradient of the conjugate (1/2) ||w||_q^2, q = p / (p - 1),
        theta_j = sign(w_j) |w_j|^(q-1) / ||w||_q^(q-2) (for p = 2, q = 2 and theta = w). The
        active list and w = C PHI then follow from theta by one untruncated pass of the kernel's
        own map (tau = 0), so the first iteration reads exactly ``w``."""
        state, members, scal = self.states[o], self.members[o], self.scals[o]
        p = self.hyp.p
        if p == 2:
            state[:, THETA] = w  # the identity link; the truncations are due from t = 0 on
            return
        q = p / (p - 1.0)
        norm = float(np.linalg.norm(w, ord=q))
        if not (math.isfinite(norm) and norm > 0.0):
            return
        # |w_j|^(q-1) / ||w||_q^(q-2) as ||w||_q (|w_j| / ||w||_q)^(q-1): no overflow for q near 1.
        state[:, THETA] = np.sign(w) * norm * (np.abs(w) / norm) ** (q - 1.0)
        active = np.flatnonzero(state[:, THETA])
        members[: active.shape[0], ACTIVE] = active
        members[active, SLOT] = np.arange(active.shape[0])
        ref = float(np.max(np.abs(state[active, THETA])))
        bias_j = state.shape[0] - 1 if self.hyp.bias != 0.0 else -1
        n_active, coef, ref = _truncate_and_link(state, members, active.shape[0], 0.0, p, bias_j, ref)
        scal[S_ACTIVE], scal[S_COEF], scal[S_REF] = n_active, coef, ref

    def compile(self) -> None:
        data, y = self._types
        for state, members, scal in zip(self.states, self.members, self.scals, strict=True):
            compile_for(
                mirror_chunk, data, y, UNWEIGHTED, np.empty(0, dtype=np.int64), self.hyp, state, members, scal
            )
        self.sampler.compile()

    def run(self, n: int) -> None:
        for segment in self.sampler.draw(n * self.batch_size):
            for y, state, members, scal in zip(
                segment.targets, self.states, self.members, self.scals, strict=True
            ):
                self.data_accesses += mirror_chunk(
                    segment.data, y, segment.sample_weight, segment.rows, self.hyp, state, members, scal
                )
                if scal[S_STATUS]:
                    raise FloatingPointError(
                        f"{'truncated gradient' if self.hyp.p == 2 else 'SMIDAS'} diverged at "
                        f"iteration {int(scal[S_T])} (eta={self.hyp.eta:g}): the iterate is no "
                        "longer finite. Decrease eta (eta='auto' is safe for smooth losses) or "
                        "scale the features."
                    )
        self.t += n

    def output_weights(self) -> np.ndarray:
        """w at iteration t for every output, shape (n_outputs, n_weights)."""
        if self.hyp.p != 2:
            return np.stack(
                [scal[S_COEF] * state[:, PHI] for state, scal in zip(self.states, self.scals, strict=True)]
            )
        tau = self.hyp.eta * self.hyp.sigma
        out = []
        for state in self.states:
            theta = state[:, THETA].copy()
            n = theta.shape[0] - int(self.hyp.bias != 0.0)
            pending = tau * (self.t - state[:n, STAMP])
            theta[:n] = np.sign(theta[:n]) * np.maximum(np.abs(theta[:n]) - pending, 0.0)
            out.append(theta)
        return np.stack(out)
