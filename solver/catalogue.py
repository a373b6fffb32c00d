"""The catalogue of solvers: every solver a training job can name, one entry each with its
classifier and regressor. A solver's name and whether it streams are its estimators' class
attributes (``solver_name``, ``streams``); its entry here adds where it comes from.

The service validates a job's ``solver`` and ``params`` against this catalogue and trains with the
estimator class it gives for the data set's task. ``SolverSpec.describe`` publishes the same
declarations (tasks, losses, every parameter's type, default, allowed values and description), and
``load_model`` finds the class of an exported model among the catalogued estimators.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

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
    SDCAClassifier,
    SDCARegressor,
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
    """A solver: its estimators (a classifier and a regressor) and where it comes from. Its name
    and whether it streams are its estimators' own (``solver_name``, ``streams``)."""

    classifier: type[LinearModelBase] | None
    regressor: type[LinearModelBase] | None
    title: str
    paper: str  # the paper it implements...
    algorithm: str  # ...and where in it

    def __post_init__(self) -> None:
        if not self.estimators:
            raise ValueError(f"solver {self.title!r} has no estimator")
        for attribute in ("solver_name", "streams", "warm_starts"):
            values = {getattr(cls, attribute) for cls in self.estimators}
            if len(values) > 1:
                raise ValueError(f"the estimators of solver {self.title!r} disagree on {attribute}: {values}")

    @property
    def estimators(self) -> tuple[type[LinearModelBase], ...]:
        return tuple(cls for cls in (self.classifier, self.regressor) if cls is not None)

    @property
    def name(self) -> str:
        """What a training job names it by."""
        return self.estimators[0].solver_name

    @property
    def streams(self) -> bool:
        """Whether its estimators train from a ``solver.ShardedMatrix``, shard by shard."""
        return self.estimators[0].streams

    @property
    def warm_starts(self) -> bool:
        """Whether its estimators' fit starts from given weights (coef_init, a job's init_model)."""
        return self.estimators[0].warm_starts

    @property
    def cold_only_reason(self) -> str:
        """Why it cannot start from given weights ("" when it can)."""
        return self.estimators[0].cold_only_reason

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
            "warm_starts": self.warm_starts,
            "tasks": tasks,
        }


# The papers the solvers implement, as a caller would cite them.
PGS_PAPER = (
    "Zhu, Chen, Zhu, Wang, Wang, Chen: Inverse Time Dependency in Convex Regularized Learning (ICDM 2009)"
)
L1_PAPER = "Shalev-Shwartz, Tewari: Stochastic Methods for l1-regularized Loss Minimization (JMLR 2011)"
SDCA_PAPER = (
    "Shalev-Shwartz, Zhang: Stochastic Dual Coordinate Ascent Methods for Regularized Loss "
    "Minimization (JMLR 2013)"
)
LECTURE = "Zhang: Lecture 22, OGD for Strongly Convex Functions and Kernel Methods"

SOLVERS: dict[str, SolverSpec] = {
    spec.name: spec
    for spec in (
        SolverSpec(
            PGSClassifier,
            PGSRegressor,
            "Primal Gradient Solver, p-norm regularised",
            PGS_PAPER,
            "Figures 1-2",
        ),
        SolverSpec(
            SCDClassifier,
            SCDRegressor,
            "Stochastic coordinate descent, L1-regularised",
            L1_PAPER,
            "Algorithm 2",
        ),
        SolverSpec(
            GCDClassifier,
            GCDRegressor,
            "Greedy coordinate descent, L1-regularised",
            L1_PAPER,
            "Section 4.2 (baseline)",
        ),
        SolverSpec(
            SMIDASClassifier,
            SMIDASRegressor,
            "Stochastic mirror descent made sparse, L1-regularised",
            L1_PAPER,
            "Algorithm 3",
        ),
        SolverSpec(
            TruncGradClassifier,
            TruncGradRegressor,
            "Truncated gradient, L1-regularised",
            L1_PAPER,
            "Section 4.2 (baseline of Langford, Li and Zhang)",
        ),
        SolverSpec(
            LBFGSClassifier,
            LBFGSRegressor,
            "L-BFGS (scipy) on PGS's p-norm objective",
            PGS_PAPER,
            "Section V, Figure 5 (baseline)",
        ),
        SolverSpec(
            SDCAClassifier,
            SDCARegressor,
            "Stochastic dual coordinate ascent, L2-regularised",
            SDCA_PAPER,
            "Procedure SDCA, eqs. (1)-(3), exact steps, a random permutation per epoch (SDCA-Perm)",
        ),
        SolverSpec(
            GDClassifier,
            GDRegressor,
            "Gradient descent, full gradient, L2-regularised",
            LECTURE,
            "Algorithm 1",
        ),
        SolverSpec(
            SGDClassifier,
            SGDRegressor,
            "Stochastic gradient descent, constant step, L2-regularised",
            LECTURE,
            "Algorithm 2",
        ),
        SolverSpec(
            OGDClassifier,
            OGDRegressor,
            "Online gradient descent, step 1/(sigma t), averaged",
            LECTURE,
            "Algorithm 3",
        ),
        SolverSpec(
            KernelPGSClassifier,
            KernelPGSRegressor,
            "Kernel PGS, p = 2: linear, RBF or polynomial kernel",
            PGS_PAPER,
            "Section VII",
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


def load_model(meta: dict, arrays: dict[str, np.ndarray]) -> LinearModelBase:
    """Rebuild a fitted estimator from ``export_model()`` output; runs no code from the data."""
    classes = {cls.__name__: cls for spec in SOLVERS.values() for cls in spec.estimators}
    if meta.get("format") != 1 or meta.get("estimator") not in classes:
        raise ValueError(f"not a model this version can load: {meta.get('estimator')!r}")
    return classes[meta["estimator"]]._from_export(meta, arrays)
