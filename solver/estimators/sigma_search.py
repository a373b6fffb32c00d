"""``sigma="auto"``: every estimator chooses its sigma by the regularisation path of
``solver.selection``, then refits on all its rows at the chosen sigma, as scikit-learn's
``LogisticRegressionCV`` does for C. The options of the path are parameters of every estimator,
declared here once; they are ignored for a numeric sigma."""

from __future__ import annotations

import dataclasses
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.utils._param_validation import Interval, StrOptions

from ..parameters import PositiveNumbers, param
from ..selection import (
    DEFAULT_FOLDS,
    KFOLD_MAX_ROWS,
    METRICS,
    check_grid,
    default_grid,
    make_splits,
    regularisation_path,
)
from ..shards import ShardedMatrix
from ..weights import checked_sample_weight
from .constraints import POSITIVE

AUTO = StrOptions({"auto"})
# The allowed values of ``sigma`` in every family: a positive number, or "auto" for the path.
SIGMA = [POSITIVE, AUTO]


# The options of sigma="auto", declared once here and named in ``LinearModelBase``'s parameters.

FOLDS: Any = param(
    default="auto",
    allowed=[Interval(Integral, 2, None, closed="left"), AUTO, None],
    doc='sigma="auto": the number of cross-validation folds (stratified for classifiers); '
    "None: one validation split.",
    details=f""""auto" is {DEFAULT_FOLDS} folds for at most {KFOLD_MAX_ROWS:,} training rows
    and a validation split beyond, where one split's score is already precise and k fits per
    sigma would cost k times as much.""",
)
VALIDATION_FRACTION: Any = param(
    default=0.2,
    allowed=[Interval(Real, 0.0, 1.0, closed="neither")],
    doc='sigma="auto" and early_stopping: the share of the training rows held out by a validation split.',
    details="Drawn with random_state (stratified for classifiers); the same seed draws the same "
    "split for both.",
)
SIGMA_GRID: Any = param(
    default=None,
    allowed=[PositiveNumbers(), None],
    doc='sigma="auto": the sigmas of the path (positive, finite); None: n_sigmas log-spaced '
    "from sigma_max down to sigma_min.",
)
N_SIGMAS: Any = param(
    default=13,
    allowed=[Interval(Integral, 2, None, closed="left")],
    doc='sigma="auto": the number of sigmas of the default grid (13: half a decade apart).',
)
SIGMA_MAX: Any = param(
    default="auto",
    allowed=[POSITIVE, AUTO],
    doc='sigma="auto": the largest sigma of the default grid.',
    details='"auto" is max_j |(1/m) sum_i l\'(0; y_i) x_ij|, the gradient of the mean loss at w = 0: '
    "the L1 penalty's smallest sigma with optimum 0 (glmnet's lambda_max), a nearly constant "
    "model for the squared norms.",
)
SIGMA_MIN: Any = param(
    default="auto",
    allowed=[POSITIVE, AUTO],
    doc='sigma="auto": the smallest sigma of the default grid; "auto": sigma_max * 1e-6.',
)
PATIENCE: Any = param(
    default=3,
    allowed=[Interval(Integral, 1, None, closed="left"), None],
    doc='sigma="auto": the path stops after this many sigmas without a better score; None: the whole grid.',
)
METRIC: Any = param(
    default="auto",
    allowed=[StrOptions({"auto", *METRICS})],
    doc='sigma="auto": the score of the path, "accuracy" (classifiers) or "rmse" (regressors); '
    '"auto": the one of the task.',
)


def fit_with_sigma_search(
    estimator: Any,
    X,
    y,
    eval_set,
    callback,
    trace,
    coef_init=None,
    intercept_init=None,
    eval_metric=None,
    sample_weight=None,
) -> Any:
    """Fit ``estimator`` (whose sigma is "auto") at the sigma its regularisation path chooses:
    sets ``sigma_`` (the chosen sigma) and ``selection_`` (``solver.selection.Selection``), and
    the model of a fit on all of (X, y) at ``sigma_``, started from ``coef_init`` and
    ``intercept_init`` when given (the path's own fits warm-start from each other). A callback
    returning False ends the path at once, at the best sigma of the points complete by then (the
    largest sigma when none is); the refit then stops at its first chunk, leaving a fitted
    model, as for any fit. ``sample_weight`` weighs the rows of every fit and score of the path
    and of the refit. While the path runs, the callback's ``iteration`` and ``n_iter`` count its
    fits (done, planned); the refit's are its own."""
    if isinstance(X, ShardedMatrix):
        raise ValueError(
            f"The 'sigma' parameter of {type(estimator).__name__} is \"auto\", which fits many "
            "models on parts of the rows and needs them in memory; give a numeric sigma to train "
            "from shards."
        )
    classification = is_classifier(estimator)
    metric = _metric(estimator, classification)
    X_fit, y_fit = _rows(estimator, X, y)
    weights = None if sample_weight is None else checked_sample_weight(sample_weight, y_fit)
    grid = (
        check_grid(estimator.sigma_grid)
        if estimator.sigma_grid is not None
        else _default_grid(estimator, X_fit, y_fit, classification)
    )
    folds = estimator.folds
    if folds == "auto":
        folds = DEFAULT_FOLDS if X_fit.shape[0] <= KFOLD_MAX_ROWS else None
    splits, splits_name = make_splits(
        y_fit,
        classification=classification,
        folds=folds,
        validation_fraction=estimator.validation_fraction,
        seed=estimator.random_state,
    )
    interrupted = False
    # Each point of the path is one fit per split.
    planned = len(grid) * len(splits)
    begun = 0

    def reporting(progress):
        nonlocal interrupted
        # On the path the callback's progress is the path's: its fits done over its fits
        # planned; a fit's own iterations restart at every fit and would say nothing.
        path_progress = dataclasses.replace(
            progress, iteration=begun - 1, n_iter=planned, phase="select_sigma"
        )
        go_on = callback(path_progress) if callback is not None else None
        interrupted = interrupted or go_on is False
        return go_on

    def build(sigma: float):
        nonlocal begun
        begun += 1
        return clone(estimator).set_params(sigma=sigma)

    selection = regularisation_path(
        build,
        X_fit,
        y_fit,
        grid=grid,
        splits=splits,
        splits_name=splits_name,
        metric=metric,
        patience=estimator.patience,
        callback=reporting,
        stopped=lambda: interrupted,
        sample_weight=weights,
    )
    chosen = selection.sigma if selection is not None else float(grid[0])
    estimator.sigma = chosen
    try:
        type(estimator).fit(
            estimator,
            X,
            y,
            sample_weight=sample_weight,
            eval_set=eval_set,
            callback=callback,
            trace=trace,
            coef_init=coef_init,
            intercept_init=intercept_init,
            eval_metric=eval_metric,
        )
    finally:
        estimator.sigma = "auto"  # fit never changes a parameter
    estimator.sigma_ = chosen
    estimator.selection_ = selection
    return estimator


def _metric(estimator: Any, classification: bool) -> str:
    if estimator.metric == "auto":
        return "accuracy" if classification else "rmse"
    if (estimator.metric == "accuracy") != classification:
        task = "classifiers" if estimator.metric == "accuracy" else "regressors"
        raise ValueError(
            f"The 'metric' parameter of {type(estimator).__name__} must be the score of its task: "
            f"{estimator.metric!r} is for {task}."
        )
    return estimator.metric


def _rows(estimator: Any, X, y) -> tuple[Any, np.ndarray]:
    """(X, y) checked as the fit checks them, X in CSR form so that rows can be taken."""
    from sklearn.utils.validation import check_X_y

    X, y = check_X_y(
        X,
        y,
        accept_sparse="csr",
        dtype=[np.float64, np.float32],
        y_numeric=not is_classifier(estimator),
        ensure_all_finite=False,
    )
    return X, y


def _default_grid(estimator: Any, X, y: np.ndarray, classification: bool) -> np.ndarray:
    if classification:
        classes = np.unique(y)
        positives = classes[1:] if classes.shape[0] == 2 else classes  # one-vs-rest
        targets = np.stack([np.where(y == c, 1.0, -1.0) for c in positives])
    else:
        targets = y[None, :].astype(np.float64)
    return default_grid(
        X,
        targets,
        estimator.loss,
        epsilon=float(estimator.epsilon),
        n_sigmas=int(estimator.n_sigmas),
        sigma_min=None if estimator.sigma_min == "auto" else float(estimator.sigma_min),
        sigma_max=None if estimator.sigma_max == "auto" else float(estimator.sigma_max),
    )
