"""The L1 family (SCD, GCD, SMIDAS, truncated gradient): NumPy references of the L1 paper's
algorithms, convergence to exact optima on real data, parameters, input kinds, sklearn conformance."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.optimize
import scipy.sparse as sp
from sklearn.datasets import load_iris, make_classification, make_regression
from sklearn.linear_model import Lasso
from sklearn.utils.estimator_checks import parametrize_with_checks

from solver import SOLVERS, load_model
from solver._sparse import as_kernel_data
from solver.l1 import (
    GCDClassifier,
    GCDRegressor,
    SCDClassifier,
    SCDRegressor,
    SMIDASClassifier,
    SMIDASRegressor,
    TruncGradClassifier,
    TruncGradRegressor,
)
from solver.losses import LOSSES
from solver.scd import CoordinateEngine
from solver.smidas import MirrorEngine, dual_exponent

from .reference import DERIVATIVES

CLASSIFIERS = [SCDClassifier, GCDClassifier, SMIDASClassifier, TruncGradClassifier]
REGRESSORS = [SCDRegressor, GCDRegressor, SMIDASRegressor, TruncGradRegressor]


# -- plain-NumPy references of the paper's algorithms (dense, O(d) per step, no tricks) -----------


def _augment(X, fit_intercept):
    X = np.asarray(X, dtype=np.float64)
    return np.hstack([X, np.ones((X.shape[0], 1))]) if fit_intercept else X


def _soft(x, tau):
    return np.sign(x) * np.maximum(np.abs(x) - tau, 0.0)


def _l1_weights(n_weights, sigma, fit_intercept):
    lam = np.full(n_weights, sigma)
    if fit_intercept:
        lam[-1] = 0.0
    return lam


def reference_coordinate_descent(X, y, n_steps, *, loss, sigma, fit_intercept, coords=None):
    """Algorithm 1 (coords given) or its greedy version (coords None): g from scratch each step."""
    Xa = _augment(X, fit_intercept)
    m = Xa.shape[0]
    beta = LOSSES[loss].curvature * (Xa**2).mean(axis=0)
    lam = _l1_weights(Xa.shape[1], sigma, fit_intercept)
    empty = beta == 0.0  # an all-zero column: its weight stays 0
    beta[empty] = 1.0
    w = np.zeros(Xa.shape[1])
    for step in range(n_steps):
        g = Xa.T @ DERIVATIVES[loss](Xa @ w, y, 1.0) / m
        new = np.where(empty, 0.0, _soft(w - g / beta, lam / beta))
        if coords is not None:
            j = coords[step]
        else:
            eta = new - w
            gain = lam * np.abs(w) - (eta * g + 0.5 * beta * eta**2 + lam * np.abs(new))
            j = int(np.argmax(gain))
            if gain[j] <= 0.0:
                break
        w[j] = new[j]
    return w


def reference_smidas(X, y, batches, *, loss, sigma, eta, p, fit_intercept):
    """Algorithm 3 as printed (minibatch gradients averaged), dense truncation of every theta_j."""
    Xa = _augment(X, fit_intercept)
    n = Xa.shape[1] - int(fit_intercept)
    theta = np.zeros(Xa.shape[1])
    w = np.zeros(Xa.shape[1])
    for batch in batches:
        v = (DERIVATIVES[loss](Xa[batch] @ w, y[batch], 1.0)[:, None] * Xa[batch]).mean(axis=0)
        theta = theta - eta * v
        theta[:n] = _soft(theta[:n], eta * sigma)
        norm = np.sum(np.abs(theta) ** p) ** (1.0 / p)
        w = np.zeros_like(theta) if norm == 0 else (
            np.sign(theta) * np.abs(theta) ** (p - 1) / norm ** (p - 2))
    return w


class ScriptedDraws:
    """Stands in for the engine's Generator: ``integers`` returns a fixed sequence, in order."""

    def __init__(self, values):
        self.values = np.asarray(values)
        self.used = 0

    def integers(self, low, high, size):
        out = self.values[self.used:self.used + size]
        assert len(out) == size and out.min() >= low and out.max() < high
        self.used += size
        return out


def _problem(loss, seed=0, m=40, n=12):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, n)) * (rng.random((m, n)) < 0.4)
    X[:, 3] = 0.0  # an empty column
    y = np.where(rng.random(m) < 0.5, -1.0, 1.0) if LOSSES[loss].classification else rng.normal(
        size=m)
    return X, y, rng


def _run_in_chunks(engine, chunks):
    for n in chunks:
        engine.run(n)
    return engine.output_weights()[0]


def _rel_err(a, b):
    return np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300)


@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("loss", ["logistic", "squared", "smooth_hinge", "huber"])
def test_scd_matches_algorithm_1(loss, fit_intercept, as_input):
    X, y, rng = _problem(loss)
    coords = rng.integers(0, X.shape[1] + fit_intercept, size=300)
    expected = reference_coordinate_descent(X, y, 300, loss=loss, sigma=0.02, coords=coords,
                                            fit_intercept=fit_intercept)
    engine = CoordinateEngine(
        as_kernel_data(as_input(X)), y[None, :], loss_code=LOSSES[loss].code, epsilon=1.0,
        sigma=0.02, curvature=LOSSES[loss].curvature, fit_intercept=fit_intercept, greedy=False,
        rng=ScriptedDraws(coords),
    )
    assert _rel_err(_run_in_chunks(engine, (7, 93, 200)), expected) < 1e-10
    assert 0 < np.count_nonzero(expected) < X.shape[1]  # the L1 term is active


@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("loss", ["logistic", "squared"])
def test_gcd_matches_greedy_reference(loss, fit_intercept, as_input):
    X, y, _ = _problem(loss, seed=1)

    def engine():
        return CoordinateEngine(
            as_kernel_data(as_input(X)), y[None, :], loss_code=LOSSES[loss].code, epsilon=1.0,
            sigma=0.02, curvature=LOSSES[loss].curvature, fit_intercept=fit_intercept,
            greedy=True, rng=None,
        )

    # 60 steps span several exact recomputations of the maintained gradient (every 12-13 steps).
    expected = reference_coordinate_descent(X, y, 60, loss=loss, sigma=0.02, coords=None,
                                            fit_intercept=fit_intercept)
    assert _rel_err(_run_in_chunks(engine(), (5, 20, 35)), expected) < 1e-12
    # Near the optimum, ties between coordinates are decided by rounding and the reference's gain
    # (a difference of nearly equal terms) stops at gain <= 0, about 1e-8 from the optimum in w.
    expected = reference_coordinate_descent(X, y, 1000, loss=loss, sigma=0.02, coords=None,
                                            fit_intercept=fit_intercept)
    assert _rel_err(_run_in_chunks(engine(), (1000,)), expected) < 1e-7


@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("loss", ["logistic", "hinge", "squared"])
@pytest.mark.parametrize("link", ["smidas", "truncgrad"])
def test_mirror_descent_matches_algorithm_3(link, loss, k, fit_intercept, as_input):
    X, y, rng = _problem(loss, seed=2)
    p = dual_exponent(X.shape[1]) if link == "smidas" else 2
    assert p == (5 if link == "smidas" else 2)  # ceil(2 ln 12)
    batches = rng.integers(0, X.shape[0], size=(400, k))
    params = dict(loss=loss, sigma=0.01, eta=0.05, fit_intercept=fit_intercept)
    expected = reference_smidas(X, y, batches, p=p, **params)
    engine = MirrorEngine(
        as_kernel_data(as_input(X)), y[None, :], loss_code=LOSSES[loss].code, epsilon=1.0,
        sigma=0.01, eta=0.05, p=p, batch_size=k, fit_intercept=fit_intercept,
        rng=ScriptedDraws(batches.ravel()),
    )
    assert _rel_err(_run_in_chunks(engine, (1, 99, 300)), expected) < 1e-9
    assert 0 < np.count_nonzero(expected[:X.shape[1]]) < X.shape[1]  # sparse, not trivially so


def test_data_accesses_count_the_nonzeros_read():
    X, y, rng = _problem("logistic", seed=3)
    Xs = sp.csr_matrix(X)
    coords = rng.integers(0, X.shape[1] + 1, size=50)
    engine = CoordinateEngine(as_kernel_data(Xs), y[None, :], loss_code=LOSSES["logistic"].code,
                              epsilon=1.0, sigma=0.01, curvature=0.25, fit_intercept=True,
                              greedy=False, rng=ScriptedDraws(coords))
    engine.run(50)
    column_nnz = np.r_[np.diff(Xs.tocsc().indptr), X.shape[0]]  # the intercept column is full
    assert engine.data_accesses == column_nnz[coords].sum()

    samples = rng.integers(0, X.shape[0], size=60)
    engine = MirrorEngine(as_kernel_data(Xs), y[None, :], loss_code=LOSSES["logistic"].code,
                          epsilon=1.0, sigma=0.01, eta=0.1, p=5, batch_size=2, fit_intercept=True,
                          rng=ScriptedDraws(samples))
    engine.run(30)
    assert engine.data_accesses == np.diff(Xs.indptr)[samples].sum()


# -- convergence to the exact optimum on real data --------------------------------------------------


def l1_optimum(X, y, *, loss, sigma):
    """min sigma ||w||_1 + mean l(Xw + b; y) by L-BFGS-B on the split w = u - v, u, v >= 0."""
    X = sp.csr_matrix(X)
    m, n = X.shape

    def objective(params):
        u, v, b = params[:n], params[n:2 * n], params[-1]
        z = X @ (u - v) + b
        if loss == "logistic":
            value, dz = np.logaddexp(0.0, -y * z).mean(), -y * np.exp(-np.logaddexp(0.0, y * z))
        else:
            value, dz = np.mean((z - y) ** 2), 2.0 * (z - y)
        gw = X.T @ dz / m
        return value + sigma * params[:-1].sum(), np.r_[gw + sigma, sigma - gw, dz.mean()]

    res = scipy.optimize.minimize(
        objective, np.zeros(2 * n + 1), jac=True, method="L-BFGS-B",
        bounds=[(0.0, None)] * (2 * n) + [(None, None)],
        options={"maxiter": 20000, "maxfun": 50000, "gtol": 1e-13, "ftol": 1e-15},
    )
    return res.fun, res.x[:n] - res.x[n:2 * n]


def _gap(est, X, y, fopt):
    w = np.r_[np.ravel(est.coef_), np.ravel(est.intercept_)]
    return (est._objective(X, y, w) - fopt) / fopt


@pytest.fixture(scope="module")
def heart_l1(heart):
    X, y = heart
    y = np.where(y > 0, 1.0, -1.0)
    fopt, w = l1_optimum(X, y, loss="logistic", sigma=1e-2)
    return X, y, fopt, w


@pytest.mark.parametrize("cls", [SCDClassifier, GCDClassifier])
def test_coordinate_descent_reaches_the_exact_optimum(cls, heart_l1):
    X, y, fopt, w_opt = heart_l1
    gaps = [_gap(cls(sigma=1e-2, n_iter=n, random_state=0).fit(X, y), X, y, fopt)
            for n in (100, 400, 3000)]
    assert all(g > -1e-10 for g in gaps)
    assert gaps == sorted(gaps, reverse=True), gaps
    assert gaps[-1] < 1e-9, gaps
    est = cls(sigma=1e-2, n_iter=3000, random_state=0).fit(X, y)
    # The same support as the optimum: the exact zeros are what L1 is for.
    np.testing.assert_array_equal(est.coef_[0] != 0, np.abs(w_opt) > 1e-8)


def test_scd_on_a9a_approaches_the_optimum(a9a):
    X, y, _, _ = a9a
    y = np.where(y > 0, 1.0, -1.0)
    fopt, _ = l1_optimum(X, y, loss="logistic", sigma=1e-3)
    n_weights = X.shape[1] + 1
    gaps = [_gap(SCDClassifier(sigma=1e-3, n_iter=sweeps * n_weights, random_state=0).fit(X, y),
                 X, y, fopt) for sweeps in (10, 200)]
    assert gaps[1] < gaps[0] / 10 and gaps[1] < 1e-3, gaps


@pytest.fixture(scope="module")
def abalone_lasso(abalone):
    X, y = abalone
    y = (y - y.mean()) / y.std()
    sigma = 1e-2
    # sklearn's Lasso minimises (1/2m)||y - Xw - b||^2 + alpha ||w||_1: ours halved, alpha = sigma/2.
    lasso = Lasso(alpha=sigma / 2, tol=1e-12, max_iter=100000).fit(X.toarray(), y)
    return X, y, sigma, lasso


@pytest.mark.parametrize("cls", [SCDRegressor, GCDRegressor])
def test_lasso_on_abalone_matches_sklearn(cls, abalone_lasso):
    X, y, sigma, lasso = abalone_lasso
    # Abalone's features are correlated up to 0.99, which slows every coordinate method (sklearn's
    # cyclic one needs 166 sweeps here); GCD's greedy order needs fewer steps.
    n_iter = 3000 if cls is GCDRegressor else 30000
    est = cls(sigma=sigma, n_iter=n_iter, random_state=0).fit(X, y)
    np.testing.assert_allclose(est.coef_, lasso.coef_, atol=1e-9)
    assert est.intercept_ == pytest.approx(lasso.intercept_, abs=1e-9)
    np.testing.assert_array_equal(est.coef_ == 0, lasso.coef_ == 0)


@pytest.mark.parametrize("cls", [SMIDASClassifier, TruncGradClassifier])
def test_stochastic_methods_approach_the_optimum_as_eta_shrinks(cls, heart_l1):
    X, y, fopt, _ = heart_l1
    m = X.shape[0]
    # A constant step ends in a neighbourhood of the optimum whose size shrinks with eta
    # (Theorem 3: eta (p-1) rho^2 e / 2 + ||w*||_1^2 / (eta T)); epochs grow like 1 / eta.
    gaps = [_gap(cls(sigma=1e-2, eta=eta, n_iter=int(10 / eta) * m, random_state=0).fit(X, y),
                 X, y, fopt) for eta in (0.1, 0.01)]
    assert all(g > -1e-10 for g in gaps)
    assert gaps[1] < gaps[0] / 5 and gaps[1] < 3e-3, gaps


# -- estimator behaviour ----------------------------------------------------------------------------


def _binary(seed=0, n=300):
    return make_classification(n_samples=n, n_features=8, random_state=seed)


@pytest.mark.parametrize(
    ("cls", "params", "words"),
    [
        (SCDClassifier, {"sigma": 0.0}, ["'sigma'", "(0.0, inf)", "0.0"]),
        (SCDClassifier, {"loss": "hinge"}, ["'loss'", "logistic", "Got 'hinge'"]),
        (SCDRegressor, {"loss": "logistic"}, ["'loss'", "squared", "Got 'logistic'"]),
        (GCDClassifier, {"n_iter": 0}, ["'n_iter'", "[1, inf)", "0"]),
        (GCDClassifier, {"epsilon": -1.0}, ["'epsilon'", "-1.0"]),
        (SMIDASClassifier, {"eta": 0.0}, ["'eta'", "(0.0, inf)", "'auto'", "0.0"]),
        (SMIDASClassifier, {"eta": "fast"}, ["'eta'", "'auto'", "fast"]),
        (SMIDASClassifier, {"batch_size": 0}, ["'batch_size'", "[1, inf)", "0"]),
        (TruncGradClassifier, {"sigma": -1.0}, ["'sigma'", "-1.0"]),
        (TruncGradClassifier, {"loss": "cauchy"}, ["'loss'", "hinge", "cauchy"]),
        (TruncGradRegressor, {"loss": "hinge"}, ["'loss'", "huber", "Got 'hinge'"]),
    ],
)
def test_bad_parameters_name_parameter_range_and_value(cls, params, words):
    X, y = _binary()
    if cls in REGRESSORS:
        y = y.astype(float)
    with pytest.raises(ValueError) as info:
        cls(**params).fit(X, y)
    for word in words:
        assert word in str(info.value)


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_dense_and_sparse_give_the_same_model(cls):
    X, y = _binary(seed=1)
    X[np.abs(X) < 0.5] = 0.0
    params = dict(sigma=1e-2, random_state=3, n_iter=2000)
    dense = cls(**params).fit(X, y)
    sparse = cls(**params).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(dense.coef_, sparse.coef_, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(dense.intercept_, sparse.intercept_, rtol=1e-10, atol=1e-13)
    assert dense.coef_.any()


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_trace_records_data_accesses_and_density(cls):
    X, y = _binary(n=500)
    est = cls(sigma=1e-2, random_state=0, n_iter=3000).fit(X, y, trace=True)
    accesses = [pt.data_accesses for pt in est.trace_]
    assert accesses[0] == 0 and all(a < b for a, b in zip(accesses, accesses[1:], strict=False))
    last = est.trace_[-1]
    assert last.nnz_weights == np.count_nonzero(est.coef_) + np.count_nonzero(est.intercept_)
    assert last.objective < est.trace_[0].objective
    assert est.export_model()[0]["nnz_weights"] == np.count_nonzero(est.coef_)


def test_stronger_l1_gives_sparser_models():
    X, y = make_classification(n_samples=400, n_features=30, n_informative=4, random_state=0)
    for cls in CLASSIFIERS:
        nnz = [np.count_nonzero(cls(sigma=s, random_state=0, n_iter=20000).fit(X, y).coef_)
               for s in (1e-4, 0.3)]
        assert nnz[1] < nnz[0], (cls.__name__, nnz)


def test_gcd_stops_when_no_step_decreases_the_objective():
    X, y = _binary()
    est = GCDClassifier(sigma=10.0, fit_intercept=False, n_iter=100).fit(X, y, trace=True)
    assert est.stop_reason_ == "converged" and est.n_iter_ == 0
    assert not est.coef_.any()


def test_eta_auto_is_proposition_4_with_k_1():
    X, y = _binary()
    est = SMIDASClassifier(n_iter=10, fit_intercept=False).fit(X, y)
    p = dual_exponent(X.shape[1])
    assert est.dual_exponent_ == p == 5
    x_sq = np.max(np.sum(np.abs(X) ** p, axis=1) ** (2.0 / p))
    assert est.eta_ == pytest.approx(1.0 / (2 * (p - 1) * 0.25 * x_sq), rel=1e-12)
    tg = TruncGradClassifier(n_iter=10).fit(X, y)
    x_sq = np.max(np.sum(X**2, axis=1) + 1.0)
    assert tg.dual_exponent_ == 2 and tg.eta_ == pytest.approx(1.0 / (2 * 0.25 * x_sq))


def test_divergence_raises_an_actionable_error():
    X, y = _binary()
    with pytest.raises(FloatingPointError, match="SMIDAS diverged.*Decrease eta"):
        SMIDASRegressor(eta=1e3, random_state=0).fit(X * 1e100, y * 1.0)
    # Coordinate descent cannot diverge (beta_j bounds the curvature exactly), but beta_j can overflow.
    with pytest.raises(ValueError, match="overflow.*Scale the features"):
        SCDRegressor(random_state=0).fit(X * 1e160, y * 1.0)


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_multiclass_and_export(cls, as_input):
    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    clf = cls(sigma=1e-3, random_state=0, n_iter=20000).fit(as_input(X), y)
    assert clf.coef_.shape == (3, 4) and clf.score(as_input(X), y) > 0.8
    loaded = load_model(*clf.export_model())
    assert type(loaded) is cls
    np.testing.assert_array_equal(loaded.predict(X), clf.predict(X))


@pytest.mark.parametrize("cls", REGRESSORS)
def test_regressors_learn_a_sparse_linear_function(cls):
    X, y, w = make_regression(n_samples=300, n_features=10, n_informative=3, coef=True,
                              noise=0.01, random_state=0)
    y = y / y.std()
    reg = cls(sigma=1e-3, random_state=0, n_iter=30000, eta=0.01) if "eta" in cls().get_params() \
        else cls(sigma=1e-3, random_state=0, n_iter=3000)
    reg.fit(X, y)
    assert reg.score(X, y) > 0.99


def test_every_l1_solver_is_registered():
    for name, (clf, reg) in {"scd": (SCDClassifier, SCDRegressor),
                             "gcd": (GCDClassifier, GCDRegressor),
                             "smidas": (SMIDASClassifier, SMIDASRegressor),
                             "truncgrad": (TruncGradClassifier, TruncGradRegressor)}.items():
        assert SOLVERS[name].classifier is clf and SOLVERS[name].regressor is reg


def test_dual_exponent_is_the_papers_ceil_2_ln_d():
    assert [dual_exponent(d) for d in (1, 2, 3, 1010, 7129, 124615)] == [2, 2, 3, 14, 18, 24]
    assert dual_exponent(1010) == math.ceil(2 * math.log(1010))


@parametrize_with_checks([cls() for cls in CLASSIFIERS + REGRESSORS])
def test_sklearn_conformance(estimator, check):
    check(estimator)
