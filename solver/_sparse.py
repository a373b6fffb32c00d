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
    """The mean number of stored values per row (n for dense data): the cost of reading a row."""
    m = X.indptr.shape[0] - 1
    return float(X.indptr[-1]) / max(m, 1)


@njit(cache=True, inline="always")
def row_extent(X, i):
    """(start, end, base) of row i: its values are data[start:end], its features
    indices[pos - base] (see the module docstring)."""
    indptr, dense = X[2], X[3]
    start = indptr[i]
    end = indptr[i + 1]
    # A zero of start's own type: with unsigned indices (above) the literal 0 would make
    # Numba unify uint64 and int64 into float64.
    base = start if dense else start - start
    return start, end, base
