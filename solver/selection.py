"""Choosing sigma: a regularisation path over a grid, scored by cross-validation.

The path runs from the largest sigma to the smallest. Each fold keeps its own model, and the fit at
the next sigma starts from the previous one's weights (``warm start``, for the estimators whose
estimator can start from given weights, ``warm_starts``: ``fit``'s ``coef_init`` and
``intercept_init``, the one warm start every caller uses): neighbouring sigmas of a log-spaced grid
have close optima, and a large sigma's problem is the easy, well-conditioned one, so the path costs
little more than its last fits. Every point is scored on the held-out rows of each split (its
``mean`` and ``std`` over the splits); the path stops once ``patience`` points in a row have not
improved by more than ``MIN_IMPROVEMENT`` (relative) on the last point that did, counting from
the first point that improved on the first one (the largest sigmas may all give the trivial
model), since past the best sigma the score typically only falls as the models overfit, or
creeps along a plateau. The chosen sigma is the best mean; ties go to the larger sigma, the
simpler model.

Splits (``make_splits``): k-fold cross-validation (stratified for classification) while the data has
at most ``KFOLD_MAX_ROWS`` rows, else one seeded validation split, where a single split's score is
already precise (its standard error at 20,000 validation rows is at most 0.35 accuracy points) and
k fits per point would cost k times as much.

The default grid (``default_grid``) comes from the data, as glmnet's does: sigma_max is the
largest gradient coordinate of the mean loss at w = 0, max_j |(1/m) sum_i l'(0; y_i) x_ij|, and
sigma_min = sigma_max * ``SIGMA_RANGE``. For an L1 penalty sigma_max is exactly the smallest sigma
whose optimum is w = 0 (glmnet's lambda_max); for the squared p-norm it is the scale at which the
optimum w* = -grad / sigma (to first order) moves each weight by at most 1, which leaves the
margins of sparse or normalised rows small, i.e. a nearly constant model: the start of the path.
Six decades below it reach sigma near 1 / (10 m) for the usual data sets of 10^4-10^6 rows, where
the penalty no longer bites; the path stops early once the score has peaked, so the wide range
costs a few cheap fits rather than the whole grid.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from sklearn.model_selection import KFold, ShuffleSplit, StratifiedKFold, StratifiedShuffleSplit

from .losses import LOSSES, derivatives_at_zero

# The splits: k-fold up to this many rows, a validation split beyond.
KFOLD_MAX_ROWS = 100_000
DEFAULT_FOLDS = 5
# sigma_min / sigma_max of the default grid (module docstring).
SIGMA_RANGE = 1e-6
# For patience, a point improves on the path only by more than this fraction of the score: on a
# plateau (accuracy creeping up by one held-out row per point as sigma shrinks) the path would
# otherwise run to the end, each point dearer than the last.
MIN_IMPROVEMENT = 1e-3
# The scores a path may use, and whether higher is better.
METRICS = {"accuracy": True, "rmse": False}


@dataclass(frozen=True)
class PathPoint:
    """One sigma of the path: its score per split (None: the fit diverged), their mean and
    standard deviation (None when every fit diverged), and the wall seconds and solver seconds of
    its fits."""

    sigma: float
    mean: float | None
    std: float | None
    seconds: float
    solver_seconds: float
    scores: tuple[float | None, ...]


@dataclass(frozen=True)
class Selection:
    """The outcome of a path: the chosen sigma, the metric, how the rows were split
    (``"5-fold"``, ``"validation"``), the points fitted, largest sigma first, and why the path
    ended (``"completed"``: the whole grid; ``"patience"``: no improvement for that many points;
    ``"stopped"``: a callback or ``stopped`` ended it, the best of the points complete by then)."""

    sigma: float
    metric: str
    splits: str
    path: tuple[PathPoint, ...]
    stop_reason: str

    def as_dict(self) -> dict[str, Any]:
        """As JSON: the fields, the path as a list of its points' fields."""
        return asdict(self) | {"path": [asdict(point) for point in self.path]}


def check_grid(grid: Sequence[float] | np.ndarray) -> np.ndarray:
    """``grid`` as distinct sigmas from the largest down; ValueError naming ``sigma_grid`` for an
    empty grid or a value that is not a positive finite number."""
    try:
        values = np.asarray(grid, dtype=np.float64).ravel() if len(grid) else np.empty(0)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"The 'sigma_grid' parameter must hold numbers. Got {grid!r} instead.") from exc
    bad = [float(v) for v in values if not (math.isfinite(v) and v > 0.0)]
    if values.size == 0 or bad:
        raise ValueError(
            "The 'sigma_grid' parameter must hold positive finite sigmas. Got "
            f"{list(grid)!r} instead{f' ({bad[0]!r} is not one)' if bad else ''}."
        )
    return np.unique(values)[::-1]


def default_grid(
    X: Any,
    targets: np.ndarray,
    loss: str,
    *,
    epsilon: float = 1.0,
    n_sigmas: int = 13,
    sigma_min: float | None = None,
    sigma_max: float | None = None,
) -> np.ndarray:
    """``n_sigmas`` log-spaced sigmas from ``sigma_max`` down to ``sigma_min``, each derived from
    the data when None (module docstring). ``targets`` has one row per model fitted (the -1/+1
    one-vs-rest rows of a classifier, the real targets of a regressor)."""
    if sigma_max is None:
        code = LOSSES[loss].code
        X_t = X.T
        sigma_max = (
            max(
                float(
                    np.max(
                        np.abs(
                            X_t
                            @ derivatives_at_zero(code, np.ascontiguousarray(y, dtype=np.float64), epsilon)
                        )
                    )
                )
                for y in targets
            )
            / X.shape[0]
        )
        if not (math.isfinite(sigma_max) and sigma_max > 0.0):
            sigma_max = 1.0  # a loss flat at 0 (all margins already fine): any scale will do
    if sigma_min is None:
        sigma_min = sigma_max * SIGMA_RANGE
    if not sigma_min < sigma_max:
        raise ValueError(
            f"The 'sigma_min' parameter must be below sigma_max. Got sigma_min={sigma_min!r} "
            f"and sigma_max={sigma_max!r} instead."
        )
    return np.geomspace(sigma_max, sigma_min, n_sigmas)


def make_splits(
    y: np.ndarray,
    *,
    classification: bool,
    folds: int | None,
    validation_fraction: float,
    seed: Any,
) -> tuple[list[tuple[np.ndarray, np.ndarray]], str]:
    """The (train rows, held-out rows) pairs and their description: ``folds``-fold
    cross-validation (scikit-learn's StratifiedKFold for classification, KFold otherwise, both
    shuffled with ``seed``), or, for ``folds=None``, one validation split of
    ``validation_fraction`` of the rows (stratified for classification).

    ValueError naming ``folds`` when a class has fewer rows than folds, or ``validation_fraction``
    when a class is too small for the split."""
    m = y.shape[0]
    if folds is not None:
        if classification:
            smallest = int(np.min(np.unique(y, return_counts=True)[1]))
            if folds > smallest:
                raise ValueError(
                    f"The 'folds' parameter must be at most the number of rows of the smallest "
                    f"class ({smallest}), so that every fold holds every class. Got {folds!r} instead."
                )
            splitter: Any = StratifiedKFold(folds, shuffle=True, random_state=seed)
        else:
            if folds > m:
                raise ValueError(
                    f"The 'folds' parameter must be at most the number of rows ({m}). Got {folds!r}."
                )
            splitter = KFold(folds, shuffle=True, random_state=seed)
        described = f"{folds}-fold"
    else:
        kind = StratifiedShuffleSplit if classification else ShuffleSplit
        splitter = kind(n_splits=1, test_size=validation_fraction, random_state=seed)
        described = "validation"
    try:
        splits = list(splitter.split(np.zeros((m, 1)), y))
    except ValueError as exc:  # a class too small for a stratified validation split
        raise ValueError(f"The 'validation_fraction' parameter cannot split these rows: {exc}") from exc
    return splits, described


def regularisation_path(
    build: Callable[[float], Any],
    X: Any,
    y: np.ndarray,
    *,
    grid: Sequence[float] | np.ndarray,
    splits: Sequence[tuple[np.ndarray, np.ndarray]],
    splits_name: str,
    metric: str,
    patience: int | None = None,
    warm_start: bool = True,
    callback: Callable[[Any], bool | None] | None = None,
    stopped: Callable[[], bool] = lambda: False,
    sample_weight: np.ndarray | None = None,
) -> Selection | None:
    """Fit ``build(sigma)`` on the train rows of every split for each sigma of ``grid``, largest
    first, and score it on the held-out rows (module docstring). ``y`` holds the labels the
    estimators are fitted with; ``sample_weight`` (None: every row weighs 1) the rows' weights,
    which weigh both the fits and the held-out scores. ``callback`` goes to every fit; ``None``
    when ``stopped()`` turned true (cancel, shutdown) after one of them before any point was
    complete, else the best sigma of the complete points, with stop_reason ``"stopped"``."""
    if metric not in METRICS:
        raise ValueError(f"The 'metric' parameter must be one of {sorted(METRICS)}. Got {metric!r} instead.")
    if patience is not None and patience < 1:
        raise ValueError(f"The 'patience' parameter must be at least 1 or None. Got {patience!r} instead.")
    higher_is_better = METRICS[metric]
    sigmas = check_grid(grid)
    weights = np.ones(y.shape[0]) if sample_weight is None else sample_weight
    parts = [
        (
            X[train],
            y[train],
            None if sample_weight is None else weights[train],
            X[held],
            y[held],
            weights[held],
        )
        for train, held in splits
    ]
    # Each fold's last model, (coef_, intercept_ or None): the next sigma's fit starts from it.
    previous: list[tuple[np.ndarray, np.ndarray | None] | None] = [None] * len(parts)
    path: list[PathPoint] = []
    best: tuple[float, float] | None = None  # (the mean as "higher is better", sigma)
    watch = _Patience(patience)
    for sigma in sigmas:
        start = time.perf_counter()
        scores: list[float | None] = []
        solver_seconds = 0.0
        for fold, (X_fit, y_fit, w_fit, X_held, y_held, w_held) in enumerate(parts):
            estimator = build(float(sigma))
            estimator._on_path = True
            last = previous[fold] if warm_start and getattr(estimator, "warm_starts", False) else None
            try:
                estimator.fit(
                    X_fit,
                    y_fit,
                    sample_weight=w_fit,
                    callback=callback,
                    trace=False,
                    coef_init=None if last is None else last[0],
                    intercept_init=None if last is None else last[1],
                )
            except FloatingPointError:  # a diverged fit scores worst; the next starts cold
                scores.append(None)
                previous[fold] = None
                continue
            if stopped():  # the point being fitted is incomplete: the best of those before it
                return _stopped_at(best, metric, splits_name, path)
            solver_seconds += float(estimator.solver_seconds_)
            scores.append(_score(metric, estimator.predict(X_held), y_held, w_held))
            previous[fold] = (estimator.coef_, estimator.intercept_ if estimator.fit_intercept else None)
        finite = [s for s in scores if s is not None]
        mean = float(np.mean(finite)) if len(finite) == len(scores) else None
        std = float(np.std(finite)) if mean is not None else None
        path.append(
            PathPoint(float(sigma), mean, std, time.perf_counter() - start, solver_seconds, tuple(scores))
        )
        key = -math.inf if mean is None else (mean if higher_is_better else -mean)
        if best is None or key > best[0]:  # strictly better: a tie keeps the larger sigma
            best = (key, float(sigma))
        if watch.exhausted(key) and len(path) < len(sigmas):
            return Selection(best[1], metric, splits_name, tuple(path), "patience")
    assert best is not None  # check_grid refuses an empty grid
    return Selection(best[1], metric, splits_name, tuple(path), "completed")


def _stopped_at(
    best: tuple[float, float] | None, metric: str, splits_name: str, path: list[PathPoint]
) -> Selection | None:
    """A path ended by a cancel or a shutdown: the best of its complete points, if any."""
    return None if best is None else Selection(best[1], metric, splits_name, tuple(path), "stopped")


class _Patience:
    """Whether the path has gone ``patience`` points without improving by more than
    MIN_IMPROVEMENT (relative) on the last point that did. The count starts once a point has
    improved on the first: a grid's first sigmas may all give the trivial model (the majority
    class of imbalanced data), a plateau the path must cross, not stop on."""

    def __init__(self, patience: int | None):
        self.patience = patience
        self.mark: float | None = None  # the score ("higher is better") of the last gain
        self.since = 0
        self.moved = False

    def exhausted(self, key: float) -> bool:
        if self.mark is None or self._improves(key):
            self.moved, self.mark, self.since = self.mark is not None, key, 0
            return False
        self.since += int(self.moved)
        return self.patience is not None and self.since >= self.patience

    def _improves(self, key: float) -> bool:
        assert self.mark is not None
        if self.mark == -math.inf:
            return key > self.mark
        return key > self.mark + MIN_IMPROVEMENT * abs(self.mark)


def _score(metric: str, predicted: np.ndarray, y: np.ndarray, weights: np.ndarray) -> float | None:
    """The held-out rows' weighted accuracy or RMSE; None when their weights are all 0."""
    if not weights.sum() > 0:
        return None
    if metric == "accuracy":
        return float(np.average(predicted == y, weights=weights))
    rmse = float(np.sqrt(np.average((predicted - y) ** 2, weights=weights)))
    return rmse if math.isfinite(rmse) else None
