"""The Numba PGS matches the plain-NumPy Figures 1-2 reference given the same minibatches."""

from __future__ import annotations

import numpy as np
import pytest

from solver._sparse import as_kernel_data
from solver.losses import LOSSES
from solver.pgs import PGSState

from .reference import reference_pgs

SIGMA = 0.05


def _problem(loss: str, seed: int = 0):
    rng = np.random.default_rng(seed)
    m, n = 40, 12
    X = rng.normal(size=(m, n)) * (rng.random((m, n)) < 0.4)
    if LOSSES[loss].classification:
        y = np.where(rng.random(m) < 0.5, -1.0, 1.0)
    else:
        y = rng.normal(size=m)
    return X, y, rng


def _run_fast(X, y, batches, *, loss, p, radius, fit_intercept, average=True, t0=1.0, splits=(25,),
              intercept_scaling=1.0, average_power=0.0):
    state = PGSState(
        as_kernel_data(X), y, loss_code=LOSSES[loss].code, p=p, sigma=SIGMA,
        radius=np.inf if radius is None else radius, fit_intercept=fit_intercept,
        batch_size=batches.shape[1], t0=t0, epsilon=1.0, average=average,
        intercept_scaling=intercept_scaling, average_power=average_power,
    )
    # Several chunks, as the driver runs them: the state must carry over exactly.
    start = 0
    for stop in (*splits, len(batches)):
        state.run(np.ascontiguousarray(batches[start:stop]).ravel())
        start = stop
    return state


def _rel_err(a, b):
    return np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300)


@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("radius", [None, 0.7])
@pytest.mark.parametrize("k", [1, 7])
@pytest.mark.parametrize("p", [1.1, 1.5, 1.8, 2.0])
@pytest.mark.parametrize("loss", sorted(LOSSES))
def test_matches_reference(loss, p, k, radius, fit_intercept, as_input):
    X, y, rng = _problem(loss)
    batches = rng.integers(0, X.shape[0], size=(60, k))
    iterates = reference_pgs(
        X, y, batches, loss=loss, p=p, sigma=SIGMA, radius=radius, fit_intercept=fit_intercept
    )
    state = _run_fast(as_input(X), y, batches, loss=loss, p=p, radius=radius,
                      fit_intercept=fit_intercept)
    assert _rel_err(state.current(), iterates[-1]) < 1e-9
    assert _rel_err(state.average(), np.mean(iterates, axis=0)) < 1e-9


@pytest.mark.parametrize("p", [1.5, 2.0])
def test_every_iterate_matches_and_projection_binds(p):
    """Iterate by iterate, with a radius small enough that Figure 2's line 6 fires."""
    X, y, rng = _problem("logistic", seed=1)
    batches = rng.integers(0, X.shape[0], size=(30, 3))
    radius = 0.05
    iterates = reference_pgs(X, y, batches, loss="logistic", p=p, sigma=SIGMA, radius=radius,
                             fit_intercept=True)
    state = _run_fast(X, y, batches[:1], loss="logistic", p=p, radius=radius, fit_intercept=True,
                      splits=())
    for t in range(1, len(batches)):
        assert _rel_err(state.current(), iterates[t - 1]) < 1e-9
        state.run(batches[t])
    norms = [np.sum(np.abs(w) ** p) ** (1 / p) for w in iterates]
    assert max(norms) == pytest.approx(radius, rel=1e-12)


def test_t0_generalises_the_paper_offset():
    X, y, rng = _problem("hinge", seed=2)
    batches = rng.integers(0, X.shape[0], size=(40, 2))
    iterates = reference_pgs(X, y, batches, loss="hinge", p=1.8, sigma=SIGMA, t0=25.0)
    state = _run_fast(X, y, batches, loss="hinge", p=1.8, radius=None, fit_intercept=False,
                      t0=25.0)
    assert _rel_err(state.current(), iterates[-1]) < 1e-9


def test_float32_input_matches_float64():
    X, y, rng = _problem("logistic", seed=3)
    batches = rng.integers(0, X.shape[0], size=(50, 1))
    X32 = X.astype(np.float32)
    iterates = reference_pgs(X32.astype(np.float64), y, batches, loss="logistic", p=1.5,
                             sigma=SIGMA)
    state = _run_fast(X32, y, batches, loss="logistic", p=1.5, radius=None, fit_intercept=False)
    assert _rel_err(state.average(), np.mean(iterates, axis=0)) < 1e-9


def test_long_runs_stay_accurate_for_small_p():
    """Thousands of iterations at q = 21 (p = 1.05) exercise the rescaling of lambda and the
    restarts of the average's prefix sum; the fast solver must still track the reference."""
    X, y, rng = _problem("logistic", seed=4)
    batches = rng.integers(0, X.shape[0], size=(3000, 1))
    iterates = reference_pgs(X, y, batches, loss="logistic", p=1.05, sigma=1e-3)
    state = PGSState(
        as_kernel_data(X), y, loss_code=LOSSES["logistic"].code, p=1.05, sigma=1e-3,
        radius=np.inf, fit_intercept=False, batch_size=1, t0=1.0, epsilon=1.0, average=True,
    )
    state.run(batches.ravel())
    assert _rel_err(state.current(), iterates[-1]) < 1e-9
    assert _rel_err(state.average(), np.mean(iterates, axis=0)) < 1e-9


@pytest.mark.parametrize("p", [1.5, 2.0])
def test_intercept_scaling_is_a_constant_feature_of_that_value(p):
    """intercept_scaling=s runs Figure 1 on X with a constant column s; the returned intercept is
    s times that column's weight."""
    X, y, rng = _problem("logistic", seed=5)
    batches = rng.integers(0, X.shape[0], size=(60, 2))
    iterates = reference_pgs(X, y, batches, loss="logistic", p=p, sigma=SIGMA, radius=0.7,
                             fit_intercept=True, intercept_value=0.3)
    state = _run_fast(X, y, batches, loss="logistic", p=p, radius=0.7, fit_intercept=True,
                      intercept_scaling=0.3)
    scale = np.ones(X.shape[1] + 1)
    scale[-1] = 0.3
    assert _rel_err(state.current(), iterates[-1] * scale) < 1e-9
    assert _rel_err(state.average(), np.mean(iterates, axis=0) * scale) < 1e-9


@pytest.mark.parametrize("power", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("p", [1.05, 1.8, 2.0])
def test_weighted_average_matches_reference(p, power):
    """average_power=a returns sum_t t^a w_t / sum_t t^a; long runs at p = 1.05 also exercise the
    restarts of the weighted prefix sum."""
    X, y, rng = _problem("logistic", seed=6)
    n_iter = 3000 if p == 1.05 else 200
    batches = rng.integers(0, X.shape[0], size=(n_iter, 1))
    iterates = reference_pgs(X, y, batches, loss="logistic", p=p, sigma=SIGMA, fit_intercept=True)
    state = _run_fast(X, y, batches, loss="logistic", p=p, radius=None, fit_intercept=True,
                      average_power=power, splits=(25, 130))
    weights = np.arange(1, n_iter + 1, dtype=np.float64) ** power
    assert _rel_err(state.average(), np.average(iterates, axis=0, weights=weights)) < 1e-9
