"""Early stopping, with scikit-learn's names and SGDClassifier's rule: ``early_stopping=True`` sets
``validation_fraction`` of the training rows apart (the split ``sigma="auto"`` draws, seeded with
``random_state``: one seed, one split), trains on the rest, scores the model on the validation
rows at each checkpoint of the trace, and stops once ``n_iter_no_change`` checkpoints in a row
have not improved on the best score by more than ``tol`` (``solver.tracing.NoImprovement``;
``stop_reason_ == "no_improvement"``). The model returned is the last iterate, as
scikit-learn's SGDClassifier returns it (the averaged solvers' last output is already smooth).

The options are parameters of every estimator, declared here once. The stochastic families honour
them; a family whose iterations are not stochastic (full gradients, greedy coordinates, L-BFGS,
which stops at its own ``tol``) re-declares ``early_stopping`` as ``no_early_stopping(...)``, so
that asking for it is refused with the reason.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.base import is_classifier
from sklearn.utils._param_validation import Interval

from ..parameters import OnlyFalse, param
from ..selection import make_splits
from ..shards import ShardedMatrix

# Without n_iter, a run that stops early may go this many times the solver's default length: its
# stop is the validation score, the cap only bounds a run whose score keeps creeping up.
DEFAULT_LENGTH_FACTOR = 20

EARLY_STOPPING: Any = param(
    default=False,
    allowed=["boolean"],
    doc="Stop once the score on validation_fraction of the training rows stops improving.",
    details=f"""The stochastic solvers only. The validation rows are not trained on; they are
    scored at each checkpoint of the trace (off the solver clock). The fit stops after
    n_iter_no_change checkpoints in a row without a gain of more than tol on the best score
    (stop_reason_ "no_improvement") and returns the last iterate. Without n_iter the run may go
    {DEFAULT_LENGTH_FACTOR} times the solver's default length.""",
)
N_ITER_NO_CHANGE: Any = param(
    default=5,
    allowed=[Interval(Integral, 1, None, closed="left")],
    doc="early_stopping: the checkpoints in a row without improvement that stop the fit.",
)
TOL: Any = param(
    default=1e-3,
    allowed=[Interval(Real, 0.0, None, closed="left")],
    doc="early_stopping: the least gain of the validation score (accuracy, or RMSE) that counts "
    "as an improvement.",
)


def no_early_stopping(reason: str) -> Any:
    """``early_stopping`` for a family that cannot stop early: False only, refused with ``reason``."""
    return param(
        default=False,
        allowed=[OnlyFalse(reason)],
        doc=f"Always False: {reason}.",
    )


def validation_split(
    estimator: Any, X, y: np.ndarray, sample_weight: np.ndarray | None = None
) -> tuple[Any, np.ndarray, np.ndarray | None, tuple[Any, ...]]:
    """(X_fit, y_fit, sample_weight_fit, (X_validation, y_validation[, sample_weight_validation])):
    ``validation_fraction`` of the rows (and of their weights, when given) set apart
    (stratified for classifiers) by ``solver.selection.make_splits`` with ``random_state``, the
    split sigma="auto" draws. ValueError naming ``validation_fraction``
    when a class is too small to be split, or naming ``early_stopping`` for rows in shards."""
    if isinstance(X, ShardedMatrix):
        raise ValueError(
            f"The 'early_stopping' parameter of {type(estimator).__name__} sets validation rows "
            "apart from rows held in memory; it cannot train from shards (a ShardedMatrix)."
        )
    [(train, held)], _ = make_splits(
        y,
        classification=is_classifier(estimator),
        folds=None,
        validation_fraction=float(estimator.validation_fraction),
        seed=estimator.random_state,
    )
    if sample_weight is None:
        return X[train], y[train], None, (X[held], y[held])
    weights = np.asarray(sample_weight, dtype=np.float64)
    return X[train], y[train], weights[train], (X[held], y[held], weights[held])
