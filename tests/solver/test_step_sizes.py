"""The step rules (solver.step_sizes): PGS's t0="auto" against the margin move computed by NumPy,
gd's 1 / L, and SMIDAS's Proposition 4."""

from __future__ import annotations

import numpy as np
import pytest

from solver import (
    PGSClassifier,
    SMIDASClassifier,
    TruncGradClassifier,
)
from solver._sparse import as_kernel_data, prepare
from solver.losses import LOSSES
from solver.mirror_descent import dual_exponent
from solver.step_sizes import largest_curvature, mean_dual_curvature, mean_sq_dual_norm

from .problems import binary_problem


@pytest.mark.parametrize("p", [2.0, 1.8, 1.5, 1.1])
@pytest.mark.parametrize("loss", ["logistic", "hinge", "squared"])
def test_auto_t0_sizes_the_first_step_by_the_move_of_a_margin(as_input, p, loss):
    """t0="auto": the first step 1 / ((1 + t0) sigma) times the mean move of a sample's own margin
    per unit of sub-gradient (step_sizes.pnorm_margin_gain) is 1 / curvature. The move, computed here by
    NumPy over every row: E||(x, s)||^2 for p = 2; for p < 2, E||(x, s)||_q^2 for the squared loss
    (the bound for every dual point) and, for Lipschitz losses, the curvature of r* at the dual
    point theta = sum_i l'(0; y_i) (x_i, s), E sum_j (|theta_j| / ||theta||_q)^(q-2) x_j^2."""
    X, y = binary_problem(n=300)
    X = X * (np.random.default_rng(1).random(X.shape) < 0.4)  # rows with different supports
    X[:, 0] = 0.0  # a feature theta does not touch: weight 0
    sigma = 1e-4
    clf = PGSClassifier(loss=loss, p=p, sigma=sigma, n_iter=1).fit(as_input(X), y)
    q = 2.0 if p == 2.0 else p / (p - 1.0)
    rows = np.c_[X, np.full(len(X), clf.intercept_scaling_)]
    if p < 2.0 and loss != "squared":
        # l'(0; y) is -y / 2 (logistic) or -y (hinge) with y in {-1, +1}: theta's scale cancels.
        theta = rows.T @ np.where(y == clf.classes_[1], -1.0, 1.0)
        weight = (np.abs(theta) / np.sum(np.abs(theta) ** q) ** (1.0 / q)) ** (q - 2.0)
        gain = np.mean(rows**2 @ weight)
    else:
        gain = np.mean(np.sum(np.abs(rows) ** q, axis=1) ** (2.0 / q))
    first_step = 1.0 / ((1.0 + clf.t0_) * sigma)
    assert first_step * gain == pytest.approx(1.0 / LOSSES[loss].curvature, rel=1e-10)


def test_sampled_curvature_estimates_are_close_to_the_means_over_every_row(a9a):
    """On more rows than the sample (a9a: 32,561 rows, 1,024 sampled), the sampled E||(x, s)||_q^2
    and dual-point curvature stay within 2% of the NumPy means over every row (measured: < 0.2%)."""
    X, y = a9a[0], a9a[1]
    data, _ = prepare(X)
    q, s = 1.8 / 0.8, 0.3
    rows = np.c_[X.toarray(), np.full(X.shape[0], s)]
    exact_sq = np.mean(np.sum(np.abs(rows) ** q, axis=1) ** (2.0 / q))
    assert mean_sq_dual_norm(data, q, s) == pytest.approx(exact_sq, rel=0.02)
    g0 = np.where(y == 1, -0.5, 0.5)
    theta = rows.T @ g0
    weight = (np.abs(theta) / np.sum(np.abs(theta) ** q) ** (1.0 / q)) ** (q - 2.0)
    assert mean_dual_curvature(data, g0, q, s) == pytest.approx(np.mean(rows**2 @ weight), rel=0.02)


def test_auto_t0_without_dual_mass_at_zero_falls_back_to_the_first_move():
    """Opposite labels on identical rows: sum_i l'(0; y_i) x_i = 0, so no curvature at that dual
    point; t0 then comes from the first move, (p - 1) E||x||_q^2 = (p - 1) for unit rows."""
    X = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    y = np.array([1, -1, 1, -1])
    clf = PGSClassifier(p=1.5, sigma=1e-3, n_iter=1, fit_intercept=False).fit(X, y)
    first_step = 1.0 / ((1.0 + clf.t0_) * 1e-3)
    assert first_step * 0.5 == pytest.approx(4.0, rel=1e-10)


def test_gd_step_auto_is_one_over_the_lipschitz_constant(heart):
    X, _ = heart
    for fit_intercept in (False, True):
        A = X.toarray()
        if fit_intercept:
            A = np.hstack([A, np.ones((A.shape[0], 1))])
        exact = np.linalg.eigvalsh(A.T @ A / A.shape[0])[-1]
        for data in (as_kernel_data(X), as_kernel_data(X.toarray())):
            estimate = largest_curvature(data, fit_intercept)
            assert exact * (1 - 1e-2) <= estimate <= exact * (1 + 1e-12)


def test_eta_auto_is_proposition_4_with_k_1():
    X, y = binary_problem()
    est = SMIDASClassifier(n_iter=10, fit_intercept=False).fit(X, y)
    p = dual_exponent(X.shape[1])
    assert est.dual_exponent_ == p == 5
    x_sq = np.max(np.sum(np.abs(X) ** p, axis=1) ** (2.0 / p))
    assert est.eta_ == pytest.approx(1.0 / (2 * (p - 1) * 0.25 * x_sq), rel=1e-12)
    tg = TruncGradClassifier(n_iter=10).fit(X, y)
    x_sq = np.max(np.sum(X**2, axis=1) + 1.0)
    assert tg.dual_exponent_ == 2 and tg.eta_ == pytest.approx(1.0 / (2 * 0.25 * x_sq))
