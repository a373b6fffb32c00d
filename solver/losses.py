"""Loss functions l(z; y) of a linear prediction z = <w, x>, shared by every solver.

Each loss is a pair of scalar ``@njit`` functions, value and derivative with respect to ``z``.
The kernels dispatch on an integer loss code (``loss_value`` / ``loss_derivative``), because an
integer keeps the compiled kernels cacheable on disk, which first-class function arguments do not.
A kernel gets its code only from a ``Loss`` of the table (the solvers' states take a ``Loss``, not an
integer); a code outside the table would make both dispatchers return NaN, which every kernel
reports as divergence, never the value of some other loss.

Adding a loss takes three steps: write its two functions, add one branch to each dispatcher, and add
one row to ``LOSSES`` (tests/solver/test_losses.py checks that every row dispatches to its own pair).

The squared loss is (z - y)^2 without a factor 1/2, as in Section IV of the PGS paper; its
derivative is therefore 2 (z - y).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

# ---------------------------------------------------------------------------------------------
# Classification losses: y in {-1, +1}.


@njit(cache=True)
def _hinge(z, y, eps):
    return max(0.0, 1.0 - y * z)


@njit(cache=True)
def _hinge_d(z, y, eps):
    # Sub-gradient -y where the margin is violated. (PGS paper, Section IV, prints +y x, which with
    # Figure 1's lambda <- lambda - lambda_t would ascend.)
    return -y if y * z < 1.0 else 0.0


@njit(cache=True)
def _logistic(z, y, eps):
    # log(1 + exp(-yz)) without overflow for large |yz|.
    yz = y * z
    if yz > 0.0:
        return math.log1p(math.exp(-yz))
    return -yz + math.log1p(math.exp(yz))


@njit(cache=True)
def _logistic_d(z, y, eps):
    # -y / (1 + exp(yz)), written so that exp never overflows.
    yz = y * z
    if yz > 0.0:
        e = math.exp(-yz)
        return -y * e / (1.0 + e)
    return -y / (1.0 + math.exp(yz))


@njit(cache=True)
def _squared_hinge(z, y, eps):
    v = max(0.0, 1.0 - y * z)
    return v * v


@njit(cache=True)
def _squared_hinge_d(z, y, eps):
    return -2.0 * y * max(0.0, 1.0 - y * z)


@njit(cache=True)
def _smooth_hinge(z, y, eps):
    # The hinge with its kink replaced by a parabola of width 1 (Shalev-Shwartz & Zhang, SDCA).
    yz = y * z
    if yz >= 1.0:
        return 0.0
    if yz <= 0.0:
        return 0.5 - yz
    return 0.5 * (1.0 - yz) ** 2


@njit(cache=True)
def _smooth_hinge_d(z, y, eps):
    yz = y * z
    if yz >= 1.0:
        return 0.0
    if yz <= 0.0:
        return -y
    return -y * (1.0 - yz)


# ---------------------------------------------------------------------------------------------
# Regression losses: y real. (The squared loss serves classification too, with y in {-1, +1}.)


@njit(cache=True)
def _squared(z, y, eps):
    r = z - y
    return r * r


@njit(cache=True)
def _squared_d(z, y, eps):
    return 2.0 * (z - y)


@njit(cache=True)
def _huber(z, y, eps):
    # Quadratic within eps of the target, linear outside; scaled like the squared loss above
    # (r^2 inside) so that the two agree for small residuals.
    r = abs(z - y)
    if r <= eps:
        return r * r
    return eps * (2.0 * r - eps)


@njit(cache=True)
def _huber_d(z, y, eps):
    r = z - y
    if r > eps:
        return 2.0 * eps
    if r < -eps:
        return -2.0 * eps
    return 2.0 * r


# ---------------------------------------------------------------------------------------------
# Dispatch. The codes are the ``code`` column of LOSSES.

HINGE, LOGISTIC, SQUARED, SQUARED_HINGE, SMOOTH_HINGE, HUBER = range(6)


@njit(cache=True)
def loss_value(code, z, y, eps):
    if code == LOGISTIC:
        return _logistic(z, y, eps)
    if code == HINGE:
        return _hinge(z, y, eps)
    if code == SQUARED:
        return _squared(z, y, eps)
    if code == SQUARED_HINGE:
        return _squared_hinge(z, y, eps)
    if code == SMOOTH_HINGE:
        return _smooth_hinge(z, y, eps)
    if code == HUBER:
        return _huber(z, y, eps)
    return math.nan  # not a code of LOSSES (see the module docstring)


@njit(cache=True)
def loss_derivative(code, z, y, eps):
    if code == LOGISTIC:
        return _logistic_d(z, y, eps)
    if code == HINGE:
        return _hinge_d(z, y, eps)
    if code == SQUARED:
        return _squared_d(z, y, eps)
    if code == SQUARED_HINGE:
        return _squared_hinge_d(z, y, eps)
    if code == SMOOTH_HINGE:
        return _smooth_hinge_d(z, y, eps)
    if code == HUBER:
        return _huber_d(z, y, eps)
    return math.nan  # not a code of LOSSES (see the module docstring)


# The sample weights of an unweighted fit: every kernel takes a weight array and reads it through
# ``row_weight``, whose test of the length is constant over a run (predicted, so no slower).
UNWEIGHTED = np.empty(0)


@njit(cache=True, inline="always")
def row_weight(sample_weight, i):
    """c_i, the weight of row i in the loss term (1/m) sum_i c_i l(z_i; y_i): 1 when
    ``sample_weight`` is empty (UNWEIGHTED)."""
    return sample_weight[i] if sample_weight.shape[0] else 1.0


def max_weight(sample_weight: np.ndarray) -> float:
    """The largest row weight (1 for an unweighted fit): a weight c scales its row's
    sub-gradient by c, so step-size bounds on |l'| x divide by it."""
    return float(np.max(sample_weight)) if sample_weight.shape[0] else 1.0


@njit(cache=True)
def derivatives_at_zero(code, y, eps):
    """l'(0; y_i) for every target: the sub-gradients of the first steps, taken at w = 0."""
    out = np.empty(y.shape[0])
    for i in range(y.shape[0]):
        out[i] = loss_derivative(code, 0.0, y[i], eps)
    return out


@njit(cache=True)
def mean_loss(code, z, y, eps, sample_weight):
    """Mean of c_i l(z_i; y_i) over arrays ``z`` and ``y`` (c_i = 1 for an empty
    ``sample_weight``, UNWEIGHTED). No default: Numba types an omitted array argument by the
    default object itself, a key the on-disk cache of another process never matches, so every
    worker would compile it again."""
    total = 0.0
    for i in range(z.shape[0]):
        total += row_weight(sample_weight, i) * loss_value(code, z[i], y[i], eps)
    return total / z.shape[0]


@dataclass(frozen=True)
class Loss:
    """A row of the loss table: its kernel code and what it can be used for."""

    name: str
    code: int
    classification: bool
    regression: bool
    smooth: bool  # differentiable everywhere (L-BFGS and the like need it)
    # Bound on d^2 l / dz^2 (1 for the hinge, as a scale): sets the first step of t0="auto".
    curvature: float
    # |dl/dz| bounded (the paper's Lipschitz losses): a step too long for the curvature then adds
    # noise but cannot make the iterates oscillate ever wider, as it can for the squared losses.
    lipschitz: bool


LOSSES: dict[str, Loss] = {
    loss.name: loss
    for loss in (
        Loss(
            "hinge", HINGE, classification=True, regression=False, smooth=False, curvature=1.0, lipschitz=True
        ),
        Loss(
            "logistic",
            LOGISTIC,
            classification=True,
            regression=False,
            smooth=True,
            curvature=0.25,
            lipschitz=True,
        ),
        Loss(
            "squared",
            SQUARED,
            classification=True,
            regression=True,
            smooth=True,
            curvature=2.0,
            lipschitz=False,
        ),
        Loss(
            "squared_hinge",
            SQUARED_HINGE,
            classification=True,
            regression=False,
            smooth=True,
            curvature=2.0,
            lipschitz=False,
        ),
        Loss(
            "smooth_hinge",
            SMOOTH_HINGE,
            classification=True,
            regression=False,
            smooth=True,
            curvature=1.0,
            lipschitz=True,
        ),
        Loss(
            "huber", HUBER, classification=False, regression=True, smooth=True, curvature=2.0, lipschitz=True
        ),
    )
}

CLASSIFICATION_LOSSES = tuple(name for name, loss in LOSSES.items() if loss.classification)
REGRESSION_LOSSES = tuple(name for name, loss in LOSSES.items() if loss.regression)
# What the solvers that need a derivative everywhere (coordinate descent, L-BFGS) accept.
SMOOTH_CLASSIFICATION_LOSSES = tuple(name for name in CLASSIFICATION_LOSSES if LOSSES[name].smooth)
SMOOTH_REGRESSION_LOSSES = tuple(name for name in REGRESSION_LOSSES if LOSSES[name].smooth)


def loss_at_zero(
    name: str, y: np.ndarray, epsilon: float = 1.0, sample_weight: np.ndarray = UNWEIGHTED
) -> float:
    """Mean (weighted) loss of the zero predictor, F(0) of eq. (7): the bound behind ``radius="auto"``."""
    y = np.ascontiguousarray(y, dtype=np.float64)
    code = LOSSES[name].code
    if sample_weight.shape[0]:
        return float(mean_loss(code, np.zeros_like(y), y, epsilon, sample_weight))
    positive = int(np.count_nonzero(y == 1.0))
    negative = int(np.count_nonzero(y == -1.0))
    if positive + negative == y.shape[0]:
        # Classification targets: l(0; y) takes two values, so two evaluations instead of m (the
        # logistic loss's exp and log cost 30 ms at m = 500k).
        at_one = mean_loss(code, np.zeros(1), np.ones(1), epsilon, UNWEIGHTED)
        at_minus_one = mean_loss(code, np.zeros(1), -np.ones(1), epsilon, UNWEIGHTED)
        return float((positive * at_one + negative * at_minus_one) / y.shape[0])
    return float(mean_loss(code, np.zeros_like(y), y, epsilon, UNWEIGHTED))
