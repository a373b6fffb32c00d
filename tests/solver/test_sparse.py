"""The row-access layer (solver._sparse): what reaches the kernels is a valid CSR matrix."""

from __future__ import annotations

import pytest
import scipy.sparse as sp

from solver import (
    PGSClassifier,
)

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
