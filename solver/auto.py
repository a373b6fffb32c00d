"""``solver="auto"``: which of ``pgs``, ``sdca`` and ``lbfgs`` trains a problem fastest, from its
shape (rows m, features d, stored values nnz, dense or sparse), loss, p and its smallest sigma, by
a rule calibrated on the peers bench (``bench.auto_calibration``; the measurements are in
docs/explanation/solver-auto.md).

The measure is the peers bench's: the wall time of fit() to a model within half a point of the
optimum's test accuracy, compared as each candidate's epochs to it times its cost per epoch. Only solvers
that support the request are candidates: ``sdca`` needs p = 2 and one of its losses, ``lbfgs`` a
smooth loss; ``pgs`` supports every request either does.

**What the measurements say.** PGS p=2 reached the target first, or level, in every case
measured: against SDCA on the peers bench's 16 cases (logistic loss) and 12 hinge cases on its six
real sets (level, within 7%, in two: rt_polarity with the hinge loss), against L-BFGS on every
small set tried (100 to 49,990 rows, dense and sparse). So the rule chooses ``pgs`` for every
request, and its reason names the other candidates and the figures they lost by; the problem's
shape and sigma say whether the choice rests on measured ground or extrapolates beyond it. A shape
where another solver wins, once measured, becomes a branch here.

A library user gets the same choice as a training job with :func:`choose_solver_for` and then
``solver.estimator_for(choice.solver, task, params)``. There is no ``AutoClassifier``: the
parameters an estimator accepts (``get_params``, ``clone``, ``check_estimator``) are fixed by its
class, while those that apply here (``p``, ``batch_size``, ``t0`` for pgs and not for sdca) would
depend on a choice made from the data at fit; and an exported model names its concrete estimator.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from .catalogue import SOLVERS
from .estimators import PGSClassifier, PGSRegressor
from .parameters import declared, defaults
from .shards import ShardedMatrix

# Every estimator's sigma when a request gives none, and the default sigma "auto" grid's
# sigma_min / sigma_max (solver.selection.default_grid).
DEFAULT_SIGMA = defaults(PGSClassifier)["sigma"]
DEFAULT_GRID_SPAN = 1e-6

# -- the calibration (bench.auto_calibration, docs/explanation/solver-auto.md) -----------------

# Why each other candidate lost, in the measurements' own figures.
LOST_BY = {
    "sdca": "SDCA was slower in 26 of the 28 cases measured (16 logistic, 12 hinge) and level in two "
    "(rt_polarity with the hinge loss, 0.98x and 1.07x PGS's time as epochs times cost per epoch): "
    "PGS needed 0.03 to 2.7 epochs to the target, SDCA 1 to 15 or more than 30, at 0.97 to 2.3 "
    "times PGS's cost per epoch",
    "lbfgs": "L-BFGS was 1.07 to 13 times slower on every small set measured (100 to 49,990 rows, "
    "dense and sparse)",
}
# The ground the measurements cover: rows, and sigma * m (the regime of Theorem 1's bound).
MEASURED_ROWS = (100, 395_216)
MEASURED_SIGMA_M = (0.0065, 3.95)


@dataclass(frozen=True)
class SolverChoice:
    """The solver ``auto`` resolved to, and why, in one line a person can check."""

    solver: str
    reason: str

    def as_dict(self) -> dict[str, str]:
        """What a job records: ``{"requested": "auto", "chosen", "reason"}``."""
        return {"requested": "auto", "chosen": self.solver, "reason": self.reason}


def supports(solver: str, task: str, loss: str, p: float) -> bool:
    """Whether ``solver`` trains ``task`` with ``loss`` at ``p``, by its catalogue declarations."""
    cls = SOLVERS[solver].estimator_class(task)
    if cls is None:
        return False
    params = declared(cls)
    if loss not in params["loss"].allowed[0].options:
        return False
    return p == 2.0 or "p" in params


def choose_solver(
    *,
    task: str,
    loss: str | None,
    p: float | None,
    m: int,
    d: int,
    nnz: int,
    sigma: float | None,
    dense: bool,
) -> SolverChoice:
    """The solver for ``task`` ("binary", "multiclass" or "regression") with ``loss`` and ``p``
    (None: the estimators' defaults) on m rows of d features with nnz stored values, at
    ``sigma``: the smallest of a sigma "auto" path, whose fits warm-start from each other on one
    solver; None when that is known only at fit (the default grid's, sigma_max * 1e-6), which the
    reason then says. Raises ``ValueError`` for a shape no data has."""
    if m < 1 or d < 1 or nnz < 0:
        raise ValueError(
            f"a problem has m >= 1 rows, d >= 1 features and nnz >= 0 values; got {m}, {d}, {nnz}"
        )
    if loss is None:
        loss = defaults(PGSRegressor if task == "regression" else PGSClassifier)["loss"]
    p = 2.0 if p is None else float(p)
    values = m * d if dense else nnz
    shape = f"m={m:,}, d={d:,}, {values:,} {'dense' if dense else 'stored'} values"
    others = [solver for solver in LOST_BY if supports(solver, task, loss, p)]
    if others:
        evidence = "; ".join(LOST_BY[solver] for solver in others)
    else:
        evidence = f"neither sdca nor lbfgs supports loss {loss!r} at p={p:g}"
    return SolverChoice("pgs", f"{shape}, {_ground(m, sigma)}: {evidence}")


def _ground(m: int, sigma: float | None) -> str:
    """Whether (m, sigma m) lies within the measured ground, said with its figures."""
    if sigma is None:
        return "smallest sigma known only at fit"
    sigma_m = sigma * m
    inside = (
        MEASURED_ROWS[0] <= m <= MEASURED_ROWS[1] and MEASURED_SIGMA_M[0] <= sigma_m <= MEASURED_SIGMA_M[1]
    )
    where = "within" if inside else "outside"
    return (
        f"sigma*m={sigma_m:.3g} ({where} the measured {MEASURED_ROWS[0]:,}-{MEASURED_ROWS[1]:,} rows, "
        f"sigma*m {MEASURED_SIGMA_M[0]:g}-{MEASURED_SIGMA_M[1]:g})"
    )


def smallest_sigma(params: Mapping[str, Any]) -> float | None:
    """The smallest sigma ``params`` train at: ``sigma`` (absent: the estimators' default), or
    for sigma "auto" the least of ``sigma_grid``, else ``sigma_min``, else ``sigma_max`` times the
    default grid's span; None when the default grid fixes it from the data at fit."""
    sigma = params.get("sigma", DEFAULT_SIGMA)
    if sigma != "auto":
        return float(sigma)
    if params.get("sigma_grid") is not None:
        return float(min(params["sigma_grid"]))
    if params.get("sigma_min") not in (None, "auto"):
        return float(params["sigma_min"])
    if params.get("sigma_max") not in (None, "auto"):
        return float(params["sigma_max"]) * DEFAULT_GRID_SPAN
    return None


def choose_solver_for(X: Any, task: str, params: Mapping[str, Any]) -> SolverChoice:
    """:func:`choose_solver` for the training matrix ``X`` (dense, scipy sparse or a
    ``ShardedMatrix``) and the estimator parameters ``params`` a fit would get (sigma, or sigma
    "auto" with its grid options; without a sigma, the estimators' default)."""
    if isinstance(X, ShardedMatrix):
        # sdca and lbfgs train in memory only (their catalogue entries do not stream).
        return SolverChoice("pgs", "data in shards: of the candidates only pgs streams")
    if sp.issparse(X):
        m, d = X.shape
        nnz, dense = int(X.nnz), False
    else:
        array = np.asarray(X)
        m, d = array.shape
        nnz, dense = int(np.count_nonzero(array)), True
    return choose_solver(
        task=task,
        loss=params.get("loss"),
        p=params.get("p"),
        m=m,
        d=d,
        nnz=nnz,
        sigma=smallest_sigma(params),
        dense=dense,
    )
