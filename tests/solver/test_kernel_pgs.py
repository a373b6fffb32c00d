"""Kernel PGS (PGS paper Section VII, lecture 22 Section 3): a NumPy reference with the full Gram
matrix, the linear kernel against PGS, convergence to the exact RKHS optimum, accuracy beyond the
linear model, the row cache, persistence without pickle, validation, conformance."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_iris, load_svmlight_file, make_circles, make_classification
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, rbf_kernel
from sklearn.utils.estimator_checks import parametrize_with_checks

from solver import PGSClassifier, PGSRegressor, load_model
from solver.lecture_estimators import KernelPGSClassifier, KernelPGSRegressor

from .oracles import kernel_optimum
from .reference import DERIVATIVES

SIGMA = 0.05


def gram(X, kernel, *, gamma=0.5, degree=3, coef0=1.0, fit_intercept=True):
    """K(X, X) (+ 1 for the intercept), from scikit-learn's pairwise kernels."""
    if kernel == "linear":
        K = linear_kernel(X)
    elif kernel == "rbf":
        K = rbf_kernel(X, gamma=gamma)
    else:
        K = polynomial_kernel(X, degree=degree, gamma=gamma, coef0=coef0)
    return K + (1.0 if fit_intercept else 0.0)


def reference_kernel_pgs(K, y, batches, *, loss, sigma, t0):
    """Figure 1 with eq. (10) in the RKHS, written out on the Gram matrix: beta over the samples,
    w_t = sum_i beta_i phi(x_i) / ((t + t0) sigma). Returns alpha_1..alpha_T (w_t's coefficients)."""
    beta = np.zeros(len(y))
    alphas = []
    for t, batch in enumerate(batches, start=1):
        z = K[batch] @ beta / ((t - 1 + t0) * sigma)
        np.add.at(beta, batch, -DERIVATIVES[loss](z, y[batch], 1.0) / len(batch))
        alphas.append(beta / ((t + t0) * sigma))
    return alphas


def _alpha(est, m):
    alpha = np.zeros((est.dual_coef_.shape[0], m))
    alpha[:, est.support_] = est.dual_coef_
    return alpha


def _problem(seed=0, m=40, n=6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, n)) * (rng.random((m, n)) < 0.6)
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=m) > 0, 1.0, -1.0)
    return X, y


# ---------------------------------------------------------------------------------------------
# Against the reference


@pytest.mark.parametrize("cache_size", [0.0, 0.001, 100.0])  # none, 3 rows (collisions), all rows
@pytest.mark.parametrize(("kernel", "loss", "k", "fit_intercept"), [
    ("rbf", "logistic", 1, True),
    ("rbf", "hinge", 3, False),
    ("poly", "squared_hinge", 1, True),
    ("poly", "smooth_hinge", 2, True),
    ("linear", "squared", 1, False),
])
def test_matches_the_gram_matrix_reference(kernel, loss, k, fit_intercept, cache_size, as_input):
    X, y = _problem()
    m, T, seed, t0 = X.shape[0], 150, 7, 4.0
    batches = np.random.default_rng(seed).integers(0, m, size=T * k).reshape(T, k)
    K = gram(X, kernel, fit_intercept=fit_intercept)
    alphas = reference_kernel_pgs(K, y, batches, loss=loss, sigma=SIGMA, t0=t0)
    params = dict(loss=loss, sigma=SIGMA, kernel=kernel, gamma=0.5, degree=3, coef0=1.0,
                  batch_size=k, n_iter=T, t0=t0, fit_intercept=fit_intercept,
                  random_state=seed, cache_size=cache_size)
    for output, expected in (("last", alphas[-1]), ("average", np.mean(alphas, axis=0))):
        est = KernelPGSClassifier(output=output, **params).fit(as_input(X), y)
        alpha = _alpha(est, m)[0]
        np.testing.assert_allclose(alpha, expected, rtol=1e-12, atol=1e-13 * np.abs(expected).max())
        if fit_intercept:
            assert est.intercept_[0] == pytest.approx(alpha.sum(), rel=1e-12, abs=1e-14)
        np.testing.assert_allclose(est.decision_function(as_input(X)), K @ alpha, rtol=1e-10,
                                   atol=1e-12 * np.abs(K @ alpha).max())
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
    common = dict(sigma=1e-2, t0=t0, n_iter=2000, random_state=5, output=output,
                  fit_intercept=fit_intercept)
    kern = KernelPGSClassifier(kernel="linear", **common).fit(as_input(X), y)
    # Kernel PGS draws with replacement, has the constant feature 1 and the plain average.
    pgs = PGSClassifier(p=2.0, radius=None, sampling="replacement", intercept_scaling=1.0,
                        average_power=0.0, **common).fit(as_input(X), y)
    scale = np.abs(pgs.coef_).max()
    np.testing.assert_allclose(kern.coef_, pgs.coef_, rtol=1e-12, atol=1e-12 * scale)
    np.testing.assert_allclose(kern.intercept_, pgs.intercept_, rtol=1e-12, atol=1e-12 * scale)
    np.testing.assert_allclose(kern.decision_function(as_input(X)), pgs.decision_function(as_input(X)),
                               rtol=1e-10, atol=1e-11 * scale)


def test_multiclass_one_vs_rest_matches_pgs_and_shares_kernel_rows(as_input):
    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    common = dict(sigma=1e-3, n_iter=3000, random_state=0)
    kern = KernelPGSClassifier(kernel="linear", **common).fit(as_input(X), y)
    # Kernel PGS draws with replacement, has the constant feature 1 and the plain average.
    pgs = PGSClassifier(p=2.0, radius=None, sampling="replacement", intercept_scaling=1.0,
                        average_power=0.0, **common).fit(as_input(X), y)
    np.testing.assert_allclose(kern.coef_, pgs.coef_, rtol=1e-11, atol=1e-12)
    rbf = KernelPGSClassifier(**common).fit(as_input(X), y)
    assert rbf.dual_coef_.shape == (3, rbf.n_support_) and rbf.intercept_.shape == (3,)
    assert rbf.kernel_evaluations_ <= X.shape[0] ** 2  # one row serves the three classes
    proba = rbf.predict_proba(as_input(X))
    np.testing.assert_allclose(proba.sum(1), 1.0)
    np.testing.assert_array_equal(proba.argmax(1), np.searchsorted(rbf.classes_, rbf.predict(X)))
    assert rbf.score(as_input(X), y) > 0.9


# ---------------------------------------------------------------------------------------------
# Convergence to the exact optimum in the RKHS (L-BFGS)


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
        X, y, K, (10**3, 10**4, 10**5, 10**6), "logistic", sigma)
    assert gaps[-1] < 1e-4, gaps


def test_regressor_converges_on_abalone(abalone):
    X, y = abalone
    X, y = X[:400], y[:400]
    y = (y - y.mean()) / y.std()
    sigma, degree = 1e-3, 2
    K = gram(X.toarray(), "poly", gamma=1.0, degree=degree, coef0=1.0)
    gaps = _kernel_gaps(
        lambda n: KernelPGSRegressor(sigma=sigma, kernel="poly", gamma=1.0, degree=degree,
                                     n_iter=n, random_state=0),
        X, y, K, (10**3, 10**4, 10**5, 10**6), "squared", sigma)
    assert gaps[-1] < 1e-3, gaps


# ---------------------------------------------------------------------------------------------
# Beyond the linear model


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


@pytest.fixture(scope="module")
def ijcnn1_subsample(data_dir):
    X, y = load_svmlight_file(str(data_dir / "ijcnn1.train.svm"))
    X_test, y_test = load_svmlight_file(str(data_dir / "ijcnn1.test.svm"), n_features=X.shape[1])
    rng = np.random.default_rng(0)
    train = rng.choice(X.shape[0], 5000, replace=False)
    test = rng.choice(X_test.shape[0], 10000, replace=False)
    return X[train], y[train], X_test[test], y_test[test]


def test_beats_the_linear_model_on_ijcnn1(ijcnn1_subsample):
    """5,000 training rows, 20 epochs; ~90.5% of ijcnn1 is the negative class."""
    X, y, X_test, y_test = ijcnn1_subsample
    params = dict(loss="hinge", sigma=1e-6, n_iter=100_000, random_state=0)
    linear = max(PGSClassifier(**params).fit(X, y).score(X_test, y_test),
                 PGSClassifier(**{**params, "loss": "logistic", "sigma": 1e-5}).fit(X, y)
                 .score(X_test, y_test))
    kern = KernelPGSClassifier(gamma=1.0, **params).fit(X, y)
    accuracy = kern.score(X_test, y_test)
    assert accuracy > linear + 0.02, (accuracy, linear)
    assert kern.n_support_ < X.shape[0]  # the hinge keeps only margin violators


# ---------------------------------------------------------------------------------------------
# Estimator behaviour


@parametrize_with_checks([KernelPGSClassifier(), KernelPGSRegressor(),
                          KernelPGSClassifier(kernel="poly", loss="hinge", batch_size=2),
                          KernelPGSRegressor(kernel="linear", output="last")])
def test_sklearn_conformance(estimator, check):
    check(estimator)


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"kernel": "sigmoid"}, ["'kernel'", "rbf", "sigmoid"]),
        ({"gamma": 0.0}, ["'gamma'", "(0.0, inf)", "'scale'", "0.0"]),
        ({"gamma": "auto"}, ["'gamma'", "'scale'", "auto"]),
        ({"degree": 0}, ["'degree'", "[1, inf)", "0"]),
        ({"degree": 2.5}, ["'degree'", "2.5"]),
        ({"coef0": "one"}, ["'coef0'", "one"]),
        ({"cache_size": -1.0}, ["'cache_size'", "[0.0, inf)", "-1.0"]),
        ({"t0": 0.5}, ["'t0'", "[1.0, inf)", "0.5"]),
        ({"batch_size": 0}, ["'batch_size'", "0"]),
        ({"output": "random"}, ["'output'", "random"]),
        ({"sigma": -1.0}, ["'sigma'", "-1.0"]),
        ({"loss": "huber"}, ["'loss'", "logistic", "huber"]),
    ],
)
def test_bad_parameters_name_parameter_range_and_value(params, words):
    X, y = _problem()
    with pytest.raises((ValueError, TypeError)) as info:
        KernelPGSClassifier(**params).fit(X, y)
    for word in words:
        assert word in str(info.value)


@pytest.mark.parametrize("kernel", ["rbf", "poly", "linear"])
@pytest.mark.parametrize("cls", [KernelPGSClassifier, KernelPGSRegressor])
def test_dense_and_sparse_give_the_same_model(cls, kernel):
    X, y = _problem(seed=1, m=120, n=10)
    params = dict(kernel=kernel, sigma=1e-3, random_state=3, n_iter=800, gamma=0.3)
    dense = cls(**params).fit(X, y)
    sparse = cls(**params).fit(sp.csr_matrix(X), y)
    np.testing.assert_array_equal(dense.support_, sparse.support_)
    np.testing.assert_allclose(dense.dual_coef_, sparse.dual_coef_, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(dense.intercept_, sparse.intercept_, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(dense.predict(X), sparse.predict(sp.csr_matrix(X)), rtol=1e-10,
                               atol=1e-12)
    assert dense.gamma_ == sparse.gamma_ == 0.3


def test_gamma_scale_is_svc_s():
    X, y = _problem(seed=2)
    est = KernelPGSClassifier(n_iter=10).fit(sp.csr_matrix(X), y)
    assert est.gamma_ == pytest.approx(1.0 / (X.shape[1] * X.var()), rel=1e-12)


@pytest.mark.parametrize("cls", [KernelPGSClassifier, KernelPGSRegressor])
@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_export_and_load_without_pickle(cls, kernel, as_input):
    X, y = load_iris(return_X_y=True)
    target = np.array(["setosa", "versicolor", "virginica"])[y] if cls is KernelPGSClassifier else X[:, 0]
    X = X[:, 1:] if cls is KernelPGSRegressor else X
    est = cls(kernel=kernel, sigma=1e-3, random_state=0).fit(as_input(X), target)
    meta, arrays = est.export_model()
    assert json.loads(json.dumps(meta)) == meta
    assert meta["nnz_weights"] == meta["n_support"] == est.n_support_
    assert arrays["sv_shape"].tolist() == [est.n_support_, X.shape[1]]
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    buffer.seek(0)
    with np.load(buffer, allow_pickle=False) as stored:
        loaded = load_model(meta, dict(stored))
    assert type(loaded) is cls
    if cls is KernelPGSRegressor:
        np.testing.assert_allclose(loaded.predict(X), est.predict(as_input(X)), rtol=1e-12)
    else:
        np.testing.assert_array_equal(loaded.predict(X), est.predict(as_input(X)))
        np.testing.assert_allclose(loaded.predict_proba(X), est.predict_proba(as_input(X)),
                                   rtol=1e-12)
    assert hasattr(loaded, "coef_") == hasattr(est, "coef_") == (kernel == "linear")


def test_trace_counts_support_vectors_and_records_accuracy():
    X, y = make_circles(n_samples=1000, noise=0.08, factor=0.5, random_state=1)
    clf = KernelPGSClassifier(loss="hinge", sigma=1e-4, gamma=2.0, random_state=0, n_iter=4000)
    clf.fit(X[:600], y[:600], eval_set=(X[600:], y[600:]))
    trace = clf.trace_
    assert trace[0].iteration == 0 and trace[-1].iteration == 4000
    assert trace[-1].test_score == pytest.approx(clf.score(X[600:], y[600:]))
    assert trace[-1].nnz_weights == clf.n_support_
    assert trace[-1].objective < trace[0].objective
    assert [pt.nnz_weights for pt in trace] == sorted(pt.nnz_weights for pt in trace)


def test_stop_at_time_budget_keeps_a_fitted_model():
    X, y = make_circles(n_samples=3000, noise=0.08, factor=0.5, random_state=1)
    clf = KernelPGSClassifier(sigma=1e-4, random_state=0, n_iter=10**9, time_budget=0.2).fit(X, y)
    assert clf.stop_reason_ == "time_budget" and 0 < clf.n_iter_ < 10**9
    assert clf.predict(X).shape == (3000,)


def test_regressor_is_a_regressor():
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(600, 1))
    y = np.sin(2 * X[:, 0])
    reg = KernelPGSRegressor(sigma=1e-5, gamma=1.0, n_iter=30000, random_state=0).fit(X, y)
    assert reg.score(X, y) > 0.95
    assert isinstance(reg.intercept_, float) and not hasattr(reg, "coef_")
    # PGSRegressor can only fit a line
    assert PGSRegressor(sigma=1e-5, random_state=0).fit(X, y).score(X, y) < 0.5


def test_every_lecture_solver_is_registered_and_warmed_up():
    from solver import SOLVERS, estimator_for, warm_up
    from solver.kernel_pgs import kernel_pgs_chunk
    from solver.lecture_estimators import GDRegressor, OGDClassifier, SGDClassifier
    from solver.ogd import sgd_chunk

    for name in ("gd", "sgd", "ogd", "kernel_pgs"):
        assert SOLVERS[name].classifier is not None and SOLVERS[name].regressor is not None
    est = estimator_for("kernel_pgs", "binary", {"sigma": 1e-3, "kernel": "poly", "degree": 2})
    assert isinstance(est, KernelPGSClassifier)
    with pytest.raises(ValueError, match="'eta'"):
        estimator_for("sgd", "regression", {"eta": -1.0})
    warm_up()
    kernels = (sgd_chunk, kernel_pgs_chunk)
    before = [len(f.signatures) for f in kernels]
    X, y = _problem()
    for dtype in (np.float32, np.float64):
        Xs = sp.csr_matrix(X.astype(dtype))
        Xd = X.astype(dtype)
        for arr in (Xs.data, Xs.indices, Xs.indptr, Xd):
            arr.flags.writeable = False
        for data in (Xs, Xd, X.astype(dtype)):
            for est in (GDRegressor(n_iter=3), SGDClassifier(n_iter=3), OGDClassifier(n_iter=3),
                        KernelPGSClassifier(n_iter=3), KernelPGSRegressor(n_iter=3)):
                est.fit(data, y)
    assert [len(f.signatures) for f in kernels] == before, "a fit compiled a new signature"
