"""The PGS kernel (solver.pgs): the plain-NumPy Figures 1-2 reference given the same minibatches, the
identities of the factorised iterate, the epoch sampling, and convergence to the exact optimum."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver import (
    LBFGSClassifier,
    PGSClassifier,
    PGSRegressor,
)
from solver._sparse import as_kernel_data, prepare
from solver.losses import LOSSES
from solver.pgs import PGSState

from .oracles import exact_optimum
from .problems import binary_problem, rel_err, sparse_problem
from .reference import grad_r_star, reference_pgs

SIGMA = 0.05


def _run_fast(
    X,
    y,
    batches,
    *,
    loss,
    p,
    radius,
    fit_intercept,
    average=True,
    t0=1.0,
    splits=(25,),
    intercept_scaling=1.0,
    average_power=0.0,
):
    state = PGSState(
        as_kernel_data(X),
        y,
        loss=LOSSES[loss],
        p=p,
        sigma=SIGMA,
        radius=np.inf if radius is None else radius,
        fit_intercept=fit_intercept,
        batch_size=batches.shape[1],
        t0=t0,
        epsilon=1.0,
        average=average,
        intercept_scaling=intercept_scaling,
        average_power=average_power,
    )
    # Several chunks, as the driver runs them: the state must carry over exactly.
    start = 0
    for stop in (*splits, len(batches)):
        state.run(np.ascontiguousarray(batches[start:stop]).ravel())
        start = stop
    return state


@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("radius", [None, 0.7])
@pytest.mark.parametrize("k", [1, 7])
@pytest.mark.parametrize("p", [1.1, 1.5, 1.8, 2.0])
@pytest.mark.parametrize("loss", sorted(LOSSES))
def test_matches_reference(loss, p, k, radius, fit_intercept, as_input):
    X, y, rng = sparse_problem(loss)
    batches = rng.integers(0, X.shape[0], size=(60, k))
    iterates = reference_pgs(
        X, y, batches, loss=loss, p=p, sigma=SIGMA, radius=radius, fit_intercept=fit_intercept
    )
    state = _run_fast(as_input(X), y, batches, loss=loss, p=p, radius=radius, fit_intercept=fit_intercept)
    assert rel_err(state.current(), iterates[-1]) < 1e-9
    assert rel_err(state.average(), np.mean(iterates, axis=0)) < 1e-9


@pytest.mark.parametrize("p", [1.5, 2.0])
def test_every_iterate_matches_and_projection_binds(p):
    """Iterate by iterate, with a radius small enough that Figure 2's line 6 fires."""
    X, y, rng = sparse_problem("logistic", seed=1)
    batches = rng.integers(0, X.shape[0], size=(30, 3))
    radius = 0.05
    iterates = reference_pgs(
        X, y, batches, loss="logistic", p=p, sigma=SIGMA, radius=radius, fit_intercept=True
    )
    state = _run_fast(X, y, batches[:1], loss="logistic", p=p, radius=radius, fit_intercept=True, splits=())
    for t in range(1, len(batches)):
        assert rel_err(state.current(), iterates[t - 1]) < 1e-9
        state.run(batches[t])
    norms = [np.sum(np.abs(w) ** p) ** (1 / p) for w in iterates]
    assert max(norms) == pytest.approx(radius, rel=1e-12)


def test_t0_generalises_the_paper_offset():
    X, y, rng = sparse_problem("hinge", seed=2)
    batches = rng.integers(0, X.shape[0], size=(40, 2))
    iterates = reference_pgs(X, y, batches, loss="hinge", p=1.8, sigma=SIGMA, t0=25.0)
    state = _run_fast(X, y, batches, loss="hinge", p=1.8, radius=None, fit_intercept=False, t0=25.0)
    assert rel_err(state.current(), iterates[-1]) < 1e-9


def test_float32_input_matches_float64():
    X, y, rng = sparse_problem("logistic", seed=3)
    batches = rng.integers(0, X.shape[0], size=(50, 1))
    X32 = X.astype(np.float32)
    iterates = reference_pgs(X32.astype(np.float64), y, batches, loss="logistic", p=1.5, sigma=SIGMA)
    state = _run_fast(X32, y, batches, loss="logistic", p=1.5, radius=None, fit_intercept=False)
    assert rel_err(state.average(), np.mean(iterates, axis=0)) < 1e-9


def test_long_runs_stay_accurate_for_small_p():
    """Thousands of iterations at q = 21 (p = 1.05) exercise the rescaling of lambda and the
    restarts of the average's prefix sum; the fast solver must still track the reference."""
    X, y, rng = sparse_problem("logistic", seed=4)
    batches = rng.integers(0, X.shape[0], size=(3000, 1))
    iterates = reference_pgs(X, y, batches, loss="logistic", p=1.05, sigma=1e-3)
    state = PGSState(
        as_kernel_data(X),
        y,
        loss=LOSSES["logistic"],
        p=1.05,
        sigma=1e-3,
        radius=np.inf,
        fit_intercept=False,
        batch_size=1,
        t0=1.0,
        epsilon=1.0,
        average=True,
    )
    state.run(batches.ravel())
    assert rel_err(state.current(), iterates[-1]) < 1e-9
    assert rel_err(state.average(), np.mean(iterates, axis=0)) < 1e-9


@pytest.mark.parametrize("p", [1.5, 2.0])
def test_intercept_scaling_is_a_constant_feature_of_that_value(p):
    """intercept_scaling=s runs Figure 1 on X with a constant column s; the returned intercept is
    s times that column's weight."""
    X, y, rng = sparse_problem("logistic", seed=5)
    batches = rng.integers(0, X.shape[0], size=(60, 2))
    iterates = reference_pgs(
        X, y, batches, loss="logistic", p=p, sigma=SIGMA, radius=0.7, fit_intercept=True, intercept_value=0.3
    )
    state = _run_fast(
        X, y, batches, loss="logistic", p=p, radius=0.7, fit_intercept=True, intercept_scaling=0.3
    )
    scale = np.ones(X.shape[1] + 1)
    scale[-1] = 0.3
    assert rel_err(state.current(), iterates[-1] * scale) < 1e-9
    assert rel_err(state.average(), np.mean(iterates, axis=0) * scale) < 1e-9


@pytest.mark.parametrize("power", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("p", [1.05, 1.8, 2.0])
def test_weighted_average_matches_reference(p, power):
    """average_power=a returns sum_t t^a w_t / sum_t t^a; long runs at p = 1.05 also exercise the
    restarts of the weighted prefix sum."""
    X, y, rng = sparse_problem("logistic", seed=6)
    n_iter = 3000 if p == 1.05 else 200
    batches = rng.integers(0, X.shape[0], size=(n_iter, 1))
    iterates = reference_pgs(X, y, batches, loss="logistic", p=p, sigma=SIGMA, fit_intercept=True)
    state = _run_fast(
        X,
        y,
        batches,
        loss="logistic",
        p=p,
        radius=None,
        fit_intercept=True,
        average_power=power,
        splits=(25, 130),
    )
    weights = np.arange(1, n_iter + 1, dtype=np.float64) ** power
    assert rel_err(state.average(), np.average(iterates, axis=0, weights=weights)) < 1e-9


ps = st.sampled_from([1.05, 1.1, 1.25, 1.5, 1.8, 1.9, 2.0]) | st.floats(1.02, 2.0)


@settings(max_examples=60, deadline=None)
@given(
    p=ps,
    seed=st.integers(0, 2**31),
    radius=st.none() | st.floats(1e-3, 10.0),
    scale=st.floats(1e-3, 1e3),
    t0=st.floats(1.0, 1e4),
)
def test_state_is_grad_r_star_of_lambda(p, seed, radius, scale, t0):
    """w_t = grad r*(lambda / ((t + t0) sigma)) with the projection (Figure 2), the dual-norm
    identities ||w||_p = min(B, (p-1) ||lambda||_q / ((t+t0) sigma)) and Hoelder's equality
    <w, lambda> = ||w||_p ||lambda||_q, and (inside the ball) grad r inverts the link."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(20, 6)) * scale * (rng.random((20, 6)) < 0.6)
    y = np.where(rng.random(20) < 0.5, -1.0, 1.0)
    sigma = 0.1
    state = PGSState(
        as_kernel_data(X),
        y,
        loss=LOSSES["logistic"],
        p=p,
        sigma=sigma,
        radius=np.inf if radius is None else radius,
        fit_intercept=True,
        batch_size=2,
        t0=t0,
        epsilon=1.0,
        average=False,
    )
    state.run(rng.integers(0, 20, size=2 * 37))
    lam = state.dual()
    w = state.current()
    theta = lam / ((state.t + t0) * sigma)
    expected = grad_r_star(theta, p, radius)
    np.testing.assert_allclose(w, expected, rtol=1e-9, atol=1e-12 * np.abs(expected).max())
    q = p / (p - 1.0)
    norm_w = np.sum(np.abs(w) ** p) ** (1 / p)
    norm_lam = np.sum(np.abs(lam) ** q) ** (1 / q)
    unprojected = (p - 1.0) * norm_lam / ((state.t + t0) * sigma)
    assert np.isclose(norm_w, min(unprojected, radius or np.inf), rtol=1e-9)
    assert np.isclose(w @ lam, norm_w * norm_lam, rtol=1e-9)
    if radius is None or unprojected <= radius:
        # The inverse link: grad r(w) = ||w||_p^(2-p) sgn(w) |w|^(p-1) / (p-1) gives theta back.
        grad_r = norm_w ** (2.0 - p) * np.sign(w) * np.abs(w) ** (p - 1.0) / (p - 1.0)
        np.testing.assert_allclose(grad_r, theta, rtol=1e-8, atol=1e-10 * np.abs(theta).max())


def test_permutation_sampling_visits_every_sample_once_per_epoch():
    X, y = binary_problem(n=50)
    clf = PGSClassifier(sampling="permutation", random_state=0)
    engine = clf._make_engine(*prepare(X), np.where(y == 1, 1.0, -1.0)[None, :], np.random.default_rng(0))
    drawn = np.concatenate([next(engine.sampler.draw(k)).rows for k in (7, 30, 13, 50, 1, 49)])
    for epoch in range(3):
        assert sorted(drawn[50 * epoch : 50 * (epoch + 1)]) == list(range(50))


def test_permutation_sampling_is_uniform():
    """The lazy Fisher-Yates shuffle: over 6,000 epochs of 4 samples, each of the 24 orders comes
    up about 250 times (chi-square with 23 degrees of freedom; 60 is beyond its 0.9999 quantile)."""
    engine = PGSClassifier()._make_engine(
        *prepare(np.eye(4)), np.array([[1.0, -1.0, 1.0, -1.0]]), np.random.default_rng(0)
    )
    draws = [next(engine.sampler.draw(k)).rows for k in [3, 5, 8] * 1000]
    drawn = np.concatenate(draws).reshape(-1, 4)
    orders, counts = np.unique(drawn, axis=0, return_counts=True)
    assert len(orders) == 24
    expected = len(drawn) / 24
    assert np.sum((counts - expected) ** 2 / expected) < 60.0


def _gap(est, X, objective, fopt):
    coef = np.ravel(est.coef_)
    w = np.r_[coef, np.ravel(est.intercept_)]
    return (objective(w)[0] - fopt) / fopt


@pytest.mark.parametrize(
    ("loss", "p"), [("logistic", 2.0), ("logistic", 1.8), ("squared", 2.0), ("squared", 1.8)]
)
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


def _objective_of(est, X, y):
    return est._objective(X, y, np.r_[np.ravel(est.coef_), np.ravel(est.intercept_)])


def test_pgs_approaches_the_lbfgs_optimum(a9a):
    # The comparison the service shows (PGS paper, Figure 5): both minimise the same objective.
    X, y, _, _ = a9a
    y = np.where(y > 0, 1.0, -1.0)
    best = LBFGSClassifier(sigma=1e-3, p=1.8).fit(X, y)
    fopt = _objective_of(best, X, y)
    pgs = PGSClassifier(sigma=1e-3, p=1.8, n_iter=200000, random_state=0).fit(X, y)
    assert 0 < (_objective_of(pgs, X, y) - fopt) / fopt < 1e-2
