"""SCD and GCD (L1 paper, Algorithm 2 and Section 4.2; solver.coordinate_descent): NumPy references
of the algorithms, data accesses, and the exact optima on real data."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import Lasso

from solver import (
    GCDClassifier,
    GCDRegressor,
    SCDClassifier,
    SCDRegressor,
)
from solver._sparse import as_kernel_data
from solver.coordinate_descent import GreedyCoordinateEngine, StochasticCoordinateEngine
from solver.losses import LOSSES

from .oracles import l1_optimum
from .problems import ScriptedDraws, binary_problem, l1_problem, objective_gap, rel_err, run_in_chunks
from .reference import reference_coordinate_descent


@pytest.mark.parametrize("beta", ["column", "uniform"])
@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("loss", ["logistic", "squared", "smooth_hinge", "huber"])
def test_scd_matches_algorithm_1(loss, fit_intercept, beta, as_input):
    X, y, rng = l1_problem(loss)
    coords = rng.integers(0, X.shape[1] + fit_intercept, size=300)
    expected = reference_coordinate_descent(
        X, y, 300, loss=loss, sigma=0.02, coords=coords, fit_intercept=fit_intercept, beta=beta
    )
    engine = StochasticCoordinateEngine(
        as_kernel_data(as_input(X)),
        y[None, :],
        loss=LOSSES[loss],
        epsilon=1.0,
        sigma=0.02,
        fit_intercept=fit_intercept,
        rng=ScriptedDraws(coords),
        beta=beta,
    )
    assert rel_err(run_in_chunks(engine, (7, 93, 200)), expected) < 1e-10
    if beta == "column":
        # The L1 term is active. (The uniform beta, set by the largest x_ij^2 of this Gaussian
        # data, is 10-26x the per-column one here: with its shorter steps and smaller thresholds
        # all 11 non-empty columns are non-zero after 300 updates.)
        assert 0 < np.count_nonzero(expected) < X.shape[1]


@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("loss", ["logistic", "squared"])
def test_gcd_matches_greedy_reference(loss, fit_intercept, as_input):
    X, y, _ = l1_problem(loss, seed=1)

    def engine():
        return GreedyCoordinateEngine(
            as_kernel_data(as_input(X)),
            y[None, :],
            loss=LOSSES[loss],
            epsilon=1.0,
            sigma=0.02,
            fit_intercept=fit_intercept,
        )

    # 60 steps span several exact recomputations of the maintained gradient (every 12-13 steps).
    expected = reference_coordinate_descent(
        X, y, 60, loss=loss, sigma=0.02, coords=None, fit_intercept=fit_intercept
    )
    assert rel_err(run_in_chunks(engine(), (5, 20, 35)), expected) < 1e-12
    # Near the optimum, ties between coordinates are decided by rounding and the reference's gain
    # (a difference of nearly equal terms) stops at gain <= 0, about 1e-8 from the optimum in w.
    expected = reference_coordinate_descent(
        X, y, 1000, loss=loss, sigma=0.02, coords=None, fit_intercept=fit_intercept
    )
    assert rel_err(run_in_chunks(engine(), (1000,)), expected) < 1e-7


def test_uniform_beta_is_the_papers_beta_on_data_in_the_unit_box():
    # Eq. (7): beta = sup l'' = 1/4 for the logistic loss when x in [-1, 1]^d reaches +-1.
    X, y, _ = l1_problem("logistic")
    X = X / np.abs(X).max()
    engine = StochasticCoordinateEngine(
        as_kernel_data(X),
        y[None, :],
        loss=LOSSES["logistic"],
        epsilon=1.0,
        sigma=0.01,
        fit_intercept=False,
        rng=None,
        beta="uniform",
    )
    betas = engine.coef[:, 0]
    assert betas[3] == 0.0  # the all-zero column is never updated
    assert np.all(np.delete(betas, 3) == 0.25)


def test_data_accesses_count_the_nonzeros_read():
    X, y, rng = l1_problem("logistic", seed=3)
    Xs = sp.csr_matrix(X)
    coords = rng.integers(0, X.shape[1] + 1, size=50)
    engine = StochasticCoordinateEngine(
        as_kernel_data(Xs),
        y[None, :],
        loss=LOSSES["logistic"],
        epsilon=1.0,
        sigma=0.01,
        fit_intercept=True,
        rng=ScriptedDraws(coords),
    )
    engine.run(50)
    column_nnz = np.r_[np.diff(Xs.tocsc().indptr), X.shape[0]]  # the intercept column is full
    assert engine.data_accesses == column_nnz[coords].sum()


@pytest.mark.parametrize("cls", [SCDClassifier, GCDClassifier])
def test_coordinate_descent_reaches_the_exact_optimum(cls, heart_l1):
    X, y, fopt, w_opt = heart_l1
    gaps = [
        objective_gap(cls(sigma=1e-2, n_iter=n, random_state=0).fit(X, y), X, y, fopt)
        for n in (100, 400, 3000)
    ]
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
    gaps = [
        objective_gap(
            SCDClassifier(sigma=1e-3, n_iter=sweeps * n_weights, random_state=0).fit(X, y), X, y, fopt
        )
        for sweeps in (10, 200)
    ]
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


def test_gcd_stops_when_no_step_decreases_the_objective():
    X, y = binary_problem()
    est = GCDClassifier(sigma=10.0, fit_intercept=False, n_iter=100).fit(X, y, trace=True)
    assert est.stop_reason_ == "converged" and est.n_iter_ == 0
    assert not est.coef_.any()


def test_overflowing_curvature_raises_an_actionable_error():
    X, y = binary_problem()
    # Coordinate descent cannot diverge (beta_j bounds the curvature exactly), but beta_j can overflow.
    with pytest.raises(ValueError, match="overflow.*Scale the features"):
        SCDRegressor(random_state=0).fit(X * 1e160, y * 1.0)
