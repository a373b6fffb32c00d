"""L-BFGS (solver.lbfgs): checked against independent optimisers, and the pausing of scipy's run
between checkpoints."""

from __future__ import annotations

import gc
import threading
import time

import numpy as np
import pytest
import scipy.optimize
from sklearn.linear_model import LogisticRegression, Ridge

from solver import (
    LBFGSClassifier,
    LBFGSRegressor,
)

from .oracles import exact_optimum
from .problems import binary_problem


def _objective_of(est, X, y):
    return est._objective(X, y, np.r_[np.ravel(est.coef_), np.ravel(est.intercept_)])


def test_matches_sklearn_logistic_regression_on_a9a(a9a):
    X, y, _, _ = a9a
    y = np.where(y > 0, 1.0, -1.0)
    sigma = 1e-3
    est = LBFGSClassifier(sigma=sigma, fit_intercept=False, tol=0.0).fit(X, y)
    # sklearn: C sum_i l + ||w||^2 / 2, which is m C times ours for C = 1 / (sigma m).
    ref = LogisticRegression(
        C=1.0 / (sigma * X.shape[0]), fit_intercept=False, tol=1e-14, max_iter=10000
    ).fit(X, y)
    # a9a's one-hot groups leave directions of curvature about sigma, along which the optimum is
    # only determined to sqrt(rounding / sigma) by any method that compares objective values.
    ours, theirs = (est._objective(X, y, e.coef_[0]) for e in (est, ref))
    assert ours == pytest.approx(theirs, rel=1e-12)
    np.testing.assert_allclose(est.coef_, ref.coef_, atol=1e-5)
    assert est.stop_reason_ == "converged"


def test_matches_sklearn_ridge_on_abalone(abalone):
    X, y = abalone
    y = (y - y.mean()) / y.std()
    sigma = 1e-2
    est = LBFGSRegressor(sigma=sigma, fit_intercept=False, tol=0.0).fit(X, y)
    # Ridge: ||y - Xw||^2 + alpha ||w||^2, which is m times ours for alpha = sigma m / 2.
    ref = Ridge(alpha=sigma * X.shape[0] / 2, fit_intercept=False, tol=1e-14).fit(X.toarray(), y)
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize(("data", "loss", "p"), [("a9a", "logistic", 1.5), ("heart", "squared", 1.8)])
def test_matches_an_independent_scipy_run_for_p_below_2(data, loss, p, request):
    X, y = request.getfixturevalue(data)[:2]
    y = np.where(y > 0, 1.0, -1.0)
    fopt, objective = exact_optimum(X, y, loss=loss, p=p, sigma=1e-3)
    est = LBFGSClassifier(loss=loss, p=p, sigma=1e-3).fit(X, y)
    w = np.r_[est.coef_[0], est.intercept_]
    assert abs(objective(w)[0] - fopt) / fopt < 1e-8
    assert _objective_of(est, X, y) == pytest.approx(objective(w)[0], rel=1e-12)  # same objective


def test_pausing_between_checkpoints_does_not_change_the_run(heart):
    X, y = heart
    y = np.where(y > 0, 1.0, -1.0)
    params = dict(p=1.5, sigma=1e-3, n_iter=25, tol=0.0)
    plain = LBFGSClassifier(**params).fit(X, y)
    traced = LBFGSClassifier(**params, checkpoint_growth=1.01).fit(X, y, trace=True)
    np.testing.assert_array_equal(plain.coef_, traced.coef_)
    # Checkpoints from 1,000 samples seen on: heart's 270 rows make that iteration 4.
    assert [pt.iteration for pt in traced.trace_][:6] == [0, 4, 5, 6, 7, 8]
    # ...and is the same as one scipy call with maxiter=25 on the same function.
    _, objective = exact_optimum(X, y, loss="logistic", p=1.5, sigma=1e-3)
    direct = scipy.optimize.minimize(
        objective,
        np.zeros(X.shape[1] + 1),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 25, "gtol": 0.0, "ftol": 0.0},
    )
    np.testing.assert_allclose(np.r_[plain.coef_[0], plain.intercept_], direct.x, rtol=1e-7, atol=1e-10)


def test_trace_is_monotone_and_counts_data_accesses(heart):
    X, y = heart
    est = LBFGSClassifier(sigma=1e-3).fit(X, y, trace=True)
    objectives = [pt.objective for pt in est.trace_]
    assert all(b <= a + 1e-15 for a, b in zip(objectives, objectives[1:], strict=False))
    accesses = [pt.data_accesses for pt in est.trace_]
    assert accesses[0] == 0 and all(a % X.nnz == 0 for a in accesses)
    assert accesses[-1] >= est.n_iter_ * X.nnz  # at least one evaluation per iteration
    assert est.stop_reason_ == "converged" and est.n_iter_ < 1000
    assert est.trace_[-1].samples_seen == est.n_iter_ * X.shape[0]


def _solver_threads():
    return [t for t in threading.enumerate() if t.name != "MainThread" and t.daemon]


def _wait_for_no_threads(before):
    for _ in range(100):
        gc.collect()
        if len(_solver_threads()) <= before:
            return True
        time.sleep(0.01)
    return False


def test_stopped_runs_leave_no_thread_behind():
    X, y = binary_problem(n=2000)
    before = len(_solver_threads())
    # Paused mid-run (n_iter reached, time budget, callback): the finaliser ends scipy's thread.
    LBFGSClassifier(sigma=1e-6, n_iter=3, tol=0.0).fit(X, y)
    LBFGSClassifier(sigma=1e-6, n_iter=10**6, tol=0.0, time_budget=0.05).fit(X, y)
    clf = LBFGSClassifier(sigma=1e-6, tol=0.0, n_iter=10**6)
    clf.fit(X, y, trace=True, callback=lambda progress: False)
    assert clf.stop_reason_ == "callback"
    assert _wait_for_no_threads(before)


def test_errors_in_the_objective_reach_the_caller():
    X, y = binary_problem()
    with pytest.raises(ValueError, match="Input X contains infinity"):
        LBFGSClassifier().fit(np.where(X > 1, np.inf, X), y)
    # An overflow inside scipy's thread is raised here, not lost in the thread.
    with pytest.raises(FloatingPointError, match="overflowed.*Scale the features"):
        LBFGSRegressor(sigma=1e-3).fit(X * 1e200, y * 1.0)
