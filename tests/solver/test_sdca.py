"""SDCA (solver.sdca, Shalev-Shwartz & Zhang, JMLR 2013): the Numba epochs follow the paper's
algorithm step by step, reach the optimum of L-BFGS and of scikit-learn's solvers for the same
objective, stop on their duality gap, weigh rows as repeated rows, and warm-start from a dual point."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_blobs
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from solver import LBFGSClassifier, SDCAClassifier, SDCARegressor
from solver._sparse import prepare
from solver.losses import LOSSES
from solver.sdca import SDCAEngine

from .problems import binary_problem, sparse_problem
from .reference import reference_sdca

SIGMA = 1e-2


def _weights(est) -> np.ndarray:
    return np.append(np.ravel(est.coef_), est.intercept_)


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge", "logistic", "squared"])
@pytest.mark.parametrize(("fit_intercept", "intercept_scaling"), [(True, 1.0), (True, 0.3), (False, 1.0)])
def test_the_epochs_follow_the_papers_algorithm(loss, fit_intercept, intercept_scaling):
    """Every iterate of three epochs equals the plain-NumPy SDCA's (its coordinate maximised
    numerically, w recomputed from all of alpha), on sparse data with an empty row; the reference
    draws each epoch's order as the engine does, from a generator of the same seed. The engine's
    intercept is s times the reference's weight of the constant feature s."""
    X, y, _ = sparse_problem(loss, seed=2, m=30, n=8)
    X[5] = 0.0
    rng = np.random.default_rng(7)
    engine = SDCAEngine(
        prepare(sp.csr_matrix(X))[0],
        y[None, :],
        loss=LOSSES[loss],
        sigma=SIGMA,
        fit_intercept=fit_intercept,
        tol=0.0,
        rng=rng,
        intercept_scaling=intercept_scaling,
    )
    orders_rng = np.random.default_rng(7)
    orders = [orders_rng.permutation(30) for _ in range(3)]
    engine.run(3)
    alpha, w = reference_sdca(
        X, y, orders, loss=loss, sigma=SIGMA, fit_intercept=fit_intercept, intercept_scaling=intercept_scaling
    )
    if fit_intercept:
        w[-1] *= intercept_scaling
    # The reference's maximiser is numerical (bounded Brent): it agrees to about 1e-9.
    np.testing.assert_allclose(engine._alphas[0], alpha, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(engine.output_weights()[0], w, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("loss", ["logistic", "squared_hinge", "squared"])
def test_sdca_reaches_the_lbfgs_optimum(loss):
    """The same objective as L-BFGS at p = 2, regularised intercept included."""
    X, y = binary_problem(n=300)
    ours = SDCAClassifier(
        loss=loss, sigma=SIGMA, tol=1e-13, n_iter=5000, random_state=0, intercept_scaling=1.0
    )
    ours.fit(X, y)
    theirs = LBFGSClassifier(loss=loss, sigma=SIGMA, tol=1e-15, n_iter=5000).fit(X, y)
    assert ours.stop_reason_ == "converged"
    np.testing.assert_allclose(_weights(ours), _weights(theirs), atol=2e-6)


def test_sdca_is_scikit_learns_logistic_regression():
    """sigma/2 ||w||^2 + (1/m) sum l  is  (1/(sigma m)) times  1/2 ||w||^2 + C sum l  with C = 1/(sigma m)."""
    X, y = binary_problem(n=300, seed=3)
    ours = SDCAClassifier(sigma=SIGMA, fit_intercept=False, tol=1e-14, n_iter=5000, random_state=0).fit(X, y)
    C = 1.0 / (SIGMA * X.shape[0])
    theirs = LogisticRegression(C=C, fit_intercept=False, tol=1e-12, max_iter=10_000).fit(X, y)
    # sigma-strong convexity: ||w - w*||^2 <= 2 gap / sigma, about (1.2e-6)^2 at this tol.
    np.testing.assert_allclose(ours.coef_, theirs.coef_, atol=1e-6)


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
@pytest.mark.parametrize("intercept_scaling", [1.0, 0.2])
def test_sdca_is_liblinears_dual_svm_with_its_regularised_bias(loss, intercept_scaling):
    """LIBLINEAR's intercept is the weight of a constant feature intercept_scaling, regularised like
    the others, times that value: our fit_intercept, so the two agree with the intercept too."""
    X, y = binary_problem(n=300, seed=4)
    ours = SDCAClassifier(
        loss=loss, sigma=SIGMA, tol=1e-14, n_iter=20_000, random_state=0, intercept_scaling=intercept_scaling
    )
    ours.fit(X, y)
    C = 1.0 / (SIGMA * X.shape[0])
    theirs = LinearSVC(
        loss=loss, C=C, dual=True, tol=1e-9, max_iter=1_000_000, intercept_scaling=intercept_scaling
    )
    theirs.fit(X, y)
    np.testing.assert_allclose(_weights(ours), _weights(theirs), rtol=1e-4, atol=1e-5)


def test_sdca_regressor_is_ridge():
    """Our squared loss is (z - y)^2 with no 1/2: alpha of Ridge = sigma m / 2."""
    X, _, _ = sparse_problem("squared", seed=5, m=80, n=10)
    y = X @ np.arange(10.0) + np.random.default_rng(0).normal(size=80)
    ours = SDCARegressor(sigma=SIGMA, fit_intercept=False, tol=0.0, n_iter=2000, random_state=0)
    ours.fit(sp.csr_matrix(X), y)
    theirs = Ridge(alpha=SIGMA * 80 / 2, fit_intercept=False).fit(X, y)
    np.testing.assert_allclose(ours.coef_, theirs.coef_, rtol=1e-10, atol=1e-12)


def test_the_trace_records_a_shrinking_duality_gap_that_bounds_the_suboptimality():
    X, y = binary_problem(n=300)
    est = SDCAClassifier(sigma=SIGMA, tol=1e-10, random_state=0).fit(X, y, trace=True)
    optimum = SDCAClassifier(sigma=SIGMA, tol=1e-14, n_iter=5000, random_state=1).fit(X, y, trace=True)
    best = optimum.trace_[-1].objective
    gaps = [point.duality_gap for point in est.trace_[1:]]
    assert est.trace_[0].duality_gap is None  # no dual point is known before the first epoch
    assert all(gap >= 0.0 for gap in gaps)
    assert gaps[-1] < 1e-3 * gaps[0]
    for point in est.trace_[1:]:
        assert point.objective - best <= point.duality_gap + 1e-12
    assert est.stop_reason_ == "converged"
    assert gaps[-1] <= 1e-10 * np.log(2.0)  # tol times P(0) = log 2 for the logistic loss
    assert est.trace_[-1].iteration == est.n_iter_  # the last checkpoint is the epoch that stopped


def test_intercept_scaling_auto_is_the_rms_of_the_non_zero_values():
    """As PGS's: 1 for binary features; the values' RMS for L2-normalised rows."""
    X, y = binary_problem(n=200, seed=8)
    binary = sp.csr_matrix((np.abs(X) > 0.5).astype(float))
    assert SDCAClassifier(n_iter=1).fit(binary, y).intercept_scaling_ == 1.0
    rows = sp.csr_matrix(np.abs(X) * (np.abs(X) > 0.5))
    normalised = sp.diags(1.0 / np.sqrt(np.asarray(rows.multiply(rows).sum(axis=1)).ravel())) @ rows
    expected = np.sqrt(np.mean(normalised.data**2))
    assert SDCAClassifier(n_iter=1).fit(normalised, y).intercept_scaling_ == pytest.approx(
        expected, rel=1e-12
    )
    assert SDCAClassifier(n_iter=1, fit_intercept=False).fit(normalised, y).intercept_scaling_ == 0.0


def test_the_objective_regularises_the_constant_feature_s_weight():
    """The trace's objective is sigma/2 ||(coef, b / s)||^2 plus the mean loss: the same value
    at the same model whatever s, once b / s is counted as the weight."""
    X, y = binary_problem(n=200, seed=9)
    est = SDCAClassifier(sigma=SIGMA, intercept_scaling=0.25, tol=1e-12, random_state=0).fit(X, y, trace=True)
    w = _weights(est)
    signs = np.where(y == est.classes_[1], 1.0, -1.0)
    margins = X @ w[:-1] + w[-1]
    expected = SIGMA / 2 * (w[:-1] @ w[:-1] + (w[-1] / 0.25) ** 2) + np.mean(
        np.logaddexp(0.0, -signs * margins)
    )
    assert est.trace_[-1].objective == pytest.approx(expected, rel=1e-9)


def test_n_iter_caps_the_epochs():
    X, y = binary_problem(n=300)
    est = SDCAClassifier(sigma=1e-4, tol=0.0, n_iter=3, random_state=0).fit(X, y)
    assert (est.n_iter_, est.stop_reason_) == (3, "completed")


def test_integer_weights_are_repeated_rows():
    """c_i = 2 scales phi_i (and its dual box) by 2: the optimum of the data with the row twice."""
    X, y = binary_problem(n=120, seed=6)
    weights = np.where(np.arange(120) % 3 == 0, 2.0, 1.0)
    weights[7] = 0.0
    repeated = np.repeat(np.arange(120), weights.astype(int))
    for loss in ("hinge", "logistic", "squared_hinge", "squared"):
        # s fixed: "auto" is the values' RMS, which repeating rows changes (another objective).
        params = dict(loss=loss, sigma=SIGMA, tol=1e-14, n_iter=20_000, random_state=0, intercept_scaling=1.0)
        weighted = SDCAClassifier(**params).fit(X, y, sample_weight=weights)
        copied = SDCAClassifier(**params).fit(X[repeated], y[repeated])
        np.testing.assert_allclose(_weights(weighted), _weights(copied), atol=1e-5, err_msg=loss)


def test_a_warm_start_from_the_optimum_stays_there():
    """The dual point of the optimum's weights (alpha_i = -phi_i'(<w*, x_i>)) is the optimal dual
    point: the first epoch's gap is already within tol, and the weights do not move."""
    X, y = binary_problem(n=300)
    cold = SDCAClassifier(sigma=SIGMA, tol=1e-13, n_iter=5000, random_state=0).fit(X, y)
    warm = SDCAClassifier(sigma=SIGMA, tol=1e-10, random_state=1)
    warm.fit(X, y, coef_init=cold.coef_, intercept_init=cold.intercept_)
    assert (warm.n_iter_, warm.stop_reason_) == (1, "converged")
    np.testing.assert_allclose(_weights(warm), _weights(cold), atol=1e-7)


def test_a_warm_start_from_another_sigma_reaches_the_cold_optimum():
    X, y = binary_problem(n=300)
    start = SDCAClassifier(sigma=1e-1, random_state=0).fit(X, y)
    params = dict(sigma=SIGMA, tol=1e-13, n_iter=5000, random_state=0)
    cold = SDCAClassifier(**params).fit(X, y)
    warm = SDCAClassifier(**params).fit(X, y, coef_init=start.coef_, intercept_init=start.intercept_)
    np.testing.assert_allclose(_weights(warm), _weights(cold), atol=1e-6)


def test_losses_without_an_sdca_step_are_refused_by_name():
    X, y = binary_problem(n=50)
    with pytest.raises(ValueError, match="'loss' parameter of SDCAClassifier"):
        SDCAClassifier(loss="smooth_hinge").fit(X, y)
    with pytest.raises(ValueError, match="'loss' parameter of SDCARegressor"):
        SDCARegressor(loss="huber").fit(X, y * 1.0)


def test_the_logistic_step_is_the_exact_maximiser_from_the_box_ends_too():
    """From b = 0 or b = c the sigmoid is flat at both ends of the Newton bracket; the step must
    still find the interior maximiser (the reference's numerical one) for any curvature q."""
    from solver.sdca import _logistic_step

    from .reference import _sdca_coordinate

    rng = np.random.default_rng(0)
    for _ in range(300):
        q, b = 10.0 ** rng.uniform(-2, 5), float(rng.choice([0.0, 1.0, rng.uniform()]))
        yz = float(rng.normal() * 10.0 ** rng.uniform(-1, 3))
        ours = _logistic_step(b, yz, q, 1.0)
        # The reference is in alpha-space with y = 1, where alpha = b and z = yz.
        theirs = _sdca_coordinate("logistic", b, yz, 1.0, 1.0, q)
        assert abs(ours - theirs) <= 1e-6, (b, yz, q)


def test_the_dual_rises_and_the_gap_closes_where_sigma_m_is_far_below_one():
    """sigma m = 0.003 on the data of scikit-learn's check_classifiers_train (scaled blobs, one
    class against the others) at the default sigma: each coordinate step maximises D, so D never
    falls, and the default cap of epochs lets the gap rule stop the run."""
    X, labels = make_blobs(n_samples=300, random_state=0)
    X, y = StandardScaler().fit_transform(X), labels == 0
    est = SDCAClassifier(sigma=1e-5, random_state=0).fit(X, y, trace=True)
    duals = [point.objective - point.duality_gap for point in est.trace_[1:]]
    assert all(later >= earlier - 1e-12 for earlier, later in zip(duals, duals[1:], strict=False))
    assert est.stop_reason_ == "converged"
    theirs = LBFGSClassifier(sigma=1e-5, tol=1e-15, n_iter=5000).fit(X, y)
    np.testing.assert_allclose(est.score(X, y), theirs.score(X, y), atol=1 / 300)
