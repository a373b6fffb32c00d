"""Kernel PGS (PGS paper Section VII, lecture 22 Section 3; solver.kernel_pgs): a NumPy reference with the
full Gram matrix, the linear kernel against PGS, convergence to the exact RKHS optimum, and accuracy
beyond the linear model."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_iris, make_circles, make_classification

from solver import (
    KernelPGSClassifier,
    KernelPGSRegressor,
    PGSClassifier,
)

from .oracles import kernel_optimum
from .problems import kernel_problem
from .reference import gram, reference_kernel_pgs

SIGMA = 0.05


def _alpha(est, m):
    alpha = np.zeros((est.dual_coef_.shape[0], m))
    alpha[:, est.support_] = est.dual_coef_
    return alpha


@pytest.mark.parametrize("cache_size", [0.0, 0.001, 100.0])  # none, 3 rows (collisions), all rows
@pytest.mark.parametrize(
    ("kernel", "loss", "k", "fit_intercept"),
    [
        ("rbf", "logistic", 1, True),
        ("rbf", "hinge", 3, False),
        ("poly", "squared_hinge", 1, True),
        ("poly", "smooth_hinge", 2, True),
        ("linear", "squared", 1, False),
    ],
)
def test_matches_the_gram_matrix_reference(kernel, loss, k, fit_intercept, cache_size, as_input):
    X, y = kernel_problem()
    m, T, seed, t0 = X.shape[0], 150, 7, 4.0
    batches = np.random.default_rng(seed).integers(0, m, size=T * k).reshape(T, k)
    K = gram(X, kernel, fit_intercept=fit_intercept)
    alphas = reference_kernel_pgs(K, y, batches, loss=loss, sigma=SIGMA, t0=t0)
    params = dict(
        loss=loss,
        sigma=SIGMA,
        kernel=kernel,
        gamma=0.5,
        degree=3,
        coef0=1.0,
        batch_size=k,
        n_iter=T,
        t0=t0,
        fit_intercept=fit_intercept,
        random_state=seed,
        cache_size=cache_size,
    )
    for output, expected in (("last", alphas[-1]), ("average", np.mean(alphas, axis=0))):
        est = KernelPGSClassifier(output=output, **params).fit(as_input(X), y)
        alpha = _alpha(est, m)[0]
        np.testing.assert_allclose(alpha, expected, rtol=1e-12, atol=1e-13 * np.abs(expected).max())
        if fit_intercept:
            assert est.intercept_[0] == pytest.approx(alpha.sum(), rel=1e-12, abs=1e-14)
        np.testing.assert_allclose(
            est.decision_function(as_input(X)), K @ alpha, rtol=1e-10, atol=1e-12 * np.abs(K @ alpha).max()
        )
    if cache_size == 100.0:
        # every kernel row computed once at most: evaluations <= n_support * m
        assert est.kernel_evaluations_ <= est.n_support_ * m and est.cache_hits_ > 0
    elif cache_size == 0.0:
        assert est.cache_hits_ == 0


@pytest.mark.parametrize("t0", [1.0, "auto"])
@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("output", ["last", "average"])
def test_linear_kernel_is_pgs_p2_given_the_same_seed(output, fit_intercept, t0, as_input):
    X, y = make_classification(n_samples=200, n_features=8, random_state=2)
    X[np.abs(X) < 0.4] = 0.0
    # The two sum <w, x> in different orders, so they agree to rounding, which the iteration
    # contracts unless its first steps are huge: at sigma = 1e-3 and t0 = 1 (steps up to 500) the
    # logistic margins saturate and amplify 1e-16 to 1e-8 for a while (measured), hence 1e-2.
    common = dict(sigma=1e-2, t0=t0, n_iter=2000, random_state=5, output=output, fit_intercept=fit_intercept)
    kern = KernelPGSClassifier(kernel="linear", **common).fit(as_input(X), y)
    # Kernel PGS draws with replacement, has the constant feature 1 and the plain average.
    pgs = PGSClassifier(
        p=2.0, radius=None, sampling="replacement", intercept_scaling=1.0, average_power=0.0, **common
    ).fit(as_input(X), y)
    scale = np.abs(pgs.coef_).max()
    np.testing.assert_allclose(kern.coef_, pgs.coef_, rtol=1e-12, atol=1e-12 * scale)
    np.testing.assert_allclose(kern.intercept_, pgs.intercept_, rtol=1e-12, atol=1e-12 * scale)
    np.testing.assert_allclose(
        kern.decision_function(as_input(X)),
        pgs.decision_function(as_input(X)),
        rtol=1e-10,
        atol=1e-11 * scale,
    )


def test_multiclass_one_vs_rest_matches_pgs_and_shares_kernel_rows(as_input):
    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    common = dict(sigma=1e-3, n_iter=3000, random_state=0)
    kern = KernelPGSClassifier(kernel="linear", **common).fit(as_input(X), y)
    # Kernel PGS draws with replacement, has the constant feature 1 and the plain average.
    pgs = PGSClassifier(
        p=2.0, radius=None, sampling="replacement", intercept_scaling=1.0, average_power=0.0, **common
    ).fit(as_input(X), y)
    np.testing.assert_allclose(kern.coef_, pgs.coef_, rtol=1e-11, atol=1e-12)
    rbf = KernelPGSClassifier(**common).fit(as_input(X), y)
    assert rbf.dual_coef_.shape == (3, rbf.n_support_) and rbf.intercept_.shape == (3,)
    assert rbf.kernel_evaluations_ <= X.shape[0] ** 2  # one row serves the three classes
    proba = rbf.predict_proba(as_input(X))
    np.testing.assert_allclose(proba.sum(1), 1.0)
    np.testing.assert_array_equal(proba.argmax(1), np.searchsorted(rbf.classes_, rbf.predict(X)))
    assert rbf.score(as_input(X), y) > 0.9


def _kernel_gaps(make, X, y, K, n_iters, loss, sigma):
    fopt, objective = kernel_optimum(K, y, loss=loss, sigma=sigma)
    gaps = []
    for n in n_iters:
        est = make(n).fit(X, y)
        gaps.append((objective(_alpha(est, len(y))[0]) - fopt) / fopt)
    assert all(g >= -1e-9 for g in gaps), "no iterate can beat the exact optimum"
    assert gaps == sorted(gaps, reverse=True), f"the gap must shrink with T: {gaps}"
    return gaps


def test_classifier_converges_on_heart(heart):
    X, y = heart
    sigma, gamma = 1e-3, 0.1
    K = gram(X.toarray(), "rbf", gamma=gamma)
    gaps = _kernel_gaps(
        lambda n: KernelPGSClassifier(sigma=sigma, gamma=gamma, n_iter=n, random_state=0),
        X,
        y,
        K,
        (10**3, 10**4, 10**5, 10**6),
        "logistic",
        sigma,
    )
    assert gaps[-1] < 1e-4, gaps


def test_regressor_converges_on_abalone(abalone):
    X, y = abalone
    X, y = X[:400], y[:400]
    y = (y - y.mean()) / y.std()
    sigma, degree = 1e-3, 2
    K = gram(X.toarray(), "poly", gamma=1.0, degree=degree, coef0=1.0)
    gaps = _kernel_gaps(
        lambda n: KernelPGSRegressor(
            sigma=sigma, kernel="poly", gamma=1.0, degree=degree, n_iter=n, random_state=0
        ),
        X,
        y,
        K,
        (10**3, 10**4, 10**5, 10**6),
        "squared",
        sigma,
    )
    assert gaps[-1] < 1e-3, gaps


@pytest.mark.parametrize("shape", ["circles", "xor"])
def test_beats_the_linear_model_where_no_line_separates(shape):
    rng = np.random.default_rng(0)
    if shape == "circles":
        X, y = make_circles(n_samples=1200, noise=0.08, factor=0.5, random_state=0)
    else:
        X = rng.uniform(-1.0, 1.0, size=(1200, 2))
        y = (X[:, 0] * X[:, 1] > 0).astype(int)
    train, test = slice(0, 800), slice(800, None)
    linear = PGSClassifier(sigma=1e-4, random_state=0).fit(X[train], y[train])
    kern = KernelPGSClassifier(sigma=1e-4, gamma=2.0, random_state=0).fit(X[train], y[train])
    assert linear.score(X[test], y[test]) < 0.7
    assert kern.score(X[test], y[test]) > 0.95


def test_beats_the_linear_model_on_ijcnn1(ijcnn1_subsample):
    """5,000 training rows, 20 epochs; ~90.5% of ijcnn1 is the negative class."""
    X, y, X_test, y_test = ijcnn1_subsample
    params = dict(loss="hinge", sigma=1e-6, n_iter=100_000, random_state=0)
    linear = max(
        PGSClassifier(**params).fit(X, y).score(X_test, y_test),
        PGSClassifier(**{**params, "loss": "logistic", "sigma": 1e-5}).fit(X, y).score(X_test, y_test),
    )
    kern = KernelPGSClassifier(gamma=1.0, **params).fit(X, y)
    accuracy = kern.score(X_test, y_test)
    assert accuracy > linear + 0.02, (accuracy, linear)
    assert kern.n_support_ < X.shape[0]  # the hinge keeps only margin violators
