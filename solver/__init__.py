"""p-norm, L2 and L1 regularised linear learning (the Primal Gradient Solver and its baselines),
compiled with Numba, as scikit-learn estimators.

Public API::

    from solver import PGSClassifier, SOLVERS, estimator_for, load_model, warm_up, TracePoint
    from solver import make_preprocessor   # scaling, imputation, one-hot: scikit-learn's own
    from solver import ShardedMatrix  # training data larger than memory, opened shard by shard
    from solver import choose_solver_for  # solver="auto": the solver a problem trains fastest with

``SOLVERS`` is the catalogue: every solver a training job can name, with its classifier and regressor.
"""

from typing import TYPE_CHECKING

from .auto import SolverChoice, choose_solver, choose_solver_for
from .catalogue import SOLVERS, SolverSpec, estimator_for, load_model
from .estimators import (
    GCDClassifier,
    GCDRegressor,
    GDClassifier,
    GDRegressor,
    KernelPGSClassifier,
    KernelPGSRegressor,
    LBFGSClassifier,
    LBFGSRegressor,
    OGDClassifier,
    OGDRegressor,
    PGSClassifier,
    PGSRegressor,
    SCDClassifier,
    SCDRegressor,
    SDCAClassifier,
    SDCARegressor,
    SGDClassifier,
    SGDRegressor,
    SMIDASClassifier,
    SMIDASRegressor,
    TruncGradClassifier,
    TruncGradRegressor,
)
from .preprocessing import export_preprocessor, load_preprocessor, make_preprocessor
from .shards import ShardedMatrix
from .tracing import TracePoint, time_to_target

__all__ = [
    "SOLVERS",
    "GCDClassifier",
    "GCDRegressor",
    "GDClassifier",
    "GDRegressor",
    "KernelPGSClassifier",
    "KernelPGSRegressor",
    "LBFGSClassifier",
    "LBFGSRegressor",
    "OGDClassifier",
    "OGDRegressor",
    "PGSClassifier",
    "PGSRegressor",
    "SCDClassifier",
    "SCDRegressor",
    "SDCAClassifier",
    "SDCARegressor",
    "SGDClassifier",
    "SGDRegressor",
    "SMIDASClassifier",
    "SMIDASRegressor",
    "ShardedMatrix",
    "SolverChoice",
    "SolverSpec",
    "TracePoint",
    "TruncGradClassifier",
    "TruncGradRegressor",
    "choose_solver",
    "choose_solver_for",
    "estimator_for",
    "export_preprocessor",
    "load_model",
    "load_preprocessor",
    "make_preprocessor",
    "time_to_target",
    "warm_up",
]


if TYPE_CHECKING:
    from .warmup import warm_up


def __getattr__(name: str):
    # warm_up is imported on first use, so that importing solver does not import solver.warmup and
    # `python -m solver.warmup` runs it once, without runpy's "found in sys.modules" warning.
    if name == "warm_up":
        from .warmup import warm_up

        return warm_up
    raise AttributeError(f"module 'solver' has no attribute {name!r}")
