"""The Primal Gradient Solver (PGS) for p-norm regularised linear learning, compiled with Numba.

Public API::

    from solver import PGSClassifier, PGSRegressor, load_model, warm_up, TracePoint
"""

from ._base import load_model
from .estimators import PGSClassifier, PGSRegressor
from .registry import SOLVERS, estimator_for
from .tracing import TracePoint, time_to_target
from .warmup import warm_up

__all__ = [
    "SOLVERS",
    "PGSClassifier",
    "PGSRegressor",
    "TracePoint",
    "estimator_for",
    "load_model",
    "time_to_target",
    "warm_up",
]
