"""Plain-NumPy references of the algorithms, written out from the papers: O(n) per iteration, no
tricks. They are the oracles the Numba solvers are checked against; they share no code with
``solver`` beyond the losses' curvature bounds, which set coordinate descent's steps."""

from __future__ import annotations

import numpy as np
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, rbf_kernel

from solver.losses import LOSSES

# d l(z; y) / dz, written independently of solver.losses.
DERIVATIVES = {
    "hinge": lambda z, y, eps: np.where(y * z < 1.0, -y, 0.0),
    "logistic": lambda z, y, eps: -y / (1.0 + np.exp(y * z)),
    "squared": lambda z, y, eps: 2.0 * (z - y),
    "squared_hinge": lambda z, y, eps: -2.0 * y * np.maximum(0.0, 1.0 - y * z),
    "smooth_hinge": lambda z, y, eps: np.where(
        y * z >= 1.0, 0.0, np.where(y * z <= 0.0, -y, -y * (1.0 - y * z))
    ),
    "huber": lambda z, y, eps: 2.0 * np.clip(z - y, -eps, eps),
}


def grad_r_star(theta: np.ndarray, p: float, radius: float | None) -> np.ndarray:
    """Figure 2: w = grad r*(theta) for r(w) = ||w||_p^2 / (2(p-1)), projected onto ||w||_p <= B."""
    q = p / (p - 1.0)
    norm_q_pow = np.sum(np.abs(theta) ** q)
    if norm_q_pow == 0.0:
        return np.zeros_like(theta)
    # Line 3.
    w = (1.0 / (q - 1.0)) * norm_q_pow ** (2.0 / q - 1.0) * np.abs(theta) ** (q - 1.0) * np.sign(theta)
    # Lines 5-6, scaled by B / ||w||_p (the figure prints ||w||_q; the ball is the p-norm's).
    if radius is not None:
        norm_p = np.sum(np.abs(w) ** p) ** (1.0 / p)
        if norm_p > radius:
            w = w * (radius / norm_p)
    return w


def reference_pgs(
    X,
    y,
    batches,
    *,
    loss,
    p,
    sigma,
    radius=None,
    fit_intercept=False,
    t0=1.0,
    epsilon=1.0,
    intercept_value=1.0,
):
    """Run Figure 1 on dense ``X`` with the minibatches ``batches`` (shape (T, k)).

    Returns the list of iterates w_1..w_T; with ``fit_intercept`` the last coordinate is the weight
    of a constant feature of value ``intercept_value``.
    """
    X = np.asarray(X, dtype=np.float64)
    if fit_intercept:
        X = np.hstack([X, np.full((X.shape[0], 1), intercept_value)])
    lam = np.zeros(X.shape[1])
    w = np.zeros(X.shape[1])
    iterates = []
    for t, batch in enumerate(batches, start=1):
        z = X[batch] @ w
        g = DERIVATIVES[loss](z, y[batch], epsilon)
        lam_t = (g[:, None] * X[batch]).mean(axis=0)  # Line 6.
        lam = lam - lam_t  # Line 7.
        w = grad_r_star(lam / ((t + t0) * sigma), p, radius)  # Line 8 (t0 = 1: the paper's t + 1).
        iterates.append(w)
    return iterates


# -- lecture 22, Algorithms 1-3


def reference_gradient_method(X, y, batches, steps, *, loss, sigma, fit_intercept=False):
    """Algorithms 1-3 on dense X, written out: w_{t+1} = w_t - eta_t (sigma w_t + mean l' x).

    ``batches`` has shape (T, k) (all of range(m) for gd); returns w_1 = 0, w_2, ..., w_{T+1}.
    """
    X = np.asarray(X, dtype=np.float64)
    if fit_intercept:
        X = np.hstack([X, np.ones((X.shape[0], 1))])
    w = np.zeros(X.shape[1])
    iterates = [w]
    for batch, step in zip(batches, steps, strict=True):
        v = (DERIVATIVES[loss](X[batch] @ w, y[batch], 1.0)[:, None] * X[batch]).mean(axis=0)
        w = w - step * (sigma * w + v)
        iterates.append(w)
    return iterates


def gram(X, kernel, *, gamma=0.5, degree=3, coef0=1.0, fit_intercept=True):
    """K(X, X) (+ 1 for the intercept), from scikit-learn's pairwise kernels."""
    if kernel == "linear":
        K = linear_kernel(X)
    elif kernel == "rbf":
        K = rbf_kernel(X, gamma=gamma)
    else:
        K = polynomial_kernel(X, degree=degree, gamma=gamma, coef0=coef0)
    return K + (1.0 if fit_intercept else 0.0)


def reference_kernel_pgs(K, y, batches, *, loss, sigma, t0):
    """Figure 1 with eq. (10) in the RKHS, written out on the Gram matrix: beta over the samples,
    w_t = sum_i beta_i phi(x_i) / ((t + t0) sigma). Returns alpha_1..alpha_T (w_t's coefficients)."""
    beta = np.zeros(len(y))
    alphas = []
    for t, batch in enumerate(batches, start=1):
        z = K[batch] @ beta / ((t - 1 + t0) * sigma)
        np.add.at(beta, batch, -DERIVATIVES[loss](z, y[batch], 1.0) / len(batch))
        alphas.append(beta / ((t + t0) * sigma))
    return alphas


# -- the L1 paper, Algorithms 1 and 3


def _augment(X, fit_intercept):
    X = np.asarray(X, dtype=np.float64)
    return np.hstack([X, np.ones((X.shape[0], 1))]) if fit_intercept else X


def _soft(x, tau):
    return np.sign(x) * np.maximum(np.abs(x) - tau, 0.0)


def _l1_weights(n_weights, sigma, fit_intercept):
    lam = np.full(n_weights, sigma)
    if fit_intercept:
        lam[-1] = 0.0
    return lam


def reference_coordinate_descent(X, y, n_steps, *, loss, sigma, fit_intercept, coords=None, beta="column"):
    """Algorithm 1 (coords given) or its greedy version (coords None): g from scratch each step.

    beta: "column", sup l'' mean_i x_ij^2 per coordinate, or "uniform", the paper's single
    sup l'' (eq. (7)) scaled by max x_ij^2."""
    Xa = _augment(X, fit_intercept)
    m = Xa.shape[0]
    column_sq = (Xa**2).mean(axis=0)
    if beta == "uniform":
        column_sq = np.where(column_sq > 0.0, np.max(Xa**2), 0.0)
    beta = LOSSES[loss].curvature * column_sq
    lam = _l1_weights(Xa.shape[1], sigma, fit_intercept)
    empty = beta == 0.0  # an all-zero column: its weight stays 0
    beta[empty] = 1.0
    w = np.zeros(Xa.shape[1])
    for step in range(n_steps):
        g = Xa.T @ DERIVATIVES[loss](Xa @ w, y, 1.0) / m
        new = np.where(empty, 0.0, _soft(w - g / beta, lam / beta))
        if coords is not None:
            j = coords[step]
        else:
            eta = new - w
            gain = lam * np.abs(w) - (eta * g + 0.5 * beta * eta**2 + lam * np.abs(new))
            j = int(np.argmax(gain))
            if gain[j] <= 0.0:
                break
        w[j] = new[j]
    return w


def reference_smidas_steps(X, y, batches, *, loss, sigma, eta, p, fit_intercept):
    """Algorithm 3 as printed (minibatch gradients averaged), dense truncation of every theta_j.

    Yields (theta~, theta, w) after every iteration: the dual vector after the mirror step, after
    the truncation, and the weights f^-1(theta) of eq. (12).
    """
    Xa = _augment(X, fit_intercept)
    n = Xa.shape[1] - int(fit_intercept)
    theta = np.zeros(Xa.shape[1])
    w = np.zeros(Xa.shape[1])
    for batch in batches:
        v = (DERIVATIVES[loss](Xa[batch] @ w, y[batch], 1.0)[:, None] * Xa[batch]).mean(axis=0)
        stepped = theta - eta * v
        theta = stepped.copy()
        theta[:n] = _soft(stepped[:n], eta * sigma)
        norm = np.sum(np.abs(theta) ** p) ** (1.0 / p)
        w = (
            np.zeros_like(theta)
            if norm == 0
            else (np.sign(theta) * np.abs(theta) ** (p - 1) / norm ** (p - 2))
        )
        yield stepped, theta, w


def reference_smidas(X, y, batches, **params):
    """The last iterate w of ``reference_smidas_steps``."""
    steps = list(reference_smidas_steps(X, y, batches, **params))
    return steps[-1][2]


def _sdca_coordinate(loss, alpha, z, y, c, q):
    """argmax over a of -phi*(-a) - (a - alpha) z - (q/2) (a - alpha)^2 for phi = c l(.; y), by
    scipy's bounded scalar minimiser on the dual's own formula (no closed form is reused)."""
    from scipy.optimize import minimize_scalar

    def neg_dual(a):
        b = a * y
        if loss == "squared":
            conj = a * y - a * a / (4.0 * c)
        elif loss == "hinge":
            conj = b
        elif loss == "squared_hinge":
            conj = b - b * b / (4.0 * c)
        else:  # logistic: the entropy of b / c, times c
            u = np.clip(b / c, 1e-300, 1.0 - 1e-16)
            conj = -c * (u * np.log(u) + (1.0 - u) * np.log1p(-u))
        return -(conj - (a - alpha) * z - 0.5 * q * (a - alpha) ** 2)

    if loss == "squared":
        span = abs(alpha) + abs(y) * 4.0 * c + 4.0 * c * abs(z) + 10.0
        bounds = (alpha - span, alpha + span)
    else:
        # The squared hinge's maximiser is at most 2c (|1 - yz| + |alpha| q) + |alpha|.
        upper = (
            c
            if loss in ("hinge", "logistic")
            else 2.0 * c * (1.0 + abs(z) + abs(alpha) * q) + abs(alpha) + 1.0
        )
        bounds = (0.0, upper) if y > 0 else (-upper, 0.0)
    result = minimize_scalar(neg_dual, bounds=bounds, method="bounded", options={"xatol": 1e-13})
    best = result.x
    for end in bounds:  # the box's ends, where the hinge's maximiser often sits
        if neg_dual(end) < neg_dual(best):
            best = end
    return best


def reference_sdca(X, y, orders, *, loss, sigma, fit_intercept, sample_weight=None, intercept_scaling=1.0):
    """SDCA (Shalev-Shwartz & Zhang 2013) as the paper states it: for each row of each epoch's
    order, alpha_i maximises D along its coordinate, then w = (1 / (sigma m)) sum alpha_i x_i is
    recomputed from scratch (eq. (3)). With an intercept, x_i ends with the constant feature
    ``intercept_scaling``. Returns (alpha, w) after the last epoch, w's last entry the
    constant feature's weight."""
    Xa = _augment(X, fit_intercept)
    if fit_intercept:
        Xa[:, -1] = intercept_scaling
    m = Xa.shape[0]
    c = np.ones(m) if sample_weight is None else sample_weight
    alpha = np.zeros(m)
    w = np.zeros(Xa.shape[1])
    for order in orders:
        for i in order:
            q = Xa[i] @ Xa[i] / (sigma * m)
            alpha[i] = _sdca_coordinate(loss, alpha[i], Xa[i] @ w, y[i], c[i], q)
            w = Xa.T @ alpha / (sigma * m)
    return alpha, w
