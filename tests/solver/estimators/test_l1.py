"""The L1 estimators (solver.estimators.l1): parameters, one-vs-rest, regression."""

from __future__ import annotations

import pytest
from sklearn.datasets import load_iris, make_regression

from solver import (
    GCDClassifier,
    GCDRegressor,
    SCDClassifier,
    SCDRegressor,
    SMIDASClassifier,
    SMIDASRegressor,
    TruncGradClassifier,
    TruncGradRegressor,
)

CLASSIFIERS = [SCDClassifier, GCDClassifier, SMIDASClassifier, TruncGradClassifier]
REGRESSORS = [SCDRegressor, GCDRegressor, SMIDASRegressor, TruncGradRegressor]


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_multiclass_one_vs_rest(cls, as_input):
    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    clf = cls(sigma=1e-3, random_state=0, n_iter=20000).fit(as_input(X), y)
    assert clf.coef_.shape == (3, 4) and clf.score(as_input(X), y) > 0.8


@pytest.mark.parametrize("cls", REGRESSORS)
def test_regressors_learn_a_sparse_linear_function(cls):
    X, y, w = make_regression(
        n_samples=300, n_features=10, n_informative=3, coef=True, noise=0.01, random_state=0
    )
    y = y / y.std()
    reg = (
        cls(sigma=1e-3, random_state=0, n_iter=30000, eta=0.01)
        if "eta" in cls().get_params()
        else cls(sigma=1e-3, random_state=0, n_iter=3000)
    )
    reg.fit(X, y)
    assert reg.score(X, y) > 0.99
