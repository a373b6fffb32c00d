"""PGSClassifier / PGSRegressor (solver.estimators.pgs): parameters, input types, the model the
parameters describe, divergence."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.datasets import load_iris, make_regression

from solver import (
    PGSClassifier,
    PGSRegressor,
)

from ..problems import binary_problem


def test_regressor_rejects_classification_losses():
    X, y = make_regression(n_samples=50, n_features=3, random_state=0)
    with pytest.raises(ValueError, match="'loss' parameter of PGSRegressor.*'squared'.*Got 'logistic'"):
        PGSRegressor(loss="logistic").fit(X, y)


@pytest.mark.parametrize("p", [1.3, 2.0])
def test_float32_input_gives_the_model_of_the_same_values_in_float64(as_input, p):
    """The kernels compute in float64 whatever the input's type; so must the set-up (intercept
    scaling and t0 from E||x||^2 once drifted by 1e-7 when summed in float32)."""
    X, y = binary_problem(seed=1)
    X[np.abs(X) < 0.5] = 0.0
    X32 = X.astype(np.float32)
    params = dict(p=p, random_state=3, sigma=1e-3)
    single = PGSClassifier(**params).fit(as_input(X32), y)
    double = PGSClassifier(**params).fit(X32.astype(np.float64), y)
    assert single.intercept_scaling_ == pytest.approx(double.intercept_scaling_, rel=1e-14)
    assert single.t0_ == pytest.approx(double.t0_, rel=1e-14)
    np.testing.assert_allclose(single.coef_, double.coef_, rtol=1e-10, atol=1e-13)


def test_features_whose_squares_overflow_get_a_clear_error():
    X, y = binary_problem()
    with pytest.raises(ValueError, match="too large.*Scale the features"):
        PGSClassifier().fit(X * 1e160, y)


def test_multiclass_one_vs_rest(as_input):
    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    clf = PGSClassifier(sigma=1e-3, n_iter=20000, random_state=0).fit(as_input(X), y)
    assert clf.coef_.shape == (3, 4) and clf.intercept_.shape == (3,)
    assert clf.decision_function(as_input(X)).shape == (150, 3)
    proba = clf.predict_proba(as_input(X))
    np.testing.assert_allclose(proba.sum(1), 1.0)
    np.testing.assert_array_equal(proba.argmax(1), clf.predict(as_input(X)))
    assert clf.score(as_input(X), y) > 0.85


def test_squared_loss_classifier_predicts_by_sign():
    X, y = binary_problem()
    clf = PGSClassifier(loss="squared", sigma=1e-3, random_state=0).fit(X, y)
    scores = clf.decision_function(X)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[(scores > 0).astype(int)])


def test_regressor_learns_a_linear_function(as_input):
    X, y, w = make_regression(n_samples=400, n_features=5, noise=0.1, coef=True, random_state=0)
    y = y / np.std(y)
    reg = PGSRegressor(sigma=1e-6, n_iter=40000, random_state=0).fit(as_input(X), y)
    assert reg.score(as_input(X), y) > 0.99
    huber = PGSRegressor(loss="huber", sigma=1e-6, n_iter=40000, random_state=0).fit(X, y)
    assert huber.score(X, y) > 0.95


@pytest.mark.parametrize("p", [1.01, 1.05, 1.5, 2.0])
def test_small_p_and_small_sigma_stay_finite(p):
    X, y = binary_problem(n=500)
    X = X * 50.0  # unscaled features make lambda large
    clf = PGSClassifier(p=p, sigma=1e-9, n_iter=300000, radius=None, random_state=0).fit(X, y)
    assert np.all(np.isfinite(clf.coef_)) and np.isfinite(clf.intercept_).all()


@pytest.mark.parametrize("sigma", [1e-6, 1e-8])
def test_squared_loss_near_p_one_beats_the_zero_predictor_with_defaults(sigma):
    """p = 1.05 with t0="auto": steps sized by the first iterate's margin move, (p - 1) ||x||_q^2,
    are up to 1 / (p - 1) = 20 times too long once lambda concentrates, and the squared loss then
    oscillated far from its optimum (R^2 -60 at sigma 1e-6, -3,700 at 1e-8, inside the radius ball
    and without an error). Sized by the smoothness bound ||x||_q^2 the run stays stable."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 50)) * (rng.random((2000, 50)) < 0.3)
    y = X @ rng.normal(size=50) + 0.1 * rng.normal(size=2000)
    y /= y.std()
    reg = PGSRegressor(p=1.05, sigma=sigma, random_state=0).fit(X, y)
    assert reg.score(X, y) > 0.8


def test_divergence_raises_an_actionable_error():
    X, y = binary_problem()
    with pytest.raises(FloatingPointError, match="Scale the features.*increase sigma"):
        PGSRegressor(radius=None, t0=1.0, sigma=1e-8, random_state=0).fit(X * 1e150, y * 1.0)


def test_a_finite_but_exploding_iterate_is_divergence_too():
    """The paper's t0 = 1 without the ball lets the squared loss's iterates grow geometrically:
    they stayed finite (|coef| 1e163, R^2 = -inf) and the fit returned them without an error."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 50)) * (rng.random((2000, 50)) < 0.3)
    y = X @ rng.normal(size=50)
    with pytest.raises(FloatingPointError, match="margins near 1e100"):
        PGSRegressor(p=1.3, sigma=1e-3, t0=1.0, radius=None, n_iter=10**4, random_state=0).fit(X, y / y.std())


def test_random_output_is_the_paper_line_9():
    X, y = binary_problem()
    # With a single iteration the random iterate can only be w_1, the last one.
    one = dict(n_iter=1, random_state=0, fit_intercept=False)
    np.testing.assert_array_equal(
        PGSClassifier(output="random", **one).fit(X, y).coef_,
        PGSClassifier(output="last", **one).fit(X, y).coef_,
    )
    clf = PGSClassifier(output="random", t0=1.0, random_state=0).fit(X, y)
    assert clf.score(X, y) > 0.7 and math.isfinite(clf.coef_.sum())


@pytest.mark.parametrize("output", ["average", "random"])
def test_permutation_sampling_is_reproducible_and_chunk_independent(output):
    X, y = binary_problem(n=400)
    params = dict(sampling="permutation", output=output, random_state=4, sigma=1e-3)
    a = PGSClassifier(**params).fit(X, y)
    b = PGSClassifier(**params).fit(X, y, eval_set=(X, y))  # other chunk boundaries
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-12)
    assert a.score(X, y) > 0.8
    with pytest.raises(ValueError, match="'sampling'.*Got 'bootstrap'"):
        PGSClassifier(sampling="bootstrap").fit(X, y)


def test_intercept_scaling_auto_is_the_rms_of_the_non_zero_values(as_input):
    X, y = binary_problem(n=60)
    binary = (X > 0).astype(np.float64)
    assert PGSClassifier(n_iter=1).fit(as_input(binary), y).intercept_scaling_ == 1.0
    text_like = 0.1 * binary
    assert PGSClassifier(n_iter=1).fit(as_input(text_like), y).intercept_scaling_ == (
        pytest.approx(0.1, rel=1e-12)
    )
    assert PGSClassifier(n_iter=1, fit_intercept=False).fit(X, y).intercept_scaling_ == 0.0
    assert PGSClassifier(n_iter=1, intercept_scaling=0.5).fit(X, y).intercept_scaling_ == 0.5


def test_intercept_scaling_regularises_the_intercept_as_its_feature_weight():
    """With s, the objective of the trace is eq. (7) over (coef, b / s), and a small s shrinks b:
    the same data with a larger offset needs a larger b, which costs sigma / 2 (b / s)^2."""
    X, y = binary_problem(n=400)
    params = dict(sigma=1e-2, n_iter=40000, random_state=0, sampling="permutation")
    wide = PGSClassifier(intercept_scaling=1.0, **params).fit(X + 3.0, y, trace=True)
    narrow = PGSClassifier(intercept_scaling=0.1, **params).fit(X + 3.0, y, trace=True)
    assert abs(narrow.intercept_[0]) < abs(wide.intercept_[0])
    w = np.r_[narrow.coef_[0], narrow.intercept_[0] / 0.1]
    margins = (X + 3.0) @ narrow.coef_[0] + narrow.intercept_[0]
    labels = np.where(y == narrow.classes_[1], 1.0, -1.0)
    expected = 1e-2 / 2 * w @ w + np.mean(np.logaddexp(0.0, -labels * margins))
    assert narrow.trace_[-1].objective == pytest.approx(expected, rel=1e-10)


def test_resolved_t0_is_reported():
    X, y = binary_problem(n=100)
    assert PGSClassifier(t0=7.0, n_iter=1).fit(X, y).t0_ == 7.0
    assert PGSClassifier(n_iter=1).fit(X, y).t0_ > 1.0
