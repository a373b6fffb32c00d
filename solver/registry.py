"""The solvers a training job can name: one entry per solver, nothing else to change elsewhere.

The service validates a job's ``solver`` and ``params`` against this table and trains with the
estimator class it gives for the data set's task. ``SolverSpec.describe`` publishes the same
declarations (tasks, losses, every parameter's type, default, allowed values and description).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .estimators import (
    GCDClassifier,
    GCDRegressor,
    GDClassifier,
    GDRegressor,
    KernelPGSClassifier,
    KernelPGSRegressor,
    LBFGSClassifier,
    LBFGSRegressor,
    LinearModelBase,
    OGDClassifier,
    OGDRegressor,
    PGSClassifier,
    PGSRegressor,
    SCDClassifier,
    SCDRegressor,
    SGDClassifier,
    SGDRegressor,
    SMIDASClassifier,
    SMIDASRegressor,
    TruncGradClassifier,
    TruncGradRegressor,
)
from .parameters import declared, describe_parameters

# The tasks of a data set, and which of a solver's estimators trains each.
CLASSIFICATION_TASKS = ("binary", "multiclass")
REGRESSION_TASKS = ("regression",)


@dataclass(frozen=True)
class SolverSpec:
    name: str
    classifier: type[LinearModelBase] | None
    regressor: type[LinearModelBase] | None
    title: str
    paper: str  # the paper it implements...
    algorithm: str  # ...and where in it
    # Whether its estimators train from a ``solver.ShardedMatrix``, shard by shard: true for the
    # stochastic solvers whose step reads one sample or minibatch at a time; the others (full
    # gradients, coordinate descent, kernel expansions) need every row at once.
    streams: bool

    def estimator_class(self, task: str) -> type[LinearModelBase] | None:
        """The estimator that trains ``task`` ("binary", "multiclass" or "regression"), if any."""
        return self.regressor if task in REGRESSION_TASKS else self.classifier

    def describe(self) -> dict[str, Any]:
        """The solver as JSON: its title, paper and algorithm and, per task it accepts, the
        estimator, the losses it accepts and every parameter
        (``solver.parameters.describe_parameters``)."""
        tasks = {}
        for task in CLASSIFICATION_TASKS + REGRESSION_TASKS:
            cls = self.estimator_class(task)
            if cls is not None:
                tasks[task] = {
                    "estimator": cls.__name__,
                    "losses": sorted(declared(cls)["loss"].allowed[0].options),
                    "parameters": describe_parameters(cls),
                }
        return {
            "name": self.name,
            "title": self.title,
            "paper": self.paper,
            "algorithm": self.algorithm,
            "streams": self.streams,
            "tasks": tasks,
        }


# The papers the solvers implement, as a caller would cite them.
PGS_PAPER = (
    "Zhu, Chen, Zhu, Wang, Wang, Chen: Inverse Time Dependency in Convex Regularized Learning (ICDM 2009)"
)
L1_PAPER = "Shalev-Shwartz, Tewari: Stochastic Methods for l1-regularized Loss Minimization (JMLR 2011)"
LECTURE = "Zhang: Lecture 22, OGD for Strongly Convex Functions and Kernel Methods"

SOLVERS: dict[str, SolverSpec] = {
    spec.name: spec
    for spec in (
        SolverSpec(
            "pgs",
            PGSClassifier,
            PGSRegressor,
            "Primal Gradient Solver, p-norm regularised",
            PGS_PAPER,
            "Figures 1-2",
            streams=True,
        ),
        SolverSpec(
            "scd",
            SCDClassifier,
            SCDRegressor,
            "Stochastic coordinate descent, L1-regularised",
            L1_PAPER,
            "Algorithm 2",
            streams=False,
        ),
        SolverSpec(
            "gcd",
            GCDClassifier,
            GCDRegressor,
            "Greedy coordinate descent, L1-regularised",
            L1_PAPER,
            "Section 4.2 (baseline)",
            streams=False,
        ),
        SolverSpec(
            "smidas",
            SMIDASClassifier,
            SMIDASRegressor,
            "Stochastic mirror descent made sparse, L1-regularised",
            L1_PAPER,
            "Algorithm 3",
            streams=True,
        ),
        SolverSpec(
            "truncgrad",
            TruncGradClassifier,
            TruncGradRegressor,
            "Truncated gradient, L1-regularised",
            L1_PAPER,
            "Section 4.2 (baseline of Langford, Li and Zhang)",
            streams=True,
        ),
        SolverSpec(
            "lbfgs",
            LBFGSClassifier,
            LBFGSRegressor,
            "L-BFGS (scipy) on PGS's p-norm objective",
            PGS_PAPER,
            "Section V, Figure 5 (baseline)",
            streams=False,
        ),
        SolverSpec(
            "gd",
            GDClassifier,
            GDRegressor,
            "Gradient descent, full gradient, L2-regularised",
            LECTURE,
            "Algorithm 1",
            streams=False,
        ),
        SolverSpec(
            "sgd",
            SGDClassifier,
            SGDRegressor,
            "Stochastic gradient descent, constant step, L2-regularised",
            LECTURE,
            "Algorithm 2",
            streams=True,
        ),
        SolverSpec(
            "ogd",
            OGDClassifier,
            OGDRegressor,
            "Online gradient descent, step 1/(sigma t), averaged",
            LECTURE,
            "Algorithm 3",
            streams=True,
        ),
        SolverSpec(
            "kernel_pgs",
            KernelPGSClassifier,
            KernelPGSRegressor,
            "Kernel PGS, p = 2: linear, RBF or polynomial kernel",
            PGS_PAPER,
            "Section VII",
            streams=False,
        ),
    )
}


def estimator_for(solver: str, task: str, params: dict) -> LinearModelBase:
    """A validated, unfitted estimator for ``task`` ("binary", "multiclass" or "regression").

    Raises ``KeyError`` for an unknown solver, ``ValueError``/``TypeError`` for bad parameters.
    """
    cls = SOLVERS[solver].estimator_class(task)
    if cls is None:
        raise ValueError(f"solver {solver!r} does not support {task} tasks")
    estimator = cls(**params)
    estimator.validate_params()
    return estimator
