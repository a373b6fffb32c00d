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

``prepare`` checks the input and computes the statistics the step-size rules need in one compiled
pass (``_scan_values`` reads the values and column indices, ``_rows`` the row pointers): finite
values, a valid CSR structure (the kernels do not bounds-check), whether each row's column indices
strictly increase (scipy's canonical format: sorted, no duplicates), the sum of squared values and
the number of non-zero values. Canonical input is used as it is, with no copy, sort or
duplicate-summing; only input that is not canonical is copied and made so.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from numba import njit


class KernelData(NamedTuple):
    data: np.ndarray  # float32 or float64, 1-D
    indices: np.ndarray  # uint32 (uint64 for int64 input indices, only while it is checked)
    indptr: np.ndarray  # uint64
    dense: bool
    n_features: int


class DataStats(NamedTuple):
    """What the step-size rules read of the data, from ``prepare``'s one pass."""

    sum_sq: float  # sum of the squared values, in float64 (inf if it overflows)
    n_values: int  # values that are not 0 (explicitly stored zeros do not count)
    m: int

    @property
    def mean_sq(self) -> float:
        """E||x||^2 over the rows."""
        return self.sum_sq / max(self.m, 1)


# _rows's verdicts on the structure of a CSR matrix.
_CANONICAL, _NOT_CANONICAL, _BAD_INDEX, _BAD_INDPTR = range(4)


def prepare(X) -> tuple[KernelData, DataStats]:
    """View a 2-D float array or CSR matrix (of a dtype the estimators accept) as kernel arrays,
    checked, with its statistics; copies only input that is not canonical CSR.

    Raises ValueError for NaN or infinite values, column indices outside [0, n_features) and an
    ``indptr`` that is not a valid row pointer.
    """
    return _prepare(X, canonical_expected=False)


def _prepare(X, canonical_expected: bool) -> tuple[KernelData, DataStats]:
    if sp.issparse(X):
        X = X.tocsr()
        if X.indices.dtype != np.int32 and X.shape[1] >= np.iinfo(np.int32).max:
            raise ValueError(f"at most {np.iinfo(np.int32).max - 1} features are supported")
        # Unsigned views (see the module docstring): a negative index or row pointer becomes a
        # huge one, which the range checks of _rows refuse.
        unsigned = np.uint32 if X.indices.dtype == np.int32 else np.uint64
        data = KernelData(
            np.ascontiguousarray(X.data),
            np.ascontiguousarray(X.indices).view(unsigned),
            np.ascontiguousarray(X.indptr, dtype=np.int64).view(np.uint64),
            False,
            X.shape[1],
        )
    else:
        X = np.ascontiguousarray(X)
        m, n = X.shape
        data = KernelData(
            X.reshape(-1),
            np.arange(n, dtype=np.uint32),
            np.arange(m + 1, dtype=np.uint64) * np.uint64(n),
            True,
            n,
        )
    sum_sq, n_values, descents = _scan_values(data.data, data.indices, not data.dense)
    if not np.isfinite(sum_sq):
        _check_finite(data.data)  # NaN or inf, or only finite values whose squares overflow
    structure = _CANONICAL if data.dense else _rows(data.indices, data.indptr, data.n_features, descents)
    if structure == _NOT_CANONICAL and canonical_expected:
        # Indices that stay unsorted after sorting: negative ones, seen as unsigned.
        structure = _BAD_INDEX
    if structure == _BAD_INDEX:
        raise ValueError(
            f"X has column indices outside [0, {data.n_features}): not a valid CSR matrix of that shape"
        )
    if structure == _BAD_INDPTR:
        raise ValueError(
            f"X's indptr is not a valid row pointer for {data.data.shape[0]} stored values (it "
            "must start at 0, never decrease and end at the number of stored values)"
        )
    if structure == _NOT_CANONICAL:
        # Unsorted or duplicated column indices: the duplicates must be summed for the
        # statistics (a row's squared norm) to be those of the matrix.
        X = X.copy()
        X.sum_duplicates()
        return _prepare(X, canonical_expected=True)
    if data.indices.dtype != np.uint32:
        data = data._replace(indices=data.indices.view(np.int64).astype(np.int32).view(np.uint32))
    m = data.indptr.shape[0] - 1
    return data, DataStats(float(sum_sq), int(n_values), m)


def as_kernel_data(X) -> KernelData:
    """``prepare(X)`` without the statistics."""
    return prepare(X)[0]


def _check_finite(values: np.ndarray) -> None:
    """The messages of scikit-learn's own check, which ``prepare`` replaces."""
    if np.isnan(values).any():
        raise ValueError("Input X contains NaN.")
    if np.isinf(values).any():
        raise ValueError("Input X contains infinity or a value too large for dtype('float64').")


@njit(cache=True, fastmath={"reassoc", "contract"})
def _scan_values(data, indices, sparse):
    """(sum of squared values, count of non-zero values, descents), in one loop over the stored
    values and, for CSR (``sparse``), their column indices.

    The sums are in float64 whatever the data's type. NaN and inf make the sum non-finite, which the
    caller then examines: no branch in the loop, and ``reassoc`` lets the compiler vectorise the
    sums (NaN and inf still propagate). A descent is a column index not above its predecessor in
    the array: a canonical CSR matrix has them only where a row starts (``_rows``).
    """
    sum_sq = 0.0
    n_values = 0
    descents = np.int64(0)
    for pos in range(data.shape[0]):
        value = np.float64(data[pos])
        sum_sq += value * value
        n_values += value != 0.0
        # A loop-invariant test, which the compiler hoists out of the loop.
        if sparse and pos > 0:
            descents += np.int64(indices[pos] <= indices[pos - 1])
    return sum_sq, n_values, descents


@njit(cache=True)
def _rows(indices, indptr, n, descents):
    """The verdict on a CSR structure given the ``descents`` of its column indices: canonical when
    every row's indices strictly increase (the descents are all at row starts) and its last one is
    below ``n`` (so, unsigned, all of them lie in [0, n))."""
    m = indptr.shape[0] - 1
    if indptr[0] != 0 or indptr[m] != indices.shape[0]:
        return _BAD_INDPTR
    one = np.uint64(1)  # unsigned arithmetic throughout (see the module docstring)
    in_range = True
    for i in range(m):
        start, end = indptr[i], indptr[i + 1]
        if end < start:
            return _BAD_INDPTR
        if end == start:
            continue
        in_range &= indices[end - one] < n
        if start > 0:
            descents -= indices[start] <= indices[start - one]
    if descents != 0:
        return _NOT_CANONICAL  # range unknown: checked again once canonical
    return _CANONICAL if in_range else _BAD_INDEX


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
