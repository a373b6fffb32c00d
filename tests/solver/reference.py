"""Plain-NumPy reference of the PGS paper's Figures 1 and 2: O(n) per iteration, no tricks.

It is the oracle the Numba solver is checked against; it shares no code with ``solver``.
"""

from __future__ import annotations

import numpy as np

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
    # Lines 5-6, with erratum 1: scale by B / ||w||_p.
    if radius is not None:
        norm_p = np.sum(np.abs(w) ** p) ** (1.0 / p)
        if norm_p > radius:
            w = w * (radius / norm_p)
    return w


def reference_pgs(X, y, batches, *, loss, p, sigma, radius=None, fit_intercept=False, t0=1.0,
                  epsilon=1.0, intercept_value=1.0):
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
