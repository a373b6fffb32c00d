"""LBFGSClassifier / LBFGSRegressor (solver.estimators.lbfgs): parameters, one-vs-rest, regression."""

from __future__ import annotations

from sklearn.datasets import load_iris, make_regression

from solver import (
    LBFGSClassifier,
    LBFGSRegressor,
)


def test_multiclass_one_vs_rest(as_input):
    X, y = load_iris(return_X_y=True)
    clf = LBFGSClassifier(sigma=1e-3).fit(as_input(X), y)
    assert clf.coef_.shape == (3, 4) and clf.score(as_input(X), y) > 0.85


def test_regressor_learns_a_linear_function():
    Xr, yr = make_regression(n_samples=200, n_features=5, noise=0.1, random_state=0)
    reg = LBFGSRegressor(sigma=1e-6).fit(Xr, yr / yr.std())
    assert reg.score(Xr, yr / yr.std()) > 0.99
