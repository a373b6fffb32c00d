"""Exact optima the solvers are measured against: scipy's L-BFGS on the same smooth objectives.

They share no code with ``solver``.
"""

from __future__ import annotations

import numpy as np
import scipy.optimize
import scipy.sparse as sp
from threadpoolctl import threadpool_limits


def _loss_and_derivative(loss, z, y):
    if loss == "logistic":
        return np.logaddexp(0.0, -y * z).mean(), -y / (1.0 + np.exp(y * z))
    if loss == "squared":
        return np.mean((z - y) ** 2), 2.0 * (z - y)
    raise ValueError(f"no exact optimum for the non-smooth loss {loss!r}")


def _minimise(objective, dim):
    # One BLAS thread: thousands of small products, which a multi-threaded BLAS on a busy machine
    # made 60 times slower (8.4 s against 0.14 s for the 400 x 400 kernel problem).
    with threadpool_limits(limits=1, user_api="blas"):
        res = scipy.optimize.minimize(
            objective,
            np.zeros(dim),
            jac=True,
            method="L-BFGS-B",
            options={"maxiter": 10000, "gtol": 1e-12, "ftol": 1e-15},
        )
    return res.fun


def exact_optimum(X, y, *, loss, p, sigma):
    """min_w sigma/(2(p-1)) ||w||_p^2 + mean l(<w, x_i>; y_i), intercept as a constant feature.

    Returns (F*, objective) with ``objective(w) -> (value, gradient)``, w = (coef, intercept).
    """
    Xa = sp.hstack([X, np.ones((X.shape[0], 1))]).tocsr()
    m = Xa.shape[0]

    def objective(w):
        z = Xa @ w
        value, dz = _loss_and_derivative(loss, z, y)
        norm = np.sum(np.abs(w) ** p) ** (1.0 / p)
        reg = sigma / (2.0 * (p - 1.0)) * norm**2
        dreg = sigma / (p - 1.0) * norm ** (2.0 - p) * np.sign(w) * np.abs(w) ** (p - 1.0)
        return value + reg, Xa.T @ dz / m + dreg

    return _minimise(objective, Xa.shape[1]), objective


def kernel_optimum(K, y, *, loss, sigma):
    """min over w in the RKHS of sigma/2 ||w||^2 + mean l(<w, phi(x_i)>; y_i), for the Gram matrix K.

    By the representer theorem w = sum_i alpha_i phi(x_i); with K = V diag(s) V^T the feature map
    phi(x_i) -> row i of F = V diag(sqrt(s)) makes it a linear L2 problem in u = F^T alpha, which
    L-BFGS solves as well-conditioned as the linear ones. Returns (F*, objective(alpha) -> value).
    """
    with threadpool_limits(limits=1, user_api="blas"):
        s, V = np.linalg.eigh(K)
    F = V * np.sqrt(np.clip(s, 0.0, None))

    def primal(u):
        value, dz = _loss_and_derivative(loss, F @ u, y)
        return value + 0.5 * sigma * u @ u, F.T @ dz / len(y) + sigma * u

    def objective(alpha):
        z = K @ alpha
        return _loss_and_derivative(loss, z, y)[0] + 0.5 * sigma * alpha @ z

    return _minimise(primal, F.shape[1]), objective


def l1_optimum(X, y, *, loss, sigma):
    """min sigma ||w||_1 + mean l(Xw + b; y) by L-BFGS-B on the split w = u - v, u, v >= 0."""
    X = sp.csr_matrix(X)
    m, n = X.shape

    def objective(params):
        u, v, b = params[:n], params[n : 2 * n], params[-1]
        z = X @ (u - v) + b
        if loss == "logistic":
            value, dz = np.logaddexp(0.0, -y * z).mean(), -y * np.exp(-np.logaddexp(0.0, y * z))
        else:
            value, dz = np.mean((z - y) ** 2), 2.0 * (z - y)
        gw = X.T @ dz / m
        return value + sigma * params[:-1].sum(), np.r_[gw + sigma, sigma - gw, dz.mean()]

    res = scipy.optimize.minimize(
        objective,
        np.zeros(2 * n + 1),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0.0, None)] * (2 * n) + [(None, None)],
        options={"maxiter": 20000, "maxfun": 50000, "gtol": 1e-13, "ftol": 1e-15},
    )
    return res.fun, res.x[:n] - res.x[n : 2 * n]
