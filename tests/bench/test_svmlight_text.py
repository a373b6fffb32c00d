"""bench.datasets.svmlight_text, the fast writer bench.end_to_end's files are made with."""

from __future__ import annotations

import io

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from bench.datasets import svmlight_text


def test_svmlight_text_is_exact_for_a_known_matrix():
    X = sp.csr_matrix(([0.5, 1.0, 0.25], [0, 9, 3], [0, 1, 3]), shape=(2, 10))
    text = svmlight_text(X, np.array([1.0, -1.0]))
    assert text == b"+1 1:0.5000000\n-1 4:0.2500000 10:1.0000000\n"


def test_svmlight_text_reads_back_as_the_rows():
    X = sp.random(700, 1200, density=0.02, format="csr", random_state=0, dtype=np.float64) * 9.99
    y = np.where(np.random.default_rng(0).random(700) < 0.5, -1.0, 1.0)
    X_back, y_back = load_svmlight_file(io.BytesIO(svmlight_text(X, y)), n_features=X.shape[1])
    np.testing.assert_array_equal(y_back, y)
    assert abs(X_back - X).max() <= 5e-8


def test_svmlight_text_refuses_values_it_cannot_write():
    with pytest.raises(ValueError, match=r"\[0, 10\)"):
        svmlight_text(sp.csr_matrix([[-1.0]]), np.array([1.0]))
