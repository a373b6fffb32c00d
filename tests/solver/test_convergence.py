"""PGS approaches the exact optimum of eq. (7), computed by scipy's L-BFGS on the same objective."""

from __future__ import annotations

import numpy as np
import pytest

from solver import PGSClassifier, PGSRegressor

from .oracles import exact_optimum


def _gap(est, X, objective, fopt):
    coef = np.ravel(est.coef_)
    w = np.r_[coef, np.ravel(est.intercept_)]
    return (objective(w)[0] - fopt) / fopt


@pytest.mark.parametrize(("loss", "p"), [("logistic", 2.0), ("logistic", 1.8), ("squared", 2.0),
                                         ("squared", 1.8)])
def test_gap_to_lbfgs_optimum_shrinks_to_1e3(a9a, loss, p):
    X, y, _, _ = a9a
    y = np.where(y > 0, 1.0, -1.0)
    sigma = 1e-3
    fopt, objective = exact_optimum(X, y, loss=loss, p=p, sigma=sigma)
    gaps = []
    for n_iter in (10**3, 10**4, 10**5, 10**6):
        est = PGSClassifier(loss=loss, p=p, sigma=sigma, n_iter=n_iter, random_state=0).fit(X, y)
        gaps.append(_gap(est, X, objective, fopt))
    assert all(g >= -1e-9 for g in gaps), "no iterate can beat the exact optimum"
    assert gaps == sorted(gaps, reverse=True), f"the gap must shrink with T: {gaps}"
    assert gaps[-1] < 1e-3, gaps


def test_regression_gap_on_abalone(abalone):
    X, y = abalone
    y = (y - y.mean()) / y.std()
    sigma = 1e-3
    fopt, objective = exact_optimum(X, y, loss="squared", p=2.0, sigma=sigma)
    est = PGSRegressor(sigma=sigma, n_iter=10**6, random_state=0).fit(X, y)
    assert _gap(est, X, objective, fopt) < 1e-3
