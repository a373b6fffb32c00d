"""Table-driven checks of every loss: values, derivatives, and agreement of the two."""

from __future__ import annotations

import math

import numpy as np
import pytest

from solver.losses import LOSSES, loss_at_zero, loss_derivative, loss_value

# (loss, z, y, value, derivative), worked out by hand from the definitions.
CASES = [
    ("hinge", 0.0, 1.0, 1.0, -1.0),
    ("hinge", 2.0, 1.0, 0.0, 0.0),
    ("hinge", 0.5, -1.0, 1.5, 1.0),  # -y x where the margin fails (Section IV prints +y x)
    ("logistic", 0.0, 1.0, math.log(2.0), -0.5),
    ("logistic", 800.0, -1.0, 800.0, 1.0),  # no overflow far out
    ("logistic", 800.0, 1.0, 0.0, 0.0),
    ("squared", 3.0, 1.0, 4.0, 4.0),  # (z - y)^2 without 1/2, as in Section IV
    ("squared_hinge", 0.0, -1.0, 1.0, 2.0),
    ("squared_hinge", -3.0, -1.0, 0.0, 0.0),
    ("smooth_hinge", -1.0, 1.0, 1.5, -1.0),
    ("smooth_hinge", 0.5, 1.0, 0.125, -0.5),
    ("smooth_hinge", 1.5, 1.0, 0.0, 0.0),
    ("huber", 0.5, 0.0, 0.25, 1.0),
    ("huber", 3.0, 0.0, 5.0, 2.0),  # eps (2|r| - eps) beyond eps = 1
    ("huber", -3.0, 0.0, 5.0, -2.0),
]


@pytest.mark.parametrize(("loss", "z", "y", "value", "derivative"), CASES)
def test_table(loss, z, y, value, derivative):
    code = LOSSES[loss].code
    assert loss_value(code, z, y, 1.0) == pytest.approx(value, abs=1e-12)
    assert loss_derivative(code, z, y, 1.0) == pytest.approx(derivative, abs=1e-12)


@pytest.mark.parametrize("loss", sorted(LOSSES))
def test_derivative_is_the_slope(loss):
    code = LOSSES[loss].code
    rng = np.random.default_rng(0)
    h = 1e-6
    for _ in range(200):
        z, y = rng.normal() * 3, (rng.choice([-1.0, 1.0]) if loss != "huber" else rng.normal())
        # Skip the kinks, where only a sub-gradient exists.
        if loss in ("hinge", "smooth_hinge", "squared_hinge") and min(abs(y * z - 1), abs(y * z)) < 1e-3:
            continue
        if loss == "huber" and abs(abs(z - y) - 1.0) < 1e-3:
            continue
        slope = (loss_value(code, z + h, y, 1.0) - loss_value(code, z - h, y, 1.0)) / (2 * h)
        assert loss_derivative(code, z, y, 1.0) == pytest.approx(slope, abs=1e-5)


@pytest.mark.parametrize("loss", sorted(LOSSES))
def test_convex(loss):
    code = LOSSES[loss].code
    zs = np.linspace(-4, 4, 401)
    for y in (-1.0, 1.0, 0.3):
        d = [loss_derivative(code, z, y, 1.0) for z in zs]
        assert np.all(np.diff(d) >= -1e-12), "a convex loss has a non-decreasing derivative"


def test_loss_at_zero():
    y = np.array([1.0, -1.0, 2.0])
    assert loss_at_zero("logistic", y[:2]) == pytest.approx(math.log(2))
    assert loss_at_zero("squared", y) == pytest.approx((1 + 1 + 4) / 3)
    assert loss_at_zero("hinge", y[:2]) == pytest.approx(1.0)


def test_codes_are_the_table_and_no_other_code_falls_through_to_a_loss():
    """Each row's code is its own (the table cases above reach every pair of functions); a code
    outside the table gives NaN, which every kernel reports as divergence, not some loss's value."""
    assert sorted(loss.code for loss in LOSSES.values()) == list(range(len(LOSSES)))
    for code in (-1, len(LOSSES), 99):
        assert math.isnan(loss_value(code, 0.5, 1.0, 1.0))
        assert math.isnan(loss_derivative(code, 0.5, 1.0, 1.0))
