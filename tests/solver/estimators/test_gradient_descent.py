"""GD, SGD and OGD estimators (solver.estimators.gradient_descent): parameters, one-vs-rest, traces and
the objective they share with PGS."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_iris, make_regression

from solver import (
    GDClassifier,
    GDRegressor,
    OGDClassifier,
    OGDRegressor,
    PGSRegressor,
    SGDClassifier,
    SGDRegressor,
)

from ..problems import binary_problem

CLASSIFIERS = (GDClassifier, SGDClassifier, OGDClassifier)
REGRESSORS = (GDRegressor, SGDRegressor, OGDRegressor)


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_multiclass_one_vs_rest(cls, as_input):
    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    clf = cls(sigma=1e-3, n_iter=300 if cls is GDClassifier else 20000, random_state=0)
    clf.fit(as_input(X), names)
    assert clf.coef_.shape == (3, 4) and clf.intercept_.shape == (3,)
    assert clf.score(as_input(X), names) > 0.85


def test_trace_time_budget_and_samples_per_iteration():
    X, y = binary_problem(n=2000)
    gd = GDClassifier(sigma=1e-3, n_iter=50).fit(X[:1500], y[:1500], eval_set=(X[1500:], y[1500:]))
    assert gd.trace_[-1].iteration == 50 and gd.trace_[-1].samples_seen == 50 * 1500
    assert gd.trace_[-1].test_score == pytest.approx(gd.score(X[1500:], y[1500:]))
    assert gd.trace_[-1].objective < gd.trace_[0].objective
    ogd = OGDClassifier(sigma=1e-3, n_iter=10**9, time_budget=0.2, random_state=0).fit(X, y)
    assert ogd.stop_reason_ == "time_budget" and 0 < ogd.n_iter_ < 10**9
    sgd = SGDClassifier(sigma=1e-3, n_iter=10**7, target_score=0.8, random_state=0)
    sgd.fit(X[:1500], y[:1500], eval_set=(X[1500:], y[1500:]))
    assert sgd.stop_reason_ == "target_score" and sgd.trace_[-1].test_score >= 0.8


def test_regressors_are_regressors():
    X, y = make_regression(n_samples=300, n_features=4, noise=0.1, random_state=0)
    y = y / y.std()
    for cls in REGRESSORS:
        reg = cls(sigma=1e-5, n_iter=2000 if cls is GDRegressor else 30000, random_state=0).fit(X, y)
        assert reg.score(X, y) > 0.99
        # same objective as PGS: sigma/2 ||w||^2 (p = 2) with the intercept regularised
        pgs = PGSRegressor(sigma=1e-5, intercept_scaling=1.0)
        w = np.r_[reg.coef_, reg.intercept_]
        assert reg._penalty(w) == pytest.approx(pgs._penalty(w), rel=1e-12)
