"""Kernel PGS: the Primal Gradient Solver for p = 2 in a reproducing kernel Hilbert space.

PGS paper, Section VII ("The adoption of Kernel") and lecture 22, Section 3. For p = 2, Figure 1
with eq. (10) is w_t = lambda_t / ((t + t0) sigma), lambda_t = -sum_{s<=t} (1/k) sum_{i in A_s}
l'(<w_{s-1}, phi(x_i)>; y_i) phi(x_i). Every lambda_t is therefore a combination of the phi(x_i),
lambda_t = sum_i beta_i phi(x_i), and the solver keeps the m coefficients beta instead of w::

    <w_{t-1}, phi(x)> = 1 / ((t - 1 + t0) sigma) * sum_{j in S} beta_j K(x_j, x)      (prediction)
    beta_i <- beta_i - l'(<w_{t-1}, phi(x_i)>; y_i) / k   for i in A_t                (line 7)

with S the support set {j : beta_j ever non-zero}. The objective is the lecture's eq. (7),
sigma/2 ||w||^2 + (1/m) sum_i l(<w, phi(x_i)>; y_i), ||w||^2 = alpha^T K alpha for
w = sum_i alpha_i phi(x_i). With ``fit_intercept`` the bias is a constant feature 1 regularised like
the others (as in PGS): K(x, z) + 1 in place of K. Kernels (as in scikit-learn's SVC)::

    linear  <x, z>
    rbf     exp(-gamma ||x - z||^2)  = exp(-gamma (||x||^2 + ||z||^2 - 2 <x, z>))
    poly    (gamma <x, z> + coef0)^degree

What one iteration costs, and what is cached
--------------------------------------------
* The squared norms ||x_j||^2 (for rbf) are computed once per fit.
* The sample x_i is scattered into a dense buffer once per draw (O(d)), so K(x_i, x_j) costs one
  pass over x_j's non-zeros (O(d_j)) plus, for rbf, an exp.
* The support vectors are copied, in order of entry, into one contiguous block (X's layout), so that
  computing a kernel row streams through memory instead of gathering rows of X at random; beta is
  stored in the same order, so the sum over S reads both arrays contiguously.
* The kernel row K(x_i, x_S) is kept in a row cache of ``cache_size`` MB (direct-mapped, one row per
  slot, slot = i mod n_slots; like LIBSVM's cache, but without LRU). S only grows and rows follow
  its order, so a sample drawn again computes only the kernel values of the support vectors added
  since it was last drawn.

One iteration with k = 1 therefore costs

    O(|S| d)        on a cache miss (|S| kernel evaluations),
    O(|S| n_out)    on a hit (the cached row times beta; n_out = 1 for binary problems),

plus O(d) per support vector added since the row was cached, and O(k n_out) for the update. All
outputs of one-vs-rest share one kernel row. |S| grows to the number of distinct samples with a
non-zero loss derivative (every sample drawn, for the logistic and squared losses; the margin
violators, for the hinge), so unlike linear PGS the cost grows with m: the inverse time dependency
is lost, as Section VII says. Measured figures: docs/explanation/solvers-lecture.md.

Not cached: the decision values of all m samples (kept up to date they would cost O(m d) per
iteration, more than the O(|S| d) of a miss), and nothing across fits.

The running average of w_1..w_T is kept lazily as in ``solver.pgs``: AVG_p accumulates
beta_p (P - MARK_p), P = sum_s 1 / ((s + t0) sigma), and is flushed every few thousand iterations.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from numba import njit

from ._sparse import KernelData, row_extent
from .compiling import compile_for
from .losses import UNWEIGHTED, Loss, loss_derivative, row_weight

KERNELS = ("linear", "rbf", "poly")
LINEAR, RBF, POLY = range(3)


class KernelPGSHyperParameters(NamedTuple):
    """What ``kernel_pgs_chunk`` needs to know of a run, fixed for the run."""

    loss: int  # the loss code (solver.losses)
    sigma: float
    t0: float
    bias2: float  # 1 with an intercept (K + 1), else 0
    k: int  # samples per iteration
    epsilon: float
    average: bool
    kernel: int  # LINEAR, RBF or POLY
    gamma: float
    degree: int
    coef0: float


# Entries of the scalar state ``scal``.
S_T, S_PREFIX, S_NSV, S_EVALS, S_HITS = range(5)

# The lazy average loses log2(P / c_t) bits; it is flushed once that passes 12 (as in solver.pgs).
_SPAN = 2.0**12


@njit(cache=True, inline="always")
def kernel_value(kernel, dot, sq_a, sq_b, gamma, degree, coef0):
    """K(a, b) from <a, b> and the squared norms (the latter only for rbf)."""
    if kernel == LINEAR:
        return dot
    if kernel == RBF:
        return math.exp(-gamma * max(sq_a + sq_b - 2.0 * dot, 0.0))
    return (gamma * dot + coef0) ** degree


@njit(cache=True)
def row_norms(X):
    """||x_i||^2 of every row of a kernel-data tuple."""
    data, indptr = X[0], X[2]
    m = indptr.shape[0] - 1
    out = np.empty(m)
    for i in range(m):
        s = 0.0
        for pos in range(indptr[i], indptr[i + 1]):
            s += data[pos] * data[pos]
        out[i] = s
    return out


@njit(cache=True)
def _flush_average(beta, avg, mark, n_sv, prefix):
    for p in range(n_sv):
        for c in range(beta.shape[1]):
            avg[p, c] += beta[p, c] * (prefix - mark[p])
        mark[p] = 0.0


@njit(cache=True, inline="always")
def _cached_row(cache, i, n_sv):
    """(the row of sample i in the cache, how many of its first entries are valid); the slot is
    claimed for i with n_sv entries, which the caller computes from the first invalid one on."""
    rows, tags, lengths, scratch = cache
    n_slots = rows.shape[0]
    if n_slots == 0:
        return scratch, 0
    slot = i % n_slots
    first = lengths[slot] if tags[slot] == i else 0
    tags[slot] = i
    lengths[slot] = n_sv
    return rows[slot], first


@njit(cache=True, inline="always")
def _fill_row(X, i, sq_i, block, buf, row, first, n_sv, hyp):
    """row[p] = K(x_i, x_sv[p]) (+ the intercept's 1) for p = first..n_sv-1.

    x_i is scattered into the zeroed dense ``buf`` once, so that each kernel value costs one pass
    over the support vector's non-zeros; ``buf`` is zeroed again afterwards.
    """
    data, indices = X[0], X[1]
    sv_data, sv_indices, sv_sq = block[0], block[1], block[4]
    start, end, base = row_extent(X, i)
    for q in range(start, end):
        buf[indices[q - base]] = data[q]
    for p in range(first, n_sv):
        js, je, jb = row_extent(block, p)
        dot = 0.0
        for q in range(js, je):
            dot += sv_data[q] * buf[sv_indices[q - jb]]
        row[p] = kernel_value(hyp.kernel, dot, sq_i, sv_sq[p], hyp.gamma, hyp.degree, hyp.coef0) + hyp.bias2
    for q in range(start, end):
        buf[indices[q - base]] = 0.0


@njit(cache=True, inline="always")
def _derivatives(grad, b, beta, row, n_sv, c_prev, Y, c_i, i, hyp):
    """grad[b, c] = c_i l'(<w_{t-1}, phi(x_i)>; y_ic) / k for every output c (Figure 1, line 6),
    with c_i the row's weight; whether any is non-zero."""
    nonzero = False
    for c in range(beta.shape[1]):
        acc = 0.0
        for p in range(n_sv):
            acc += beta[p, c] * row[p]
        grad[b, c] = c_i * loss_derivative(hyp.loss, c_prev * acc, Y[i, c], hyp.epsilon) / hyp.k
        nonzero = nonzero or grad[b, c] != 0.0
    return nonzero


@njit(cache=True, inline="always")
def _new_support_vector(X, i, p, state, block, sq_i, prefix):
    """Number sample i as support vector p and copy its row to the end of the block."""
    data, indices = X[0], X[1]
    mark, sv, pos_of, buf = state[2], state[3], state[4], state[5]
    sv_data, sv_indices, sv_indptr, sv_sq = block[0], block[1], block[2], block[4]
    pos_of[i] = p
    sv[p] = i
    mark[p] = prefix
    sv_sq[p] = sq_i
    start, end, _ = row_extent(X, i)
    if X[3]:  # dense: the block's indices and indptr are X's (arange)
        at = p * buf.shape[0]
        for q in range(start, end):
            sv_data[at + q - start] = data[q]
    else:
        at = sv_indptr[p]
        for q in range(start, end):
            sv_data[at + q - start] = data[q]
            sv_indices[at + q - start] = indices[q]
        sv_indptr[p + 1] = at + end - start


@njit(cache=True, inline="always")
def _step_coefficients(state, p, grad, b, prefix, average):
    """beta_p -= grad[b] (Figure 1, line 7), after bringing p's share of the lazy average up to
    date."""
    beta, avg, mark = state[0], state[1], state[2]
    if average:
        for c in range(beta.shape[1]):
            avg[p, c] += beta[p, c] * (prefix - mark[p])
        mark[p] = prefix
    for c in range(beta.shape[1]):
        beta[p, c] -= grad[b, c]


@njit(cache=True)
def kernel_pgs_chunk(X, sq, Y, sample_weight, batches, hyp, state, block, cache, scal):
    """Run ``len(batches) // k`` iterations of kernel PGS from the given state.

    X : kernel-data tuple of the training set; sq : ||x_i||^2 (m,); Y : targets (m, n_out);
    sample_weight : the rows' weights in the loss (empty: unweighted, ``row_weight``).
    state = (beta, avg, mark, sv, pos, buf). The support vectors are numbered p = 0, 1, ... in order
    of entry (the first ``scal[S_NSV]``): sv[p] is the sample, pos[i] the number of sample i (-1:
    none), and beta, avg (m, n_out) and mark (m,) are indexed by p, so that the sum over the support
    set reads beta contiguously. buf (n_features,) is a zeroed scratch row.
    block = (data, indices, indptr, dense, sq): a copy of the support vectors, in the same order and
    layout as X (see ``solver._sparse``), and their squared norms, so that computing a kernel row
    streams through memory instead of gathering rows of X at random.
    cache = (rows, tags, lengths, scratch): rows (n_slots, m) hold K(x_i, x_sv[p]) (+ bias) for the
    sample tags[slot] (-1: none), valid for p < lengths[slot]; scratch (m,) serves when n_slots = 0.
    """
    sigma = hyp.sigma
    t0 = hyp.t0
    k = hyp.k
    average = hyp.average
    beta, avg, mark, pos_of, buf = state[0], state[1], state[2], state[4], state[5]

    t = int(scal[S_T])
    prefix = scal[S_PREFIX]
    n_sv = int(scal[S_NSV])
    evals = int(scal[S_EVALS])
    hits = int(scal[S_HITS])
    grad = np.empty((k, beta.shape[1]))
    touched = np.empty(k, dtype=np.bool_)

    for it in range(batches.shape[0] // k):
        t += 1
        # w_{t-1} = sum_p beta_p phi(x_sv[p]) / ((t - 1 + t0) sigma); w_0 = 0.
        c_prev = 1.0 / ((t - 1 + t0) * sigma) if n_sv > 0 else 0.0
        for b in range(k):
            i = batches[it * k + b]
            # The kernel row of x_i against the support set: cached, extended, or computed.
            row, first = _cached_row(cache, i, n_sv)
            hits += first
            if first < n_sv:
                _fill_row(X, i, sq[i], block, buf, row, first, n_sv, hyp)
                evals += n_sv - first
            touched[b] = _derivatives(
                grad, b, beta, row, n_sv, c_prev, Y, row_weight(sample_weight, i), i, hyp
            )
        # Line 7: lambda <- lambda - lambda_t, i.e. beta_i -= l'_i / k.
        for b in range(k):
            if not touched[b]:
                continue
            i = batches[it * k + b]
            p = pos_of[i]
            if p < 0:  # a new support vector: numbered, and copied to the end of the block
                p = n_sv
                _new_support_vector(X, i, p, state, block, sq[i], prefix)
                n_sv += 1
            _step_coefficients(state, p, grad, b, prefix, average)
        # w_t = beta / ((t + t0) sigma) joins the average.
        c_t = 1.0 / ((t + t0) * sigma)
        if average:
            if prefix > _SPAN * c_t:
                _flush_average(beta, avg, mark, n_sv, prefix)
                prefix = 0.0
            prefix += c_t

    scal[S_T] = t
    scal[S_PREFIX] = prefix
    scal[S_NSV] = n_sv
    scal[S_EVALS] = evals
    scal[S_HITS] = hits


class KernelPGSEngine:
    """Kernel PGS on one training set for every output at once (one-vs-rest shares kernel rows).

    The samples are drawn with the same calls to ``rng`` as ``solver.pgs.PGSEngine``, so with the
    linear kernel the two solvers compute the same iterates for one seed.
    """

    def __init__(
        self,
        X: KernelData,
        targets: np.ndarray,
        *,
        loss: Loss,
        sigma: float,
        t0: float,
        fit_intercept: bool,
        batch_size: int,
        epsilon: float,
        average: bool,
        kernel: str,
        gamma: float,
        degree: int,
        coef0: float,
        cache_bytes: float,
        rng,
        sample_weight: np.ndarray = UNWEIGHTED,
    ):
        m = X.indptr.shape[0] - 1
        self.sample_weight = sample_weight
        n_out = targets.shape[0]
        self.X = X
        self.m = m
        self.Y = np.ascontiguousarray(targets.T, dtype=np.float64)
        self.sq = row_norms(X)
        self.batch_size = batch_size
        self.samples_per_iteration = batch_size
        self.average = average
        self.rng = rng
        self.t = 0
        # Every field converted to its declared type: another type would compile another kernel.
        self.hyp = KernelPGSHyperParameters(
            loss=loss.code,
            sigma=float(sigma),
            t0=float(t0),
            bias2=1.0 if fit_intercept else 0.0,
            k=int(batch_size),
            epsilon=float(epsilon),
            average=bool(average),
            kernel=KERNELS.index(kernel),
            gamma=float(gamma),
            degree=int(degree),
            coef0=float(coef0),
        )
        self.state = (
            np.zeros((m, n_out)),
            np.zeros((m, n_out)),
            np.zeros(m),
            np.zeros(m, dtype=np.int64),
            np.full(m, -1, dtype=np.int64),
            np.zeros(X.n_features),
        )
        # The support vectors' copy: X's layout, so that row_extent serves both.
        if X.dense:
            self.block = (np.zeros_like(X.data), X.indices, X.indptr, True, np.zeros(m))
        else:
            self.block = (
                np.zeros_like(X.data),
                np.zeros_like(X.indices),
                np.zeros_like(X.indptr),
                False,
                np.zeros(m),
            )
        n_slots = int(min(m, cache_bytes // (8 * max(m, 1))))
        self.cache = (
            np.zeros((n_slots, m)),
            np.full(n_slots, -1, dtype=np.int64),
            np.zeros(n_slots, dtype=np.int64),
            np.zeros(0 if n_slots else m),
        )
        self.scal = np.zeros(5)

    @property
    def n_support(self) -> int:
        return int(self.scal[S_NSV])

    @property
    def kernel_evaluations(self) -> int:
        return int(self.scal[S_EVALS])

    @property
    def cache_hits(self) -> int:
        """Kernel values read from the row cache instead of computed."""
        return int(self.scal[S_HITS])

    def compile(self) -> None:
        compile_for(
            kernel_pgs_chunk,
            self.X,
            self.sq,
            self.Y,
            self.sample_weight,
            np.empty(0, dtype=np.int64),
            self.hyp,
            self.state,
            self.block,
            self.cache,
            self.scal,
        )

    def run(self, n: int) -> None:
        if n <= 0:
            return
        batches = self.rng.integers(0, self.m, size=n * self.batch_size)
        kernel_pgs_chunk(
            self.X,
            self.sq,
            self.Y,
            self.sample_weight,
            batches,
            self.hyp,
            self.state,
            self.block,
            self.cache,
            self.scal,
        )
        self.t += n
        if not np.isfinite(self.state[0][: self.n_support]).all():
            raise FloatingPointError(
                f"kernel PGS diverged at iteration {self.t}: the coefficients are no longer finite. "
                "Scale the features, increase sigma, or use t0='auto'."
            )

    def support(self) -> np.ndarray:
        """Indices of the support vectors, in order of entry."""
        return self.state[3][: self.n_support]

    def output_weights(self) -> np.ndarray:
        """alpha over the training samples, shape (n_outputs, m): w = sum_i alpha_i phi(x_i).

        The last iterate is beta / ((t + t0) sigma); the average of w_1..w_t is AVG / t with AVG
        brought up to date.
        """
        beta, avg, mark = self.state[0], self.state[1], self.state[2]
        n_sv, t = self.n_support, self.t
        alpha = np.zeros((beta.shape[1], self.m))
        if t == 0 or n_sv == 0:
            return alpha
        if self.average:
            pending = self.scal[S_PREFIX] - mark[:n_sv]
            coef = (avg[:n_sv] + beta[:n_sv] * pending[:, None]) / t
        else:
            coef = beta[:n_sv] / ((t + self.hyp.t0) * self.hyp.sigma)
        alpha[:, self.support()] = coef.T
        return alpha


# ---------------------------------------------------------------------------------------------
# Prediction: the same kernels with BLAS, in row blocks.


def gram(A, B, kernel: str, gamma: float, degree: int, coef0: float, sq_b: np.ndarray | None = None):
    """K(A, B), shape (len(A), len(B)); A and B dense or CSR with the same number of columns."""
    if sp.issparse(A) and sp.issparse(B):
        dot = (A @ B.T).toarray()
    else:
        dot = np.asarray(A @ B.T)
    K = np.asarray(dot, dtype=np.float64)
    if kernel == "linear":
        return K
    if kernel == "poly":
        K *= gamma
        K += coef0
        return np.power(K, degree, out=K)
    # exp(-gamma (||a||^2 + ||b||^2 - 2 <a, b>)), in place on the block
    K *= -2.0
    K += squared_norms(A)[:, None]
    K += (squared_norms(B) if sq_b is None else sq_b)[None, :]
    np.maximum(K, 0.0, out=K)
    K *= -gamma
    return np.exp(K, out=K)


def squared_norms(A) -> np.ndarray:
    if sp.issparse(A):
        return np.asarray(A.multiply(A).sum(axis=1), dtype=np.float64).ravel()
    A = np.asarray(A, dtype=np.float64)
    return np.einsum("ij,ij->i", A, A)


def kernel_scores(
    X,
    support_vectors,
    dual_coef: np.ndarray,
    kernel: str,
    gamma: float,
    degree: int,
    coef0: float,
    block_entries: int = 1 << 22,
    dense_entries: int = 1 << 23,
) -> np.ndarray:
    """sum_j dual_coef[c, j] K(support_vectors[j], x) for each row x of X: shape (len(X), n_out).

    Works on blocks of rows whose Gram block has about ``block_entries`` entries (32 MB; smaller
    blocks were slower, as multi-threaded BLAS pays a start-up per product). Sparse support
    vectors, and then the blocks of sparse X, are made dense when that takes at most
    ``dense_entries`` entries (64 MB): with few features (or few support vectors) a dense product
    (BLAS) beats a sparse one with a dense result.
    """
    m = X.shape[0]
    n_sv = support_vectors.shape[0]
    out = np.zeros((m, dual_coef.shape[0]))
    if n_sv == 0 or m == 0:
        return out
    sv = support_vectors
    if sp.issparse(sv) and sv.shape[0] * sv.shape[1] <= dense_entries:
        sv = sv.toarray()
    sv = sv.astype(np.float64, copy=False)
    sq_sv = squared_norms(sv) if kernel == "rbf" else None
    step = max(1, block_entries // n_sv)
    densify = sp.issparse(X) and not sp.issparse(sv) and step * X.shape[1] <= dense_entries
    for start in range(0, m, step):
        block = X[start : start + step]
        block = block.toarray() if densify else block.astype(np.float64, copy=False)
        out[start : start + step] = gram(block, sv, kernel, gamma, degree, coef0, sq_sv) @ dual_coef.T
    return out


def rows_of(X: KernelData, rows: np.ndarray):
    """The given rows of kernel data as a CSR matrix (dense input: a dense array)."""
    m = X.indptr.shape[0] - 1
    if X.dense:
        return X.data.reshape(m, X.n_features)[rows]
    full = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(m, X.n_features))
    return full[rows]
