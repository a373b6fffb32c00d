"""SMIDAS and truncated gradient (L1 paper, Algorithm 3; solver.mirror_descent): Algorithm 3 as printed,
data accesses, and the approach to the exact optimum as eta shrinks."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from solver import (
    SMIDASClassifier,
    SMIDASRegressor,
    TruncGradClassifier,
)
from solver._sparse import as_kernel_data
from solver.losses import LOSSES
from solver.mirror_descent import MirrorEngine, dual_exponent

from .problems import ScriptedDraws, binary_problem, l1_problem, objective_gap, rel_err, run_in_chunks
from .reference import reference_smidas


@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("loss", ["logistic", "hinge", "squared"])
@pytest.mark.parametrize("link", ["smidas", "truncgrad"])
def test_mirror_descent_matches_algorithm_3(link, loss, k, fit_intercept, as_input):
    X, y, rng = l1_problem(loss, seed=2)
    p = dual_exponent(X.shape[1]) if link == "smidas" else 2
    assert p == (5 if link == "smidas" else 2)  # ceil(2 ln 12)
    batches = rng.integers(0, X.shape[0], size=(400, k))
    params = dict(loss=loss, sigma=0.01, eta=0.05, fit_intercept=fit_intercept)
    expected = reference_smidas(X, y, batches, p=p, **params)
    engine = MirrorEngine(
        as_kernel_data(as_input(X)), y[None, :], loss=LOSSES[loss], epsilon=1.0,
        sigma=0.01, eta=0.05, p=p, batch_size=k, fit_intercept=fit_intercept,
        rng=ScriptedDraws(batches.ravel()),
    )
    assert rel_err(run_in_chunks(engine, (1, 99, 300)), expected) < 1e-9
    assert 0 < np.count_nonzero(expected[:X.shape[1]]) < X.shape[1]  # sparse, not trivially so


def test_data_accesses_count_the_nonzeros_read():
    X, y, rng = l1_problem("logistic", seed=3)
    Xs = sp.csr_matrix(X)
    samples = rng.integers(0, X.shape[0], size=60)
    engine = MirrorEngine(as_kernel_data(Xs), y[None, :], loss=LOSSES["logistic"],
                          epsilon=1.0, sigma=0.01, eta=0.1, p=5, batch_size=2, fit_intercept=True,
                          rng=ScriptedDraws(samples))
    engine.run(30)
    assert engine.data_accesses == np.diff(Xs.indptr)[samples].sum()


@pytest.mark.parametrize("cls", [SMIDASClassifier, TruncGradClassifier])
def test_stochastic_methods_approach_the_optimum_as_eta_shrinks(cls, heart_l1):
    X, y, fopt, _ = heart_l1
    m = X.shape[0]
    # A constant step ends in a neighbourhood of the optimum whose size shrinks with eta
    # (Theorem 3: eta (p-1) rho^2 e / 2 + ||w*||_1^2 / (eta T)); epochs grow like 1 / eta.
    gaps = [objective_gap(cls(sigma=1e-2, eta=eta, n_iter=int(10 / eta) * m, random_state=0).fit(X, y),
                 X, y, fopt) for eta in (0.1, 0.01)]
    assert all(g > -1e-10 for g in gaps)
    assert gaps[1] < gaps[0] / 5 and gaps[1] < 3e-3, gaps


def test_dual_exponent_is_the_papers_ceil_2_ln_d():
    assert [dual_exponent(d) for d in (1, 2, 3, 1010, 7129, 124615)] == [2, 2, 3, 14, 18, 24]
    assert dual_exponent(1010) == math.ceil(2 * math.log(1010))


def test_divergence_raises_an_actionable_error():
    X, y = binary_problem()
    with pytest.raises(FloatingPointError, match="SMIDAS diverged.*Decrease eta"):
        SMIDASRegressor(eta=1e3, random_state=0).fit(X * 1e100, y * 1.0)
