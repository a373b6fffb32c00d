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
from solver.mirror_descent import THETA, MirrorEngine, dual_exponent

from .oracles import l1_optimum
from .problems import ScriptedDraws, binary_problem, l1_problem, objective_gap, rel_err, run_in_chunks
from .reference import reference_smidas, reference_smidas_steps


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
        as_kernel_data(as_input(X)),
        y[None, :],
        loss=LOSSES[loss],
        epsilon=1.0,
        sigma=0.01,
        eta=0.05,
        p=p,
        batch_size=k,
        fit_intercept=fit_intercept,
        rng=ScriptedDraws(batches.ravel()),
    )
    assert rel_err(run_in_chunks(engine, (1, 99, 300)), expected) < 1e-9
    assert 0 < np.count_nonzero(expected[: X.shape[1]]) < X.shape[1]  # sparse, not trivially so


def _smidas_engine(X, y, samples, *, sigma, eta, fit_intercept=False):
    return MirrorEngine(
        as_kernel_data(X),
        y[None, :],
        loss=LOSSES["logistic"],
        epsilon=1.0,
        sigma=sigma,
        eta=eta,
        p=dual_exponent(X.shape[1]),
        batch_size=1,
        fit_intercept=fit_intercept,
        rng=ScriptedDraws(samples),
    )


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_smidas_matches_algorithm_3_step_by_step(fit_intercept, as_input):
    # Every iterate, not only the last: the same weights and the same exact zeros of theta (the
    # truncation sets theta_j to 0.0 exactly wherever |theta~_j| <= eta sigma, at every step).
    X, y, rng = l1_problem("logistic", seed=4)
    samples = rng.integers(0, X.shape[0], size=300)
    sigma, eta = 0.05, 0.5
    engine = _smidas_engine(as_input(X), y, samples, sigma=sigma, eta=eta, fit_intercept=fit_intercept)
    n = X.shape[1]
    zeros_seen = 0
    for stepped, theta, w in reference_smidas_steps(
        X,
        y,
        samples[:, None],
        loss="logistic",
        sigma=sigma,
        eta=eta,
        p=dual_exponent(n),
        fit_intercept=fit_intercept,
    ):
        engine.run(1)
        assert rel_err(engine.output_weights()[0], w) < 1e-9
        kernel_theta = engine.states[0][:, THETA]
        truncated = np.abs(stepped[:n]) <= eta * sigma
        assert np.all(kernel_theta[:n][truncated] == 0.0)
        assert np.all(engine.output_weights()[0, :n][truncated] == 0.0)
        assert np.array_equal(kernel_theta == 0.0, theta == 0.0)
        zeros_seen += int(np.count_nonzero(truncated & (stepped[:n] != 0.0)))
    assert zeros_seen > 100  # many coordinates were truncated back to 0, not just left there


def test_smidas_keeps_exact_zeros_at_a_known_sparse_optimum():
    # Three informative features and 20 irrelevant ones, sparse +-0.2 noise. At sigma = 0.05 the
    # optimum (L-BFGS-B on w = u - v, intercept free) uses exactly the three informative ones.
    # A noise coordinate at 0 leaves it only on a sample with |l'(z_i)| > sigma / 0.2, and each
    # truncation by eta sigma pulls it back: most of the time it is exactly 0, and the last
    # iterate has the optimum's support, counted as exact non-zeros (no threshold).
    rng = np.random.default_rng(0)
    m = 400
    signal = rng.normal(size=(m, 3))
    y = np.where(signal @ np.array([2.0, -1.5, 1.0]) + 0.5 * rng.normal(size=m) > 0, 1.0, -1.0)
    noise = 0.2 * rng.choice([-1.0, 1.0], size=(m, 20)) * (rng.random((m, 20)) < 0.2)
    X = np.hstack([signal, noise])
    sigma = 0.05
    _, w_opt = l1_optimum(X, y, loss="logistic", sigma=sigma)
    assert np.array_equal(np.abs(w_opt) > 1e-8, np.arange(23) < 3)
    samples = rng.integers(0, m, size=40 * m)
    engine = _smidas_engine(X, y, samples, sigma=sigma, eta=0.05, fit_intercept=True)
    exact_zeros = []
    for _ in range(40):
        engine.run(m)
        exact_zeros.append(np.count_nonzero(engine.output_weights()[0, 3:23] == 0.0))
    w = engine.output_weights()[0, :23]  # the intercept (unpenalised, as in the oracle) left out
    assert np.count_nonzero(w) == 3 and np.all(w[:3] != 0.0)
    assert np.median(exact_zeros[20:]) >= 17 and min(exact_zeros[20:]) >= 10, exact_zeros


def test_data_accesses_count_the_nonzeros_read():
    X, y, rng = l1_problem("logistic", seed=3)
    Xs = sp.csr_matrix(X)
    samples = rng.integers(0, X.shape[0], size=60)
    engine = MirrorEngine(
        as_kernel_data(Xs),
        y[None, :],
        loss=LOSSES["logistic"],
        epsilon=1.0,
        sigma=0.01,
        eta=0.1,
        p=5,
        batch_size=2,
        fit_intercept=True,
        rng=ScriptedDraws(samples),
    )
    engine.run(30)
    assert engine.data_accesses == np.diff(Xs.indptr)[samples].sum()


@pytest.mark.parametrize("cls", [SMIDASClassifier, TruncGradClassifier])
def test_stochastic_methods_approach_the_optimum_as_eta_shrinks(cls, heart_l1):
    X, y, fopt, _ = heart_l1
    m = X.shape[0]
    # A constant step ends in a neighbourhood of the optimum whose size shrinks with eta
    # (Theorem 3: eta (p-1) rho^2 e / 2 + ||w*||_1^2 / (eta T)); epochs grow like 1 / eta.
    gaps = [
        objective_gap(
            cls(sigma=1e-2, eta=eta, n_iter=int(10 / eta) * m, random_state=0).fit(X, y), X, y, fopt
        )
        for eta in (0.1, 0.01)
    ]
    assert all(g > -1e-10 for g in gaps)
    assert gaps[1] < gaps[0] / 5 and gaps[1] < 3e-3, gaps


def test_dual_exponent_is_the_papers_ceil_2_ln_d():
    assert [dual_exponent(d) for d in (1, 2, 3, 1010, 7129, 124615)] == [2, 2, 3, 14, 18, 24]
    assert dual_exponent(1010) == math.ceil(2 * math.log(1010))


def test_divergence_raises_an_actionable_error():
    X, y = binary_problem()
    with pytest.raises(FloatingPointError, match="SMIDAS diverged.*Decrease eta"):
        SMIDASRegressor(eta=1e3, random_state=0).fit(X * 1e100, y * 1.0)
