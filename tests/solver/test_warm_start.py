"""Warm starts (``fit(coef_init=..., intercept_init=...)``): every family whose engine can start
from weights starts exactly there, a started fit keeps the cold fit's optimum, PGS's inverse link
maps w back to its dual state, and bad starts are refused by name."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from solver import SOLVERS, ShardedMatrix
from solver._sparse import prepare
from solver.losses import LOSSES
from solver.mirror_descent import MirrorEngine
from solver.penalties import conjugate_exponent
from solver.pgs import PGSState

from .problems import binary_problem

WARM = sorted(name for name, spec in SOLVERS.items() if spec.classifier.warm_starts)


def _start(n_features: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.normal(scale=10.0, size=(1, n_features)), rng.normal(scale=10.0, size=1)


def test_every_linear_family_warm_starts_and_kernel_pgs_says_why_not():
    assert WARM == ["gcd", "gd", "lbfgs", "ogd", "pgs", "scd", "sdca", "sgd", "smidas", "truncgrad"]
    X, y = binary_problem(n=100)
    with pytest.raises(ValueError, match="cannot start from given weights.*kernels at its own training rows"):
        SOLVERS["kernel_pgs"].classifier(sigma=1e-2).fit(X, y, coef_init=np.zeros((1, X.shape[1])))


# L-BFGS's first line search may step far: its start is checked by the regressor test below. SDCA
# starts from the dual point the weights imply, not from the weights (tests/solver/test_sdca.py).
@pytest.mark.parametrize("name", [name for name in WARM if name not in ("lbfgs", "sdca")])
def test_a_fit_of_one_iteration_moves_little_from_its_start(name):
    """After one iteration the model is the start moved by one step, far nearer to it than to
    0 (a coordinate step moves one weight alone): the engine read the start, not zeros."""
    X, y = binary_problem(n=200)
    coef, intercept = _start(X.shape[1])
    params = {"sigma": 1e-3, "n_iter": 1, "random_state": 0}
    if name in ("pgs", "sgd", "ogd", "gd"):
        params["output"] = "last"
    est = SOLVERS[name].classifier(**params).fit(X, y, coef_init=coef, intercept_init=intercept)
    start = np.append(coef, intercept)
    moved = np.append(est.coef_, est.intercept_) - start
    if name in ("scd", "gcd"):
        assert np.count_nonzero(moved) == 1
    else:
        assert np.linalg.norm(moved) < 0.25 * np.linalg.norm(start)


@pytest.mark.parametrize("p", [2.0, 1.3])
def test_pgs_inverse_link_recovers_the_dual_state(p):
    """solver.pgs.PGSState.start_from: lambda = t0 sigma grad r(w), the inverse of w = grad
    r*(lambda / (t0 sigma)) (PGS paper, Figure 2, line 3, and the conjugate pair of eq. (3));
    for p = 2 it is lambda = t0 sigma w (eq. (10) read backwards)."""
    X, y = binary_problem(n=50)
    data, _ = prepare(X)
    w = np.random.default_rng(1).normal(size=X.shape[1] + 1)
    sigma, t0 = 1e-2, 7.0
    state = PGSState(
        data,
        np.where(y == 1, 1.0, -1.0),
        loss=LOSSES["logistic"],
        p=p,
        sigma=sigma,
        radius=np.inf,
        fit_intercept=True,
        batch_size=1,
        t0=t0,
        epsilon=1.0,
        average=False,
    )
    state.start_from(w)
    lam = state.dual()
    theta = lam / (t0 * sigma)
    q = conjugate_exponent(p)
    # grad r*(theta) of r*(theta) = (q - 1)... written out independently of the kernel:
    # w_j = ||theta||_q^(2-q) sgn(theta_j) |theta_j|^(q-1) / (q - 1).
    back = np.linalg.norm(theta, ord=q) ** (2 - q) * np.sign(theta) * np.abs(theta) ** (q - 1) / (q - 1)
    np.testing.assert_allclose(back, w, rtol=1e-10)
    if p == 2.0:
        np.testing.assert_allclose(lam, t0 * sigma * w, rtol=1e-12)


def test_smidas_inverse_link_gives_back_the_start():
    """MirrorEngine: theta = f(w) inverts eq. (12)'s w = f^-1(theta), so the engine's weights
    before any iteration are the start."""
    X, y = binary_problem(n=50)
    data, _ = prepare(X)
    w = np.random.default_rng(2).normal(size=(1, X.shape[1] + 1))
    w[0, 3] = 0.0  # a zero weight stays out of the active list
    engine = MirrorEngine(
        data,
        np.where(y == 1, 1.0, -1.0)[None, :],
        loss=LOSSES["logistic"],
        epsilon=1.0,
        sigma=1e-3,
        eta=0.1,
        p=7,
        batch_size=1,
        fit_intercept=True,
        rng=np.random.default_rng(0),
        initial=w,
    )
    np.testing.assert_allclose(engine.output_weights(), w, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("name", ["scd", "gcd", "sgd", "smidas"])
def test_a_start_at_the_optimum_stays_there(name):
    """From a long cold fit's model, a short warm fit ends near it, nearer than a short cold fit."""
    X, y = binary_problem(n=1000)
    cls = SOLVERS[name].classifier
    reference = cls(sigma=1e-3, random_state=0, n_iter=50_000).fit(X, y)
    short = {"sigma": 1e-3, "random_state": 1, "n_iter": 200}
    warm = cls(**short).fit(X, y, coef_init=reference.coef_, intercept_init=reference.intercept_)
    cold = cls(**short).fit(X, y)
    ref = np.append(reference.coef_, reference.intercept_)
    distance = [np.linalg.norm(np.append(e.coef_, e.intercept_) - ref) for e in (warm, cold)]
    assert distance[0] < 0.5 * distance[1]


def test_a_regressor_takes_flat_coefficients_and_a_number():
    rng = np.random.default_rng(0)
    X = sp.csr_matrix(rng.normal(size=(300, 5)))
    y = X @ np.arange(1.0, 6.0) + 2.0
    ref = SOLVERS["lbfgs"].regressor(sigma=1e-6).fit(X, y)
    warm = (
        SOLVERS["lbfgs"].regressor(sigma=1e-6).fit(X, y, coef_init=ref.coef_, intercept_init=ref.intercept_)
    )
    assert warm.n_iter_ <= 2
    np.testing.assert_allclose(warm.coef_, ref.coef_, atol=1e-4)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"coef_init": np.zeros((1, 3))}, r"'coef_init' argument .* must have shape \(1, 8\)"),
        ({"coef_init": np.zeros((2, 8))}, r"'coef_init' argument .* must have shape \(1, 8\)"),
        ({"intercept_init": [0.0, 1.0]}, r"'intercept_init' argument .* must have shape \(1,\)"),
        ({"coef_init": np.full((1, 8), np.nan)}, "'coef_init' argument .* must be finite"),
    ],
)
def test_a_start_that_does_not_fit_the_model_is_refused_by_name(kwargs, message):
    X, y = binary_problem(n=100)
    with pytest.raises(ValueError, match=message):
        SOLVERS["pgs"].classifier(sigma=1e-3).fit(X, y, **kwargs)


def test_an_intercept_without_fit_intercept_is_refused():
    X, y = binary_problem(n=100)
    est = SOLVERS["sgd"].classifier(sigma=1e-3, fit_intercept=False)
    with pytest.raises(ValueError, match="fit_intercept=False: intercept_init must be None or 0"):
        est.fit(X, y, intercept_init=[1.0])


def test_the_start_is_for_one_fit_only():
    X, y = binary_problem(n=200)
    coef, intercept = _start(X.shape[1])
    est = SOLVERS["pgs"].classifier(sigma=1e-3, random_state=0)
    est.fit(X, y, coef_init=coef, intercept_init=intercept)
    assert est.n_iter_ == 200  # one epoch when warm-started
    assert est.fit(X, y).n_iter_ == 1000  # five epochs: the next fit starts cold


@pytest.mark.parametrize("name", ["pgs", "sgd", "smidas"])
def test_a_fit_from_shards_starts_from_the_weights_too(name):
    """Streaming fits (solver.ShardedMatrix) build their engine by another path: it starts there too."""
    X, y = binary_problem(n=200)
    coef, intercept = _start(X.shape[1])
    shards = ShardedMatrix.from_arrays(X, y, [100, 100])
    params = {"sigma": 1e-3, "n_iter": 1, "random_state": 0}
    if name != "smidas":
        params["output"] = "last"
    est = SOLVERS[name].classifier(**params).fit(shards, None, coef_init=coef, intercept_init=intercept)
    start = np.append(coef, intercept)
    assert np.linalg.norm(np.append(est.coef_, est.intercept_) - start) < 0.25 * np.linalg.norm(start)


def test_sigma_auto_refits_from_the_given_weights():
    """The path's fits warm-start from each other; the refit at the chosen sigma from the start."""
    X, y = binary_problem(n=300)
    reference = SOLVERS["lbfgs"].classifier(sigma=1e-2).fit(X, y)
    auto = SOLVERS["lbfgs"].classifier(sigma="auto", sigma_grid=[1e-2], folds=3)
    auto.fit(X, y, coef_init=reference.coef_, intercept_init=reference.intercept_)
    assert auto.sigma_ == 1e-2 and auto.n_iter_ <= 2
    np.testing.assert_allclose(auto.coef_, reference.coef_, atol=1e-4)
