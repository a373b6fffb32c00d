from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file


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
