"""gd, sgd and ogd (lecture 22, Algorithms 1-3; solver.gradient_descent): the written-out algorithms,
eq. (6), the equivalence of ogd with PGS for p = 2, and convergence to the exact optimum of
objective (1)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression

from solver import (
    GDClassifier,
    GDRegressor,
    OGDClassifier,
    OGDRegressor,
    PGSClassifier,
    SGDClassifier,
    SGDRegressor,
)
from solver._sparse import as_kernel_data
from solver.gradient_descent import SGDState
from solver.losses import LOSSES
from solver.pgs import PGSState

from .oracles import exact_optimum
from .problems import rel_err, sparse_problem
from .reference import DERIVATIVES, reference_gradient_method

SIGMA = 0.05


def _state(X, y, *, loss, schedule, eta=0.0, t0=0.0, k=1, fit_intercept=False, sigma=SIGMA):
    return SGDState(
        as_kernel_data(X),
        y,
        loss=LOSSES[loss],
        sigma=sigma,
        eta=eta,
        t0=t0,
        schedule=schedule,
        fit_intercept=fit_intercept,
        batch_size=k,
        epsilon=1.0,
        average=True,
    )


@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("loss", sorted(LOSSES))
@pytest.mark.parametrize(("algorithm", "k"), [("gd", None), ("sgd", 1), ("sgd", 5), ("ogd", 1), ("ogd", 5)])
def test_matches_algorithms_1_to_3(algorithm, k, loss, fit_intercept, as_input):
    X, y, rng = sparse_problem(loss)
    m, T = X.shape[0], 60
    if algorithm == "gd":
        batches = np.tile(np.arange(m), (T, 1))
        state = _state(
            as_input(X), y, loss=loss, schedule="constant", eta=0.3, k=m, fit_intercept=fit_intercept
        )
        steps = [0.3] * T
    else:
        batches = rng.integers(0, m, size=(T, k))
        if algorithm == "sgd":
            state = _state(
                as_input(X), y, loss=loss, schedule="constant", eta=0.3, k=k, fit_intercept=fit_intercept
            )
            steps = [0.3] * T
        else:
            t0 = 3.0
            state = _state(
                as_input(X), y, loss=loss, schedule="inverse_time", t0=t0, k=k, fit_intercept=fit_intercept
            )
            steps = [1.0 / (SIGMA * (t + t0)) for t in range(1, T + 1)]
    iterates = reference_gradient_method(
        X, y, batches, steps, loss=loss, sigma=SIGMA, fit_intercept=fit_intercept
    )
    # In chunks, as the driver runs it: the state must carry over.
    flat = batches.ravel() if algorithm != "gd" else np.arange(m)
    done = 0
    for n_steps in (1, 24, T - 25):
        chunk = flat if algorithm == "gd" else flat[done * k : (done + n_steps) * k]
        state.run(chunk, n_steps)
        done += n_steps
    assert rel_err(state.current(), iterates[-1]) < 1e-12
    assert rel_err(state.average(), np.mean(iterates[:-1], axis=0)) < 1e-12


def test_lecture_eq_6_closed_form():
    """Algorithm 3 with eta_t = 1 / (lambda t): w_{t+1} = -(1 / (lambda t)) sum_{s<=t} v_s."""
    X, y, rng = sparse_problem("logistic", seed=1)
    T = 50
    batches = rng.integers(0, X.shape[0], size=(T, 1))
    state = _state(X, y, loss="logistic", schedule="inverse_time", t0=0.0)
    v_sum = np.zeros(X.shape[1])
    for t in range(1, T + 1):
        w_t = state.current()
        i = batches[t - 1]
        v_sum += (DERIVATIVES["logistic"](X[i] @ w_t, y[i], 1.0)[:, None] * X[i]).mean(axis=0)
        state.run(batches[t - 1], 1)
        closed = -v_sum / (SIGMA * t)
        assert rel_err(state.current(), closed) < 1e-12


@pytest.mark.parametrize("k", [1, 4])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_ogd_iterates_are_pgs_iterates_shifted_by_one(k, fit_intercept, as_input):
    """w^PGS_t = w^OGD_{t+1} for the same samples and t0; t0 = 0 is the lecture's Algorithm 3."""
    X, y, rng = sparse_problem("logistic", seed=2)
    T = 80
    batches = rng.integers(0, X.shape[0], size=(T, k))
    data = as_kernel_data(as_input(X))
    for t0 in (0.0, 1.0, 7.5):
        ogd = _state(
            as_input(X), y, loss="logistic", schedule="inverse_time", t0=t0, k=k, fit_intercept=fit_intercept
        )
        pgs = PGSState(
            data,
            y,
            loss=LOSSES["logistic"],
            p=2.0,
            sigma=SIGMA,
            radius=np.inf,
            fit_intercept=fit_intercept,
            batch_size=k,
            t0=t0,
            epsilon=1.0,
            average=True,
        )
        for t in range(1, T + 1):
            ogd.run(batches[t - 1], 1)
            pgs.run(batches[t - 1])
            assert rel_err(pgs.current(), ogd.current()) < 1e-12, (t0, t)
        # PGS averages w_2..w_{T+1} of OGD, OGD (like the lecture) w_1..w_T, and w_1 = 0.
        np.testing.assert_allclose(
            pgs.average(),
            ogd.average() + ogd.current() / T,
            rtol=1e-12,
            atol=1e-15 * np.abs(ogd.current()).max(),
        )


@pytest.mark.parametrize("t0", [1.0, "auto"])
@pytest.mark.parametrize("loss", ["logistic", "hinge"])
def test_ogd_estimator_is_pgs_p2_given_the_same_seed(t0, loss):
    """Both engines draw the same samples for one seed; t0 = 1 is the PGS paper's (t + 1) sigma,
    and t0="auto" picks the same offset in both."""
    X, y = make_classification(n_samples=300, n_features=10, random_state=4)
    common = dict(loss=loss, sigma=1e-3, t0=t0, n_iter=3000, random_state=5)
    ogd = OGDClassifier(output="last", **common).fit(X, y)
    # ogd draws with replacement, has the constant feature 1 and the plain average.
    paper = dict(sampling="replacement", intercept_scaling=1.0, average_power=0.0)
    pgs = PGSClassifier(p=2.0, radius=None, output="last", **paper, **common).fit(X, y)
    np.testing.assert_allclose(ogd.coef_, pgs.coef_, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ogd.intercept_, pgs.intercept_, rtol=1e-12, atol=1e-14)
    avg = OGDClassifier(**common).fit(X, y)
    pgs_avg = PGSClassifier(p=2.0, radius=None, **paper, **common).fit(X, y)
    np.testing.assert_allclose(
        pgs_avg.coef_, avg.coef_ + ogd.coef_ / 3000, rtol=0, atol=1e-12 * np.abs(pgs_avg.coef_).max()
    )


def test_lazy_scaling_survives_folds_and_flushes():
    """eta sigma = 1 zeroes the scale at every step (a fold per iteration), and a tiny span forces
    the running sum to be flushed every few iterations; neither may change the iterates."""
    X, y, rng = sparse_problem("logistic", seed=3)
    T = 300
    batches = rng.integers(0, X.shape[0], size=(T, 2))
    for eta, span in ((1.0 / SIGMA, None), (0.7, 3.0), (1e-3, 2.0)):
        state = _state(X, y, loss="logistic", schedule="constant", eta=eta, k=2, fit_intercept=True)
        if span is not None:
            state.hyp = state.hyp._replace(span=span)
        state.run(batches.ravel(), T)
        iterates = reference_gradient_method(
            X, y, batches, [eta] * T, loss="logistic", sigma=SIGMA, fit_intercept=True
        )
        # (with eta sigma = 1 the reference's w - eta sigma w leaves rounding residue near 1e-16 |w|)
        scale = np.abs(iterates).max()
        np.testing.assert_allclose(state.current(), iterates[-1], rtol=1e-11, atol=1e-13 * scale)
        np.testing.assert_allclose(
            state.average(), np.mean(iterates[:-1], axis=0), rtol=1e-11, atol=1e-13 * scale
        )


def _gap(est, objective, fopt):
    w = np.r_[np.ravel(est.coef_), np.ravel(est.intercept_)]
    return (objective(w)[0] - fopt) / fopt


def _gaps(make, X, y, n_iters, objective, fopt):
    gaps = [_gap(make(n).fit(X, y), objective, fopt) for n in n_iters]
    assert all(g >= -1e-9 for g in gaps), "no iterate can beat the exact optimum"
    assert gaps == sorted(gaps, reverse=True), f"the gap must shrink with T: {gaps}"
    return gaps


@pytest.mark.parametrize("loss", ["logistic", "squared"])
def test_gd_converges_on_heart(heart, loss):
    X, y = heart
    sigma = 1e-2
    fopt, objective = exact_optimum(X, y, loss=loss, p=2.0, sigma=sigma)
    last = _gaps(
        lambda n: GDClassifier(loss=loss, sigma=sigma, n_iter=n, output="last"),
        X,
        y,
        (10, 100, 1000),
        objective,
        fopt,
    )
    assert last[-1] < 1e-9, last  # linear rate: the last iterate of a smooth, strongly convex F
    average = _gaps(
        lambda n: GDClassifier(loss=loss, sigma=sigma, n_iter=n), X, y, (10, 100, 1000), objective, fopt
    )
    assert average[-1] < 1e-3, average  # Algorithm 1's average: O(1/T)


A9A_SIGMA = 1e-3


@pytest.fixture(scope="module")
def a9a_optimum(a9a):
    """The exact optimum of objective (1) on a9a per loss, computed once for the module."""
    X, y, _, _ = a9a
    optima = {}

    def get(loss):
        if loss not in optima:
            optima[loss] = exact_optimum(X, y, loss=loss, p=2.0, sigma=A9A_SIGMA)
        return optima[loss]

    return get


@pytest.mark.parametrize("loss", ["logistic", "squared"])
def test_sgd_converges_on_a9a(a9a, a9a_optimum, loss):
    X, y, _, _ = a9a
    fopt, objective = a9a_optimum(loss)
    gaps = _gaps(
        lambda n: SGDClassifier(loss=loss, sigma=A9A_SIGMA, n_iter=n, random_state=0),
        X,
        y,
        (10**4, 10**5, 10**6),
        objective,
        fopt,
    )
    assert gaps[-1] < 1e-3, gaps


@pytest.mark.parametrize(("loss", "t0"), [("logistic", 0.0), ("squared", "auto")])
def test_ogd_converges_on_a9a(a9a, a9a_optimum, loss, t0):
    """t0 = 0 is the lecture's step 1 / (lambda t); the squared loss needs t0="auto" (below)."""
    X, y, _, _ = a9a
    fopt, objective = a9a_optimum(loss)
    gaps = _gaps(
        lambda n: OGDClassifier(loss=loss, sigma=A9A_SIGMA, t0=t0, n_iter=n, random_state=0),
        X,
        y,
        (10**4, 10**5, 10**6),
        objective,
        fopt,
    )
    assert gaps[-1] < 1e-3, gaps


def test_regressors_converge_on_abalone(abalone):
    X, y = abalone
    y = (y - y.mean()) / y.std()
    sigma = 1e-2
    fopt, objective = exact_optimum(X, y, loss="squared", p=2.0, sigma=sigma)
    for est in (
        GDRegressor(sigma=sigma, n_iter=2000, output="last"),
        SGDRegressor(sigma=sigma, n_iter=10**5, random_state=0),
        OGDRegressor(sigma=sigma, n_iter=10**5, random_state=0),
    ):
        assert _gap(est.fit(X, y), objective, fopt) < 1e-3, est


def test_lecture_step_diverges_on_the_squared_loss_with_an_actionable_error():
    X, y = make_regression(n_samples=200, n_features=5, random_state=0)
    with pytest.raises(FloatingPointError, match="no longer finite.*Scale the features.*t0='auto'"):
        OGDRegressor(sigma=1e-6, t0=0.0, random_state=0).fit(X * 10, y)
