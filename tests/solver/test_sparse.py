"""The row-access layer (solver._sparse): what reaches the kernels is a valid CSR matrix, checked and
measured in one pass, without copying canonical input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from solver import (
    PGSClassifier,
)
from solver._sparse import prepare

from .problems import binary_problem


def test_csr_with_out_of_range_column_indices_is_refused():
    """scipy does not check column indices on construction; the kernels must never see them."""
    X, y = binary_problem(n=40)
    bad = sp.csr_matrix(X)
    bad.indices[3] = -1
    with pytest.raises(ValueError, match=r"column indices outside \[0, 8\)"):
        PGSClassifier().fit(bad, y)
    bad.indices[3] = 8
    with pytest.raises(ValueError, match=r"column indices outside \[0, 8\)"):
        PGSClassifier().fit(bad, y)


def test_canonical_csr_is_used_without_a_copy_and_its_statistics_are_exact(as_input):
    X, y = binary_problem(n=40)
    X = as_input(X)
    data, stats = prepare(X)
    dense = X.toarray() if sp.issparse(X) else X
    source = X.data if sp.issparse(X) else X
    assert np.shares_memory(data.data, source)
    assert stats.sum_sq == pytest.approx(float(np.sum(dense.astype(np.float64) ** 2)))
    assert stats.n_values == np.count_nonzero(dense)
    assert stats.mean_sq == pytest.approx(stats.sum_sq / 40)


def test_unsorted_and_duplicate_indices_are_summed_on_a_copy():
    """Row 0 holds column 2 twice and row 1 is unsorted: the statistics are the matrix's, and the
    caller's matrix is left as it was."""
    X = sp.csr_matrix(
        (np.array([1.0, 2.0, 3.0, 4.0, 5.0]), np.array([2, 2, 3, 1, 0]), np.array([0, 3, 5])), shape=(2, 4)
    )
    before = X.indices.copy()
    data, stats = prepare(X)
    assert stats.sum_sq == pytest.approx(3.0**2 + 3.0**2 + 4.0**2 + 5.0**2)
    assert stats.n_values == 4
    assert list(data.indices) == [2, 3, 0, 1]
    np.testing.assert_array_equal(X.indices, before)


@pytest.mark.parametrize(
    ("indices", "indptr", "match"),
    [
        ([1, -1], [0, 2], r"column indices outside \[0, 3\)"),  # unsorted once sorted (signed)
        ([0, 1], [0, 1, 0, 2], "not a valid row pointer"),  # a row ending before it starts
        ([0, 1], [1, 1, 2], "not a valid row pointer"),  # not starting at 0
    ],
)
def test_malformed_csr_structure_is_refused(indices, indptr, match):
    X = sp.csr_matrix((np.ones(2), np.array([0, 1]), np.array([0, 1, 2])), shape=(2, 3))
    X.indices = np.array(indices, dtype=np.int32)
    X.indptr = np.array(indptr, dtype=np.int32)
    X._shape = (len(indptr) - 1, 3)
    with pytest.raises(ValueError, match=match):
        prepare(X)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("planted", [None, np.nan, np.inf, -np.inf])
def test_the_pass_agrees_with_numpy_on_values_empty_rows_and_stored_zeros(dtype, planted):
    """The one compiled pass against NumPy's own finite check and sums, on CSR with empty rows and
    explicitly stored zeros, and on the same values dense."""
    rng = np.random.default_rng(7)
    X = sp.random(300, 50, density=0.1, format="csr", random_state=3, dtype=dtype)
    X = (sp.diags((np.arange(300) % 7 != 0).astype(dtype)) @ X).tocsr()  # every 7th row empty
    X.eliminate_zeros()
    X.data[rng.random(X.nnz) < 0.1] = 0.0  # stored zeros: values, but not non-zero ones
    if planted is not None:
        X.data[rng.integers(X.nnz)] = planted
    for given in (X, X.toarray()):
        values = given.data if sp.issparse(given) else given
        if not np.isfinite(values).all():
            with pytest.raises(ValueError, match="Input X contains (NaN|infinity)"):
                prepare(given)
            continue
        _, stats = prepare(given)
        assert stats.sum_sq == pytest.approx(float(np.sum(values.astype(np.float64) ** 2)), rel=1e-12)
        assert stats.n_values == np.count_nonzero(values)
        assert stats.m == 300
    assert X.dtype == dtype and np.diff(X.indptr)[::7].sum() == 0 and np.count_nonzero(X.data) < X.nnz
