"""Gradient descent, SGD and OGD for L2-regularised losses (lecture 22, Algorithms 1-3): one kernel.

Objective, lecture eq. (1), with the losses of ``solver.losses``::

    F(w) = (1/m) sum_i l(<w, x_i>; y_i) + sigma/2 ||w||_2^2

(``sigma`` is the lecture's lambda; with ``fit_intercept`` the bias is the weight of a constant
feature 1, regularised like the others, as in PGS.) All three algorithms take the step::

    w_{t+1} = w_t - eta_t (sigma w_t + (1/k) sum_{i in A_t} l'(<w_t, x_i>; y_i) x_i)
            = (1 - eta_t sigma) w_t - (eta_t / k) sum_{i in A_t} l'(<w_t, x_i>; y_i) x_i

and differ only in A_t and eta_t:

* ``gd``  (Algorithm 1): A_t = all m samples, eta_t = eta.
* ``sgd`` (Algorithm 2): A_t = k samples drawn uniformly with replacement, eta_t = eta.
* ``ogd`` (Algorithm 3): as sgd, eta_t = 1 / (sigma (t + t0)); t0 = 0 is the lecture's 1 / (lambda t)
  (the estimators default to PGS's t0="auto").

so ``sgd_chunk`` below is the one loop, parameterised by the schedule; the engine feeds it either
random minibatches or the whole data set. The output is the average (1/T) sum_{t=1}^T w_t, w_1 = 0,
as the three algorithms print it (or the last iterate w_{T+1}).

Cost per iteration O(k d) (d = non-zeros per sample), not O(n): the weights are kept as w = a * v
(Bottou; scikit-learn's WeightVector), so the shrinkage (1 - eta_t sigma) w_t is the scalar update
a <- a (1 - eta_t sigma), and only the coordinates the minibatch touches change in v. The running
sum of the iterates is kept lazily as SUM = U + P v with P = sum_s a_s (averaged SGD, Xu 2011): a
change dv_j of v_j costs U_j -= P dv_j. U, P are flushed (U += P v, P = 0) when P / a exceeds
``span``, which bounds the bits lost in U_j + P v_j to log2(span), and a is folded into v (v <- a v,
a <- 1) then and whenever a < 1e-9. Both cost O(n). P / a grows by about 1 per iteration for the
1 / (sigma t) steps, so a flush comes every ``span`` iterations (2^12, or more for wide data); for
a constant step it grows like (1 - eta sigma)^-t, and a flush or fold comes every
min(span, ln(span eta sigma) / (eta sigma)) iterations: often only when eta sigma is large.

OGD and PGS (p = 2) are the same iteration. With eta_t = 1 / (sigma (t + t0)) the update reads
(t + t0) w_{t+1} = (t + t0 - 1) w_t - g_t / sigma, so, with w_1 = 0 (lecture eq. (6))::

    w_{t+1} = -1 / (sigma (t + t0)) * sum_{s=1}^t g_s(w_s)

while PGS (Figure 1 with eq. (10), and ``t0`` as in ``solver.pgs``) sets
w^PGS_t = lambda_t / ((t + t0) sigma) with lambda_t = -sum_{s=1}^t g_s(w^PGS_{s-1}), w^PGS_0 = 0.
By induction w^PGS_t = w^OGD_{t+1} given the same samples and the same t0: the lecture's
Algorithm 3 (t0 = 0) is PGS with t0 = 0, and the paper's PGS (t0 = 1) is OGD with step
1 / (sigma (t + 1)). The averages differ only in their index range: PGS averages w_2..w_{T+1} of
OGD, OGD (like the lecture) w_1..w_T.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from ._sparse import KernelData, mean_row_nnz, row_extent
from .compiling import compile_for
from .losses import UNWEIGHTED, Loss, loss_derivative, row_weight
from .sampling import Sampler

# Columns of the per-coordinate state ``w`` (shape (n_weights, 2)): v, and U of the running sum.
V, U = range(2)
# Entries of the scalar state ``scal``: t, the scale a of w = a v, the prefix sum P, a status flag.
S_T, S_SCALE, S_PREFIX, S_STATUS = range(4)


class SGDHyperParameters(NamedTuple):
    """What ``sgd_chunk`` needs to know of a run, fixed for the run."""

    loss: int  # the loss code (solver.losses)
    sigma: float
    eta: float  # the constant step (unused when inverse_time)
    t0: float  # the offset of the step 1 / (sigma (t + t0)) (used when inverse_time)
    inverse_time: bool  # step 1 / (sigma (t + t0)) (Algorithm 3) rather than eta (Algorithms 1-2)
    bias: float  # the constant feature's value; 0 without an intercept
    k: int  # samples per iteration
    epsilon: float
    average: bool
    span: float  # see averaging_span


# v is folded into the scale when a falls below this (as scikit-learn's WeightVector does).
_FOLD_BELOW = 1e-9
# The lazy sum loses log2(P / a) bits; it is flushed once that passes 12 (or more for wide data,
# where a flush costs more; see ``averaging_span``).
_SPAN = 2.0**12


@njit(cache=True)
def _fold(w, prefix, a, average):
    """Flush the lazy sum into U (U += P v) and fold the scale a into v; w is then 1 * v."""
    for j in range(w.shape[0]):
        if average:
            w[j, U] += prefix * w[j, V]
        w[j, V] *= a


@njit(cache=True, inline="always")
def _row_dot(X, i, w, bias_value):
    """<v, (x_i, bias_value)>; the constant feature's weight is the last row of w."""
    data, indices = X[0], X[1]
    start, end, base = row_extent(X, i)
    dot = 0.0
    for pos in range(start, end):
        dot += data[pos] * w[indices[pos - base], V]
    if bias_value != 0.0:
        dot += bias_value * w[w.shape[0] - 1, V]
    return dot


@njit(cache=True, inline="always")
def _move_row(X, i, step, bias_value, w, prefix, average):
    """v += step (x_i, bias_value), and U -= P times that change, to keep U + P v (see above)."""
    data, indices = X[0], X[1]
    start, end, base = row_extent(X, i)
    for pos in range(start, end):
        j = indices[pos - base]
        delta = step * data[pos]
        w[j, V] += delta
        if average:
            w[j, U] -= prefix * delta
    if bias_value != 0.0:
        bias_j = w.shape[0] - 1
        delta = step * bias_value
        w[bias_j, V] += delta
        if average:
            w[bias_j, U] -= prefix * delta


@njit(cache=True)
def sgd_chunk(X, y, sample_weight, batches, n_steps, hyp, w, scal):
    """Run ``n_steps`` iterations from the state in ``w``/``scal`` (see the module docstring).

    Iteration ``it`` uses the samples ``batches[o:o + k]`` with ``o = (it * k) % len(batches)``:
    ``n_steps * k`` random indices for sgd/ogd, or ``arange(m)`` with k = m for gd. On return
    w_{t+1} = scal[S_SCALE] * w[:, V]; ``scal[S_STATUS]`` is 1 if the iterate stopped being finite.
    """
    code = hyp.loss
    sigma = hyp.sigma
    eta = hyp.eta
    t0 = hyp.t0
    inverse_time = hyp.inverse_time
    bias_value = hyp.bias  # 0 without an intercept
    k = hyp.k
    eps = hyp.epsilon
    average = hyp.average
    span = hyp.span
    period = batches.shape[0]

    t = int(scal[S_T])
    a = scal[S_SCALE]
    prefix = scal[S_PREFIX]
    grad = np.empty(k)

    for it in range(n_steps):
        t += 1
        offset = (it * k) % period
        # g_t = sigma w_t + (1/k) sum l'(<w_t, x_i>) x_i; first the loss derivatives at w_t = a v.
        total = 0.0
        for b in range(k):
            i = batches[offset + b]
            g = (
                row_weight(sample_weight, i)
                * loss_derivative(code, a * _row_dot(X, i, w, bias_value), y[i], eps)
                / k
            )
            grad[b] = g
            total += abs(g)
        if average:
            prefix += a  # w_t = a v joins the sum of w_1..w_t
        # The step eta_t of Algorithm 1/2 (constant) or 3 (1 / (sigma t), offset by t0).
        step = 1.0 / (sigma * (t + t0)) if inverse_time else eta
        # w <- (1 - eta_t sigma) w: the regulariser's part, O(1).
        a_next = a * (1.0 - step * sigma)
        if a_next < _FOLD_BELOW or (average and prefix > span * a_next):
            _fold(w, prefix, a_next, average)
            prefix = 0.0
            a_next = 1.0
        # ... - (eta_t / k) sum l' x_i: only the touched coordinates of v, and U to keep U + P v.
        scale = -step / a_next
        for b in range(k):
            g = grad[b]
            if g == 0.0:
                continue
            _move_row(X, batches[offset + b], scale * g, bias_value, w, prefix, average)
        a = a_next
        if not (math.isfinite(total) and math.isfinite(a)):
            scal[S_STATUS] = 1.0
            break

    scal[S_T] = t
    scal[S_SCALE] = a
    scal[S_PREFIX] = prefix


def averaging_span(mean_nnz: float, n_weights: int, batch_size: int) -> float:
    """How far P / a may grow before a flush: 2^12, or the iterations one O(n) pass is worth at
    ``mean_nnz`` non-zeros per row."""
    row_cost = max(mean_nnz, 1.0)
    return max(_SPAN, 16.0 * n_weights / (batch_size * row_cost))


class SGDState:
    """One run of ``sgd_chunk`` on one binary or regression problem, advanced chunk by chunk.

    Parameters
    ----------
    X : KernelData
    y : ndarray of shape (m,), float64
        Targets: +-1 for classification losses, real values for regression.
    loss, sigma, fit_intercept, batch_size, epsilon, average
        As in the estimators; ``batch_size`` is m for gd.
    eta : float
        The constant step (schedule "constant"); unused for "inverse_time".
    t0 : float
        The offset of the step 1 / (sigma (t + t0)) (schedule "inverse_time").
    mean_nnz : float or None
        The mean non-zeros per row of the whole training data (None: those of ``X``; see
        ``solver.pgs.PGSState``).
    sample_weight : ndarray of shape (m,) or empty
        The weights of ``X``'s rows in the loss (empty: unweighted).
    """

    def __init__(
        self,
        X: KernelData,
        y: np.ndarray,
        *,
        loss: Loss,
        sigma: float,
        eta: float,
        t0: float,
        schedule: str,
        fit_intercept: bool,
        batch_size: int,
        epsilon: float,
        average: bool,
        mean_nnz: float | None = None,
        sample_weight: np.ndarray = UNWEIGHTED,
    ):
        self.X = X
        self.y = y
        self.sample_weight = sample_weight
        n_weights = X.n_features + int(fit_intercept)
        # Every field converted to its declared type: another type would compile another kernel.
        self.hyp = SGDHyperParameters(
            loss=loss.code,
            sigma=float(sigma),
            eta=float(eta),
            t0=float(t0),
            inverse_time=schedule == "inverse_time",
            bias=1.0 if fit_intercept else 0.0,
            k=int(batch_size),
            epsilon=float(epsilon),
            average=bool(average),
            span=float(
                averaging_span(mean_row_nnz(X) if mean_nnz is None else mean_nnz, n_weights, batch_size)
            ),
        )
        self.w = np.zeros((n_weights, 2))
        self.scal = np.array([0.0, 1.0, 0.0, 0.0])

    @property
    def t(self) -> int:
        return int(self.scal[S_T])

    def start_from(self, w: np.ndarray) -> None:
        """Start the run at w_1 = ``w`` (the intercept last) instead of 0: a warm start. With
        w = a v and a = 1, v is ``w`` itself; the running sum U + P v starts empty, so the
        average counts ``w`` as w_1, as it counts 0 in a cold run. Only before the first
        iteration."""
        if self.t != 0:
            raise RuntimeError("start_from is only for a run that has not started")
        self.w[:, V] = w
        self.scal[S_SCALE] = 1.0

    def compile(self) -> None:
        """Load or compile ``sgd_chunk`` for this run's argument types (tracing.Engine.compile)."""
        compile_for(
            sgd_chunk, self.X, self.y, UNWEIGHTED, np.empty(0, dtype=np.int64), 0, self.hyp, self.w, self.scal
        )

    def run(
        self,
        batches: np.ndarray,
        n_steps: int,
        X: KernelData | None = None,
        y: np.ndarray | None = None,
        sample_weight: np.ndarray = UNWEIGHTED,
    ) -> None:
        """``n_steps`` iterations on ``batches``, sample indices into the rows of ``X``, ``y`` and
        ``sample_weight`` (by default the state's own; another block of rows, a shard, when
        training streams)."""
        sgd_chunk(
            self.X if X is None else X,
            self.y if y is None else y,
            self.sample_weight if X is None else sample_weight,
            batches,
            n_steps,
            self.hyp,
            self.w,
            self.scal,
        )
        if self.scal[S_STATUS]:
            raise FloatingPointError(
                f"the iterate is no longer finite at iteration {self.t} (sigma="
                f"{self.hyp.sigma:g}): the steps are too large for these features. Scale the "
                "features (e.g. StandardScaler or MaxAbsScaler), use a smaller eta (or eta='auto'),"
                " a larger sigma, or for ogd t0='auto'."
            )

    def current(self) -> np.ndarray:
        """w_{t+1}, the last iterate computed (w_1 = 0 before any iteration)."""
        return self.scal[S_SCALE] * self.w[:, V]

    def average(self) -> np.ndarray:
        """(w_1 + ... + w_t) / t, the output of Algorithms 1-3 (w_1 = 0 when t = 0)."""
        t = self.t
        if t == 0 or not self.hyp.average:
            return self.current()
        return (self.w[:, U] + self.scal[S_PREFIX] * self.w[:, V]) / t


class SGDEngine:
    """Advances one SGDState per output (one-vs-rest) on shared samples.

    With a ``sampler`` (sgd, ogd) each iteration reads ``batch_size`` samples it draws: uniform with
    replacement in memory, with the same calls to ``rng`` as ``solver.pgs.PGSEngine``, so both see
    the same samples for one seed (``solver.sampling``, which also streams shards). Without one
    (gd), every iteration reads all m rows of the states' own data
    (``samples_per_iteration = m``).
    """

    def __init__(self, states: list[SGDState], batch_size: int, output: str, sampler: Sampler | None):
        self.states = states
        self.batch_size = batch_size
        self.samples_per_iteration = batch_size
        self.output = output
        self.sampler = sampler
        self.t = 0

    def compile(self) -> None:
        for state in self.states:
            state.compile()
        if self.sampler is not None:
            self.sampler.compile()

    def run(self, n: int) -> None:
        if n <= 0:
            return
        if self.sampler is None:
            every_sample = np.arange(self.batch_size, dtype=np.int64)
            for state in self.states:
                state.run(every_sample, n)
        else:
            for segment in self.sampler.draw(n * self.batch_size):
                steps = segment.rows.shape[0] // self.batch_size
                for state, y in zip(self.states, segment.targets, strict=True):
                    state.run(segment.rows, steps, segment.data, y, segment.sample_weight)
        self.t += n

    def output_weights(self) -> np.ndarray:
        """Shape (n_outputs, n_weights): the average of w_1..w_t, or w_{t+1}."""
        if self.output == "average":
            return np.stack([state.average() for state in self.states])
        return np.stack([state.current() for state in self.states])
