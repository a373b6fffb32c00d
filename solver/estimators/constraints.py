"""The constraints of parameter values and the ``loss`` declarations the estimator families share
(see ``solver.parameters``)."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

from sklearn.utils._param_validation import Interval, StrOptions

from ..losses import CLASSIFICATION_LOSSES, REGRESSION_LOSSES
from ..parameters import param

POSITIVE = Interval(Real, 0.0, None, closed="neither")
AT_LEAST_ONE = Interval(Integral, 1, None, closed="left")
FINITE = Interval(Real, None, None, closed="neither")  # a number, not NaN or infinite


def choice(options) -> list:
    """The constraint of a parameter that takes one of ``options`` (strings)."""
    return [StrOptions(set(options))]


# Each classifier and regressor re-declares ``loss`` with the losses it accepts and its default, and
# has a docstring of its own: scikit-learn reads a signature and its docs per class, so these few
# lines per class are deliberate (the rest of a declaration lives once, in the family's base).
def classifier_loss(options=CLASSIFICATION_LOSSES, doc="The loss l(z; y), y in {-1, +1}.", details="") -> Any:
    """The ``loss`` of a classifier: one of ``options``, "logistic" by default."""
    return param(default="logistic", allowed=choice(options), kw_only=False, doc=doc, details=details)


def regressor_loss(options=REGRESSION_LOSSES, doc="The loss l(z; y): squared or huber.") -> Any:
    """The ``loss`` of a regressor: one of ``options``, "squared" by default."""
    return param(default="squared", allowed=choice(options), kw_only=False, doc=doc)
