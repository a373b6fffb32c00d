"""The regularisers (solver.penalties): one p-norm for every solver that uses it, the link's fast
powers, the L1 prox, and what an L1 penalty is for."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_classification

from solver import (
    GCDClassifier,
    LBFGSClassifier,
    PGSClassifier,
    SCDClassifier,
    SMIDASClassifier,
    TruncGradClassifier,
)
from solver.penalties import l1_penalty, l2_penalty, link_power, pnorm_penalty, soft_threshold


def test_same_objective_as_pgs():
    rng = np.random.default_rng(0)
    for p in (1.2, 1.5, 2.0):
        w = rng.normal(size=9) * (rng.random(9) < 0.6)
        ours = LBFGSClassifier(p=p, sigma=0.3)._penalty(w)
        theirs = PGSClassifier(p=p, sigma=0.3, intercept_scaling=1.0)._penalty(w)
        assert ours == pytest.approx(theirs, rel=1e-13)
        # The gradient, away from 0 where |w_j|^p is not twice differentiable for p < 2.
        w = rng.normal(size=9)
        _, grad = pnorm_penalty(w, p, 0.3)
        numeric = scipy.optimize.approx_fprime(w, lambda v, p=p: pnorm_penalty(v, p, 0.3)[0], 1e-7)
        np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-6)


@settings(max_examples=200, deadline=None)
@given(a=st.floats(0.0, 1e6), quarters=st.integers(1, 40))
def test_link_power_by_square_roots_equals_pow(a, quarters):
    q = 1.0 + quarters / 4.0
    assert np.isclose(link_power(a, q, quarters), a ** (q - 1.0), rtol=1e-14, atol=0.0)


def test_stronger_l1_gives_sparser_models():
    X, y = make_classification(n_samples=400, n_features=30, n_informative=4, random_state=0)
    for cls in (SCDClassifier, GCDClassifier, SMIDASClassifier, TruncGradClassifier):
        nnz = [
            np.count_nonzero(cls(sigma=s, random_state=0, n_iter=20000).fit(X, y).coef_) for s in (1e-4, 0.3)
        ]
        assert nnz[1] < nnz[0], (cls.__name__, nnz)


@pytest.mark.parametrize(
    ("x", "tau", "expected"), [(3.0, 1.0, 2.0), (-3.0, 1.0, -2.0), (0.5, 1.0, 0.0), (-1.0, 1.0, 0.0)]
)
def test_soft_threshold_is_the_l1_prox(x, tau, expected):
    assert soft_threshold(x, tau) == expected


def test_l1_penalty_leaves_the_intercept_out():
    w = np.array([1.0, -2.0, 5.0])
    assert l1_penalty(w, 0.5, fit_intercept=True) == 1.5
    assert l1_penalty(w, 0.5, fit_intercept=False) == 4.0


def test_l2_is_the_p_norm_penalty_at_p_2():
    w = np.array([1.0, -2.0, 0.5])
    assert l2_penalty(w, 0.3) == pnorm_penalty(w, 2.0, 0.3)[0] == pytest.approx(0.15 * 5.25)
