"""The solvers a training job can name: one entry per solver, nothing else to change elsewhere.

The service validates a job's ``solver`` and ``params`` against this table and trains with the
estimator class it gives for the data set's task.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._base import LinearModelBase
from .estimators import PGSClassifier, PGSRegressor
from .l1 import (
    GCDClassifier,
    GCDRegressor,
    SCDClassifier,
    SCDRegressor,
    SMIDASClassifier,
    SMIDASRegressor,
    TruncGradClassifier,
    TruncGradRegressor,
)
from .lbfgs import LBFGSClassifier, LBFGSRegressor
from .lecture_estimators import (
    GDClassifier,
    GDRegressor,
    KernelPGSClassifier,
    KernelPGSRegressor,
    OGDClassifier,
    OGDRegressor,
    SGDClassifier,
    SGDRegressor,
)


@dataclass(frozen=True)
class SolverSpec:
    name: str
    classifier: type[LinearModelBase] | None
    regressor: type[LinearModelBase] | None
    summary: str


SOLVERS: dict[str, SolverSpec] = {
    spec.name: spec
    for spec in (
        SolverSpec("pgs", PGSClassifier, PGSRegressor,
                   "Primal Gradient Solver, p-norm regularised (PGS paper, Figures 1-2)"),
        SolverSpec("scd", SCDClassifier, SCDRegressor,
                   "Stochastic coordinate descent, L1-regularised (L1 paper, Algorithm 2)"),
        SolverSpec("gcd", GCDClassifier, GCDRegressor,
                   "Greedy coordinate descent, L1-regularised (L1 paper, Section 4.2)"),
        SolverSpec("smidas", SMIDASClassifier, SMIDASRegressor,
                   "Stochastic mirror descent made sparse, L1-regularised (L1 paper, Algorithm 3)"),
        SolverSpec("truncgrad", TruncGradClassifier, TruncGradRegressor,
                   "Truncated gradient, L1-regularised (Langford et al.; L1 paper, Section 4.2)"),
        SolverSpec("lbfgs", LBFGSClassifier, LBFGSRegressor,
                   "L-BFGS (scipy) on PGS's p-norm objective: the PGS paper's baseline"),
        SolverSpec("gd", GDClassifier, GDRegressor,
                   "Gradient descent, full gradient, L2-regularised (lecture 22, Algorithm 1)"),
        SolverSpec("sgd", SGDClassifier, SGDRegressor,
                   "Stochastic gradient descent, constant step, L2-regularised (lecture 22, "
                   "Algorithm 2)"),
        SolverSpec("ogd", OGDClassifier, OGDRegressor,
                   "Online gradient descent, step 1/(sigma t), averaged (lecture 22, Algorithm 3)"),
        SolverSpec("kernel_pgs", KernelPGSClassifier, KernelPGSRegressor,
                   "Kernel PGS, p = 2: linear, RBF or polynomial kernel (PGS paper, Section VII)"),
    )
}


def estimator_for(solver: str, task: str, params: dict) -> LinearModelBase:
    """A validated, unfitted estimator for ``task`` ("binary", "multiclass" or "regression").

    Raises ``KeyError`` for an unknown solver, ``ValueError``/``TypeError`` for bad parameters.
    """
    spec = SOLVERS[solver]
    cls = spec.regressor if task == "regression" else spec.classifier
    if cls is None:
        raise ValueError(f"solver {solver!r} does not support {task} tasks")
    estimator = cls(**params)
    estimator.validate_params()
    return estimator
