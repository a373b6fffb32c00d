"""The regularisers, each formula written once: the squared p-norm (PGS, L-BFGS), L2 (gd, sgd, ogd)
and L1 (SCD, GCD, SMIDAS, truncated gradient), with the maps their solvers step through.

p-norm, PGS paper eq. (3) and (7)::

    sigma r(w),   r(w) = ||w||_p^2 / (2 (p - 1)),   p in (1, 2]

Its conjugate r*(theta) = ||theta||_q^2 / (2 (q - 1)), q = p / (p - 1), has the gradient of Figure 2,
line 3, the link from a dual vector theta to the weights::

    grad r*(theta)_j = ||theta||_q^(2-q) sgn(theta_j) |theta_j|^(q-1) / (q - 1)

``link_power`` computes its per-coordinate power |theta_j|^(q-1). SMIDAS's link f^-1 (L1 paper,
eq. (12)) is the same map up to the factor 1 / (q - 1), with the L1 paper's integer p in the role of
q; ``integer_power`` serves it.

L2, lecture eq. (1): sigma/2 ||w||_2^2, the p-norm penalty at p = 2 (the link is the identity).

L1, L1 paper eq. (1): sigma ||w||_1, the intercept left out. Its proximal map, the step that keeps
w sparse, is the soft-thresholding s_tau(x) = sign(x) max(0, |x| - tau) (L1 paper, Section 2.1).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

# link_power's square-root path: q - 1 as a multiple of 1/4 up to this many quarters.
_MAX_QUARTERS = 40

# -- the squared p-norm ---------------------------------------------------------------------------


def conjugate_exponent(p: float) -> float:
    """q = p / (p - 1), the exponent of the dual norm (2 exactly for p = 2)."""
    return 2.0 if p == 2.0 else p / (p - 1.0)


def link_quarters(q: float) -> int:
    """4 (q - 1) when it is a whole number of at most 40, else 0: ``link_power``'s fast path.

    Then q - 1 is a multiple of 1/4 (p = 1.8: 5/4, p = 1.5: 2, p = 4/3: 3, p = 1.25: 4, ...).
    p = 2 takes no power at all, hence 0 there too.
    """
    quarters = round(4.0 * (q - 1.0))
    if q == 2.0 or quarters > _MAX_QUARTERS or abs(4.0 * (q - 1.0) - quarters) > 1e-9:
        return 0
    return quarters


@njit(cache=True, inline="always")
def link_power(a, q, quarters):
    """a^(q-1) for a >= 0, the magnitude of the link grad r* (Figure 2, line 3).

    For p < 2 this is the one transcendental per touched coordinate and dominates PGS's update.
    With ``quarters = link_quarters(q)`` > 0 it is a product of a, sqrt(a) and sqrt(sqrt(a)), which
    is exact to a few ulp and about twice as fast as pow().
    """
    if quarters == 0:
        return a ** (q - 1.0)
    result = 1.0
    for _ in range(quarters // 4):
        result *= a
    frac = quarters % 4
    if frac == 0:
        return result
    root = math.sqrt(a)
    if frac == 2:
        return result * root
    fourth = math.sqrt(root)
    return result * fourth if frac == 1 else result * root * fourth


@njit(cache=True)
def integer_power(a, n):
    """a^n for an integer n >= 0, by squaring (SMIDAS's exponents are integers, and pow() would
    dominate its update)."""
    result = 1.0
    while n > 0:
        if n & 1:
            result *= a
        a *= a
        n >>= 1
    return result


def pnorm_penalty(w: np.ndarray, p: float, sigma: float) -> tuple[float, np.ndarray]:
    """sigma r(w) = sigma / (2 (p - 1)) ||w||_p^2 (eq. (7)) and its gradient
    sigma / (p - 1) ||w||_p^(2-p) sgn(w) |w|^(p-1)."""
    if p == 2.0:
        return l2_penalty(w, sigma), sigma * w
    a = np.abs(w)
    amax = float(a.max(initial=0.0))
    if amax == 0.0:
        return 0.0, np.zeros_like(w)
    r = a / amax  # relative to the largest weight, so |w|^p cannot overflow
    norm = amax * float(np.sum(r**p)) ** (1.0 / p)
    value = sigma / (2.0 * (p - 1.0)) * norm**2
    grad = sigma / (p - 1.0) * norm * np.sign(w) * (a / norm) ** (p - 1.0)
    return value, grad


# -- L2 -------------------------------------------------------------------------------------------


def l2_penalty(w: np.ndarray, sigma: float) -> float:
    """sigma/2 ||w||_2^2 (lecture eq. (1)); the intercept, when fitted, is one of the weights."""
    # einsum, not w @ w or np.vdot: those call OpenBLAS's threaded dot, which took 6-11 ms for 47k
    # weights on a busy 2-core machine (einsum: 0.03 ms), more than a trace checkpoint's scores.
    return 0.5 * sigma * float(np.einsum("i,i->", w, w))


# -- L1 -------------------------------------------------------------------------------------------


def l1_penalty(w: np.ndarray, sigma: float, fit_intercept: bool) -> float:
    """sigma ||coef||_1 (L1 paper eq. (1)); ``w`` ends with the intercept when ``fit_intercept``,
    which is not penalised (an L1 penalty on it would shrink predictions towards 0 for no reason)."""
    coef = w[:-1] if fit_intercept else w
    return float(sigma * np.abs(coef).sum())


@njit(cache=True, inline="always")
def soft_threshold(x, tau):
    """s_tau(x) = sign(x) max(0, |x| - tau) (L1 paper, Section 2.1): the proximal map of tau |x|."""
    if x > tau:
        return x - tau
    if x < -tau:
        return x + tau
    return 0.0
