"""The one row-access layer every kernel uses, for CSR and dense input alike.

A kernel sees a data set as the tuple ``(data, indices, indptr, dense)``:

* CSR: the matrix's own arrays; the features of row i are ``indices[pos]`` for
  ``pos in range(indptr[i], indptr[i + 1])``.
* dense (C-contiguous, shape (m, n)): ``data`` is the matrix raveled (a view, no copy),
  ``indices = arange(n)`` and ``indptr = arange(0, m*n + 1, n)``; the feature of position ``pos``
  is ``indices[pos - indptr[i]]``.

``row_extent`` returns ``(start, end, base)`` so that the loop ``indices[pos - base]`` serves both
(``base`` is 0 for CSR), with no branch inside the loop over a row's non-zeros. Sparse input is never
densified; dense input costs O(m + n) extra memory.

``indices`` and ``indptr`` are unsigned (uint32, uint64; views of the validated arrays, no copy).
Numba wraps negative indices around, so with signed index arrays every ``w[indices[pos]]`` and
``data[pos]`` carries a sign test; unsigned ones spare it, which made the PGS update 20% faster and
a bare sparse dot + axpy loop 25% faster on the RCV1-like set (bench.throughput). Kernels must keep
index arithmetic unsigned: Numba turns uint64 mixed with int64 into float64.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from numba import njit


class KernelData(NamedTuple):
    data: np.ndarray  # float32 or float64, 1-D
    indices: np.ndarray  # uint32
    indptr: np.ndarray  # uint64
    dense: bool
    n_features: int


def as_kernel_data(X) -> KernelData:
    """View a validated 2-D float array or CSR matrix as kernel arrays (copies only what it must)."""
    if sp.issparse(X):
        X = X.tocsr()
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
        indices = X.indices
        # The kernels do not bounds-check (and read these as unsigned): a malformed CSR must stop
        # here. Two reductions, ~5 ms for the 15.7M non-zeros of rcv1_like.
        if indices.size and (indices.min() < 0 or indices.max() >= X.shape[1]):
            raise ValueError(
                f"X has column indices outside [0, {X.shape[1]}): not a valid CSR matrix of that shape"
            )
        if indices.dtype != np.int32:
            if X.shape[1] >= np.iinfo(np.int32).max:
                raise ValueError(f"at most {np.iinfo(np.int32).max - 1} features are supported")
            indices = indices.astype(np.int32)
        return KernelData(
            np.ascontiguousarray(X.data),
            np.ascontiguousarray(indices).view(np.uint32),
            np.ascontiguousarray(X.indptr, dtype=np.int64).view(np.uint64),
            False,
            X.shape[1],
        )
    X = np.ascontiguousarray(X)
    m, n = X.shape
    return KernelData(
        X.reshape(-1),
        np.arange(n, dtype=np.uint32),
        np.arange(m + 1, dtype=np.uint64) * np.uint64(n),
        True,
        n,
    )


def mean_row_nnz(X: KernelData) -> float:
    m = X.indptr.shape[0] - 1
    return float(X.indptr[-1]) / max(m, 1)


def mean_sq_row_norm(X: KernelData, constant: float) -> float:
    """E||x||^2 over the rows, plus constant^2 for the implicit constant feature of an intercept
    (0 without one).

    einsum, not np.dot: a dot product goes to multi-threaded BLAS, which cost ~8 ms per fit on a
    busy machine against ~0.2 ms here. Summed in float64 whatever the data's type, so that float32
    input gives the same intercept scaling and t0 as the same values in float64.
    """
    m = X.indptr.shape[0] - 1
    total = float(np.einsum("i,i->", X.data, X.data, dtype=np.float64))
    return total / max(m, 1) + constant * constant


def mean_sq_dual_norm(X: KernelData, q: float, constant: float, max_rows: int = 4096) -> float:
    """E||(x, constant)||_q^2 over the rows, estimated on at most ``max_rows`` evenly spaced rows.

    An estimate suffices for what it is used for (the first step of t0="auto"), and a sample keeps
    the |x|^q powers off the whole data set.
    """
    m = X.indptr.shape[0] - 1
    if m == 0:
        return constant * constant
    return _mean_sq_q_norm(X, _evenly_spaced_rows(m, max_rows), q, abs(constant))


def _evenly_spaced_rows(m: int, count: int) -> np.ndarray:
    """At most ``count`` row indices spread evenly over 0..m-1, unsigned like the kernels' indices."""
    return np.unique(np.linspace(0, m - 1, min(m, count)).astype(np.int64)).view(np.uint64)


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


def mean_dual_curvature(X: KernelData, g0: np.ndarray, q: float, constant: float,
                        max_rows: int = 4096) -> float:
    """E_x sum_j (|theta_j| / ||theta||_q)^(q-2) x_j^2 over the rows (and the constant feature),
    with theta = sum_i g0_i (x_i, constant), estimated on at most ``max_rows`` evenly spaced rows;
    theta itself is summed over every row. 0 if theta is 0.

    This is the curvature of r*(theta) = (p - 1) / 2 ||theta||_q^2 along a row x, less a term
    that is never positive, at the dual point theta: how far a step moves a margin once the first
    steps have put their mass in lambda (``PGSClassifier._margin_gain`` says why).
    """
    m = X.indptr.shape[0] - 1
    if m == 0:
        return 0.0
    return _mean_dual_curvature(X, np.ascontiguousarray(g0, dtype=np.float64),
                                _evenly_spaced_rows(m, max_rows), q, constant)


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
    # Powers of |theta_j| / max |theta|, then divided by ||theta||_q: no overflow for any q.
    largest = abs(theta_constant)
    for j in range(theta.shape[0]):
        largest = max(largest, abs(theta[j]))
    if largest == 0.0:
        return 0.0
    norm = (abs(theta_constant) / largest) ** q
    for j in range(theta.shape[0]):
        norm += (abs(theta[j]) / largest) ** q
    norm = norm ** (1.0 / q) * largest
    weight = np.empty_like(theta)
    for j in range(theta.shape[0]):
        weight[j] = (abs(theta[j]) / norm) ** (q - 2.0)
    weight_constant = (abs(theta_constant) / norm) ** (q - 2.0)
    total = 0.0
    for i in rows:
        start, end, base = row_extent(X, i)
        acc = weight_constant * constant * constant
        for pos in range(start, end):
            value = data[pos]
            acc += weight[indices[pos - base]] * value * value
        total += acc
    return total / rows.shape[0]


@njit(cache=True, inline="always")
def row_extent(X, i):
    indptr, dense = X[2], X[3]
    start = indptr[i]
    end = indptr[i + 1]
    # A zero of start's own type: with unsigned indices (see PGSState) the literal 0 would make
    # Numba unify uint64 and int64 into float64.
    base = start if dense else start - start
    return start, end, base
