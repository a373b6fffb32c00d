"""Fixtures the solver tests share: both input layouts, and the real data sets."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from .oracles import l1_optimum


@pytest.fixture(params=["dense", "csr"])
def as_input(request):
    """Every solver test that takes this fixture runs on dense and CSR input alike."""
    if request.param == "dense":
        return lambda X: X.toarray() if sp.issparse(X) else np.asarray(X)
    return lambda X: sp.csr_matrix(X)


@pytest.fixture(scope="session")
def a9a(data_dir):
    X, y = load_svmlight_file(str(data_dir / "a9a.train.svm"))
    X_test, y_test = load_svmlight_file(str(data_dir / "a9a.test.svm"), n_features=X.shape[1])
    return X, y, X_test, y_test


@pytest.fixture(scope="session")
def heart(data_dir):
    return load_svmlight_file(str(data_dir / "heart_scale.svm"))


@pytest.fixture(scope="session")
def abalone(data_dir):
    return load_svmlight_file(str(data_dir / "abalone.svm"))


@pytest.fixture(scope="session")
def heart_l1(heart):
    """heart with labels in {-1, +1}, its L1-regularised logistic optimum (sigma 1e-2) and weights."""
    X, y = heart
    y = np.where(y > 0, 1.0, -1.0)
    fopt, w = l1_optimum(X, y, loss="logistic", sigma=1e-2)
    return X, y, fopt, w


@pytest.fixture(scope="session")
def ijcnn1_subsample(data_dir):
    X, y = load_svmlight_file(str(data_dir / "ijcnn1.train.svm"))
    X_test, y_test = load_svmlight_file(str(data_dir / "ijcnn1.test.svm"), n_features=X.shape[1])
    rng = np.random.default_rng(0)
    train = rng.choice(X.shape[0], 5000, replace=False)
    test = rng.choice(X_test.shape[0], 10000, replace=False)
    return X[train], y[train], X_test[test], y_test[test]
