"""What every estimator of this package shares: the common parameters, their validation, and the
chunked and traced fit.

A solver family subclasses ``LinearModelBase`` once, declaring its own parameters (see
``solver.parameters``) and the three hooks ``_make_engine`` (the engine that runs the iterations, see
``solver.tracing.Engine``), ``_default_n_iter`` and ``_penalty``; its classifier and regressor add
``LinearClassifierMixin`` / ``LinearRegressorMixin`` (``solver.estimators.tasks``) and re-declare
``loss`` with the losses they accept. A family names its solver (``solver_name``) and says whether it
streams; ``solver.catalogue`` lists the solvers from these class attributes.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from numbers import Real
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from .._sparse import DataStats, KernelData, prepare
from ..losses import LOSSES, UNWEIGHTED, Loss, max_weight, mean_loss
from ..parameters import declare_parameters, joint_problems, param, validate_given
from ..sampling import TrainingRows, TrainingShards, even_rows
from ..shards import ShardedMatrix
from ..tracing import CheckpointSchedule, Engine, NoImprovement, drive
from ..weights import checked_sample_weight
from .constraints import AT_LEAST_ONE, FINITE, POSITIVE, choice
from .early_stopping import DEFAULT_LENGTH_FACTOR, EARLY_STOPPING, N_ITER_NO_CHANGE, TOL
from .persistence import FittedModel
from .sigma_search import (
    FOLDS,
    METRIC,
    N_SIGMAS,
    PATIENCE,
    SIGMA,
    SIGMA_GRID,
    SIGMA_MAX,
    SIGMA_MIN,
    VALIDATION_FRACTION,
)


@declare_parameters
class LinearModelBase(FittedModel):
    """Fit machinery shared by every estimator; a subclass per solver family supplies the hooks."""

    loss: str = param(
        default="logistic",
        allowed=choice(LOSSES),
        kw_only=False,
        doc="The loss l(z; y) of a prediction z (solver.losses).",
    )
    sigma: float | str = param(
        default=1e-5,
        allowed=SIGMA,
        doc='Regularisation weight; "auto": chosen by cross-validation (the options below).',
        details="sigma_ holds the chosen value and selection_ the path (solver.selection).",
    )
    # sigma="auto": the options of its regularisation path (solver.estimators.sigma_search).
    folds: int | str | None = FOLDS
    validation_fraction: float = VALIDATION_FRACTION
    sigma_grid: Any = SIGMA_GRID
    n_sigmas: int = N_SIGMAS
    sigma_max: float | str = SIGMA_MAX
    sigma_min: float | str = SIGMA_MIN
    patience: int | None = PATIENCE
    metric: str = METRIC
    n_iter: int | None = param(
        default=None, allowed=[AT_LEAST_ONE, None], doc="Iterations T; None: the solver's default."
    )
    # Early stopping on validation_fraction of the rows (solver.estimators.early_stopping).
    early_stopping: bool = EARLY_STOPPING
    n_iter_no_change: int = N_ITER_NO_CHANGE
    tol: float = TOL
    fit_intercept: bool = param(
        default=True,
        allowed=["boolean"],
        doc="Learn a bias as the weight of a constant feature 1, regularised like the others.",
    )
    random_state: Any = param(default=None, allowed=["random_state"], doc="Seeds the solver's random draws.")
    epsilon: float = param(
        default=1.0,
        allowed=[POSITIVE],
        doc="Width of the quadratic part of the huber loss (unused by the others).",
    )
    target_score: float | None = param(
        default=None,
        allowed=[FINITE, None],
        doc="Stop at the first checkpoint whose test score (fit's eval_set) reaches this value.",
        details="A test accuracy in [0, 1] for classifiers, a test RMSE (reached from above) for regressors.",
    )
    time_budget: float | None = param(
        default=None, allowed=[POSITIVE, None], doc="Stop once the solver clock reaches this many seconds."
    )
    checkpoint_growth: float = param(
        default=1.25,
        allowed=[Interval(Real, 1.0, None, closed="neither")],
        doc="Trace checkpoints are taken at samples seen growing by this factor (from 1,000)...",
    )
    checkpoint_interval: float | None = param(
        default=1.0, allowed=[POSITIVE, None], doc="...and at least every this many solver seconds."
    )
    objective_rows: int | None = param(
        default=20_000,
        allowed=[AT_LEAST_ONE, None],
        doc="The trace's training objective is computed on this many rows, evenly spread, when "
        "the data has more; None: on every row.",
        details="Every (m / objective_rows)-th row, fixed for the whole fit, so a checkpoint "
        "costs the same at every m instead of a pass over the data. The fitted model and the test "
        "score (on eval_rows) do not depend on it.",
    )
    eval_rows: int | None = param(
        default=20_000,
        allowed=[AT_LEAST_ONE, None],
        doc="The trace's test score is computed on this many rows of fit's eval_set, evenly "
        "spread, when it has more; None: on every row.",
        details="Every (m_test / eval_rows)-th row, fixed for the whole fit (the rule of "
        "objective_rows), so a checkpoint costs the same whatever the size of the test set. "
        "target_score is reached on these rows; the fitted model does not depend on it.",
    )

    # What a training job names the solver by (``solver.SOLVERS``), declared by each family.
    solver_name: ClassVar[str]
    # Whether ``fit`` accepts a ``solver.ShardedMatrix`` (the family's ``_engine_over`` reads
    # ``solver.sampling.TrainingRows``): true for the stochastic solvers whose step reads one sample
    # or minibatch at a time; the others (full gradients, coordinate descent, kernel expansions)
    # need every row at once.
    streams: ClassVar[bool] = False
    # Whether ``fit`` accepts ``coef_init``/``intercept_init`` (a warm start): the engine then
    # starts from ``_initial_weights`` (shape (n_outputs, n_weights), the intercept last), set for
    # the duration of that fit only. sigma="auto" warm-starts each fit of its path this way, and a
    # training job its fit from a stored model (``init_model``). A family that cannot says why in
    # ``cold_only_reason``.
    warm_starts: ClassVar[bool] = False
    cold_only_reason: ClassVar[str] = ""
    # Set on each fit of sigma="auto"'s path (solver.selection): a model that only scores its
    # sigma, which a family may fit more cheaply than the model a fit returns.
    _on_path: ClassVar[bool] = False
    # The rows' weights c_i in the loss term (1/m) sum_i c_i l(z_i; y_i) of the fit under way,
    # scaled to mean 1 (``solver.weights.fit_weights``); empty: unweighted. Every engine reads it.
    _sample_weight: ClassVar[np.ndarray] = UNWEIGHTED

    # -- hooks for a solver family ----------------------------------------------------------------

    def _make_engine(
        self, data: KernelData, stats: DataStats, targets: np.ndarray, rng: np.random.Generator
    ) -> Engine:
        """An engine advancing one model per row of ``targets`` (shape (n_outputs, m)); ``stats``
        are the data's statistics from the pass that checked it (``solver._sparse.prepare``)."""
        raise NotImplementedError

    def _default_n_iter(self, m: int) -> int:
        raise NotImplementedError

    def _penalty(self, w: np.ndarray) -> float:
        """The regulariser's value at ``w`` (intercept last when fit_intercept)."""
        raise NotImplementedError

    # -- shared -----------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _starting_from(self, coef_init, intercept_init, n_outputs: int) -> Iterator[None]:
        """Within the block, the engine starts from ``coef_init``/``intercept_init`` (None: 0)."""
        self._initial_weights = self._initial_weights_from(coef_init, intercept_init, n_outputs)
        try:
            yield
        finally:
            del self._initial_weights  # back to the class's None: the next fit starts cold

    def _initial_weights_from(self, coef_init, intercept_init, n_outputs: int) -> np.ndarray | None:
        """The engine's start, shape (n_outputs, n_weights) with the intercept last, from weights
        laid out as ``coef_`` and ``intercept_`` are; None for a cold start. ValueError naming the
        argument for a family that cannot start from weights, a shape that does not fit, a value
        that is not finite, or an intercept without ``fit_intercept``."""
        if coef_init is None and intercept_init is None:
            return None
        name = type(self).__name__
        if not self.warm_starts:
            raise ValueError(f"{name} cannot start from given weights (coef_init): {self.cold_only_reason}")
        n_features = int(self.n_features_in_)
        coef = _shaped(coef_init, (n_outputs, n_features), "coef_init", name)
        intercept = _shaped(intercept_init, (n_outputs,), "intercept_init", name)
        if not self.fit_intercept:
            if np.any(intercept != 0.0):
                raise ValueError(f"{name} has fit_intercept=False: intercept_init must be None or 0.")
            return coef
        return np.column_stack([coef, intercept])

    def validate_params(self) -> None:
        """Raise ``ValueError``/``TypeError`` naming the parameter, its allowed values and the value given."""
        params = self.get_params(deep=False)
        validate_given(self, params)  # each parameter alone, in scikit-learn's words
        problems = joint_problems(type(self), params)  # what is left
        if problems:
            raise ValueError(problems[0].message(type(self).__name__))

    def _engine_over(self, rows: TrainingRows, rng: np.random.Generator) -> Engine:
        """An engine that reads ``rows`` block by block (``solver.sampling``): the hook of the
        families whose estimators stream."""
        raise NotImplementedError

    def _fit_targets(
        self,
        X,
        targets: np.ndarray,
        evaluation: Evaluation | None,
        callback,
        trace,
        validation: Evaluation | None = None,
    ):
        """Fit one model per row of ``targets`` (shape (n_outputs, m)) and set the attributes;
        ``validation`` holds the rows early stopping scores (none of them in X)."""
        self._check_fit_request(X.shape[0], evaluation)
        data, stats = prepare(X)
        engine = self._make_engine(data, stats, targets, _generator(self.random_state))

        sample_weight = self._sample_weight

        @functools.cache
        def objective_rows():  # at the first checkpoint: an untraced fit takes no sample
            sample = even_rows(X.shape[0], self.objective_rows)
            if sample is None:
                return X, targets, sample_weight
            return (
                X[sample],
                targets[:, sample],
                sample_weight[sample] if sample_weight.size else sample_weight,
            )

        def objective(weights):
            X_obj, targets_obj, weights_obj = objective_rows()
            return sum(
                self._objective(X_obj, y, w, data, weights_obj)
                for y, w in zip(targets_obj, weights, strict=True)
            )

        return self._drive(engine, X.shape[0], objective, evaluation, callback, trace, data, validation)

    def _fit_shards(
        self,
        X: ShardedMatrix,
        encode: Callable[[np.ndarray], np.ndarray],
        n_outputs: int,
        evaluation: Evaluation | None,
        callback,
        trace,
    ):
        """``_fit_targets`` on a ShardedMatrix: the engine samples shard by shard, and the
        objective at checkpoints streams over the shards. ``encode`` maps a shard's labels to its
        targets (shape (n_outputs, rows))."""
        self._check_fit_request(X.n_samples, evaluation)
        rows = TrainingShards(X, encode, n_outputs)
        engine = self._engine_over(rows, _generator(self.random_state))

        @functools.cache
        def sampled_rows():
            # Read from the shards once, at the first checkpoint (an untraced fit reads nothing);
            # without a sample, every row streams at each checkpoint.
            sample = even_rows(rows.m, self.objective_rows)
            return None if sample is None else rows.rows_at(sample)

        def objective(weights):
            taken = sampled_rows()
            total, n_rows = 0.0, 0
            for X_block, targets in rows.matrix_blocks() if taken is None else [taken]:
                scores = self._scores(X_block, weights)
                total += sum(self._mean_loss(scores[:, o], y) * y.shape[0] for o, y in enumerate(targets))
                n_rows += targets.shape[1]
            return sum(self._penalty(w) for w in weights) + total / n_rows

        return self._drive(engine, X.n_samples, objective, evaluation, callback, trace, None)

    def _drive(
        self,
        engine: Engine,
        m: int,
        objective: Callable[[np.ndarray], float],
        evaluation: Evaluation | None,
        callback,
        trace,
        data: KernelData | None,
        validation: Evaluation | None = None,
    ):
        """Run ``engine`` (tracing.drive) and set the fitted attributes."""
        n_iter = self.n_iter
        if n_iter is None:
            n_iter = self._default_n_iter(m) * (DEFAULT_LENGTH_FACTOR if validation is not None else 1)

        @functools.cache
        def trace_evaluation():  # the eval_rows sample, taken at the first checkpoint
            assert evaluation is not None
            return evaluation.on_sample(self.eval_rows)

        def evaluate(weights):
            test_score = (
                trace_evaluation().score(lambda X: self._scores(X, weights, data))
                if evaluation is not None
                else None
            )
            return objective(weights), test_score

        early_stop = None
        if validation is not None:
            early_stop = NoImprovement(
                lambda weights: validation.score(lambda X: self._scores(X, weights, data)),
                int(self.n_iter_no_change),
                float(self.tol),
                validation.higher_is_better,
            )
        result = drive(
            engine,
            n_iter,
            evaluate=evaluate if (evaluation is not None or trace or early_stop) else None,
            score_name=evaluation.name if evaluation is not None else None,
            higher_is_better=evaluation.higher_is_better if evaluation is not None else True,
            schedule=CheckpointSchedule(self.checkpoint_growth, self.checkpoint_interval),
            target_score=self.target_score,
            time_budget=self.time_budget,
            callback=callback,
            early_stop=early_stop,
        )
        self._finish_fit(engine, data)
        # scikit-learn's name: the validation score at each checkpoint (None without early stopping).
        self.validation_scores_ = early_stop.scores if early_stop is not None else None
        self.n_iter_ = engine.t
        self.trace_ = result.trace
        self.stop_reason_ = result.stop_reason
        self.solver_seconds_ = result.solver_seconds
        self.compile_seconds_ = result.compile_seconds
        self.checkpoint_seconds_ = result.checkpoint_seconds
        return self

    def _check_streams(self, X) -> None:
        """ValueError unless this estimator's solver trains from shards."""
        if self.streams:
            return
        raise ValueError(
            f"{type(self).__name__} needs every row of the data at once and cannot train from "
            f"{X!r}; the solvers that stream from shards are {', '.join(_streaming_solvers())}"
        )

    def _check_fit_request(self, m: int, evaluation: Evaluation | None) -> None:
        batch_size = getattr(self, "batch_size", None)  # the minibatch solvers' k
        if batch_size is not None and batch_size > m:
            # Not only pointless: each iteration draws k indices, so a huge k exhausts memory.
            raise ValueError(
                f"The 'batch_size' parameter of {type(self).__name__} must be at most the number "
                f"of training samples ({m}). Got {batch_size!r} instead."
            )
        if self.target_score is not None and evaluation is None:
            raise ValueError(
                f"The 'target_score' parameter of {type(self).__name__} stops the fit at a test "
                f"score, so it needs eval_set=(X_test, y_test). Got target_score="
                f"{self.target_score!r} and no eval_set."
            )

    def _scores(self, X, weights: np.ndarray, data: KernelData | None = None) -> np.ndarray:
        """Scores of X under engine output ``weights`` (n_outputs, n_weights): shape (m, n_outputs).

        ``data`` is the training data, which kernel models (whose weights are coefficients of
        training samples) need; linear weights are a vector over the features.
        """
        return _margins(X, weights, self.fit_intercept)

    def _objective(
        self,
        X,
        y: np.ndarray,
        w: np.ndarray,
        data: KernelData | None = None,
        sample_weight: np.ndarray = UNWEIGHTED,
    ) -> float:
        """The training objective at engine weights ``w``: penalty + mean (weighted) loss on (X, y)."""
        z = self._scores(X, w[None, :], data)[:, 0]
        return float(self._penalty(w) + self._mean_loss(z, y, sample_weight))

    def _stepping_loss(self) -> Loss:
        """The loss as the step-size rules see it: a row of weight c scales its loss, and the
        loss's curvature with it, by c, so the rules take the largest weight's curvature."""
        loss = LOSSES[self.loss]
        return replace(loss, curvature=loss.curvature * max_weight(self._sample_weight))

    def _mean_loss(self, z: np.ndarray, y: np.ndarray, sample_weight: np.ndarray = UNWEIGHTED) -> float:
        return float(mean_loss(LOSSES[self.loss].code, z, y, float(self.epsilon), sample_weight))

    def _finish_fit(self, engine: Engine, data: KernelData | None) -> None:
        """The fitted model from the engine that ran the iterations."""
        self._set_weights(engine.output_weights(), data)

    def _set_weights(self, weights: np.ndarray, data: KernelData | None) -> None:
        """The fitted model from engine output ``weights`` (shape (n_outputs, n_weights))."""
        if self.fit_intercept:
            self.coef_, self.intercept_ = weights[:, :-1].copy(), weights[:, -1].copy()
        else:
            self.coef_, self.intercept_ = weights.copy(), np.zeros(weights.shape[0])
        self._as_task_outputs()

    def _decision_scores(self, X) -> np.ndarray:
        """The fitted model's scores of X, shape (n_samples, n_outputs)."""
        return _margins(self._validated(X), np.atleast_2d(self.coef_), False) + self.intercept_

    def _check_eval_set(self, eval_set):
        """``eval_set`` as ``(X_test, y_test)`` or ``(X_test, y_test, sample_weight)`` checked (the
        test score is then weighted), or a ShardedMatrix as it is (its shards are checked as they
        are read)."""
        if eval_set is None:
            return None
        weights = []
        if isinstance(eval_set, ShardedMatrix):
            X_test = eval_set
        elif not isinstance(eval_set, (tuple, list)) or len(eval_set) not in (2, 3):
            raise ValueError(
                "eval_set must be (X_test, y_test), (X_test, y_test, sample_weight) or a ShardedMatrix"
            )
        else:
            X_test, y_test, *weights = eval_set
            try:
                X_test = check_array(X_test, accept_sparse="csr", dtype=[np.float64, np.float32])
            except ValueError as exc:
                raise ValueError(f"eval_set X: {exc}") from exc
        if X_test.shape[1] != self.n_features_in_:
            raise ValueError(
                f"eval_set X has {X_test.shape[1]} features, but {type(self).__name__} was given "
                f"{self.n_features_in_} features to fit"
            )
        if isinstance(X_test, ShardedMatrix):
            return X_test
        y_test = np.asarray(y_test)
        if y_test.shape != (X_test.shape[0],):
            raise ValueError(f"eval_set y must have shape ({X_test.shape[0]},), got {y_test.shape}")
        if weights and weights[0] is not None:
            return X_test, y_test, checked_sample_weight(weights[0], y_test, "eval_set sample_weight")
        return X_test, y_test

    def _validated(self, X):
        check_is_fitted(self)
        return validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


@dataclass(frozen=True)
class EvalMetric:
    """A test score of the trace other than accuracy or RMSE (``fit``'s ``eval_metric``):
    ``score(scores, y)`` of every evaluation row's scores (rows x outputs) and labels (as
    ``fit``'s y), whatever it needs of them all (an F1, a ROC AUC); ``score(scores, y, weights)``
    for an evaluation set with row weights."""

    name: str
    score: Callable[..., float]
    higher_is_better: bool


@dataclass(frozen=True)
class Evaluation:
    """The test set of a fit: the test score is ``finish`` of the mean of ``per_row(scores, y)``
    over its rows, read block by block (one block in memory, one shard at a time for a
    ShardedMatrix): accuracy, or RMSE; or, with ``metric``, that metric of the rows' scores and
    labels gathered from the blocks. In memory, ``data`` may carry the rows' weights third: the
    mean (or the metric) is then weighted."""

    data: Any  # (X_test, y_test) or a ShardedMatrix
    per_row: Callable[[np.ndarray, np.ndarray], np.ndarray]
    finish: Callable[[float], float]
    name: str
    higher_is_better: bool
    metric: EvalMetric | None = None

    def with_metric(self, metric: EvalMetric | None) -> Evaluation:
        """This evaluation scored by ``metric`` instead (itself without one)."""
        if metric is None:
            return self
        return replace(self, name=metric.name, higher_is_better=metric.higher_is_better, metric=metric)

    def on_sample(self, k: int | None) -> Evaluation:
        """This evaluation on every (m_test / k)-th row of its data (``solver.sampling.even_rows``),
        held in memory (from a ShardedMatrix, each shard holding some of them opened once);
        itself when it has no more than k rows."""
        m = self.data.n_samples if isinstance(self.data, ShardedMatrix) else self.data[1].shape[0]
        rows = even_rows(m, k)
        if rows is None:
            return self
        if isinstance(self.data, ShardedMatrix):
            return replace(self, data=self.data.rows_at(rows))
        return replace(self, data=tuple(part[rows] for part in self.data))

    def score(self, scores_of: Callable[[Any], np.ndarray]) -> float:
        """The test score given ``scores_of(X)``, the scores of rows X (n_samples, n_outputs)."""
        blocks = self.data.shards() if isinstance(self.data, ShardedMatrix) else [self.data]
        if self.metric is not None:
            scores: list[np.ndarray] = []
            labels: list[np.ndarray] = []
            row_weights: list[np.ndarray] = []
            for X, y, *weights in blocks:
                scores.append(scores_of(X))
                labels.append(y)
                row_weights += weights
            arguments = [np.vstack(scores), np.concatenate(labels)]
            if row_weights:
                arguments.append(np.concatenate(row_weights))
            return float(self.metric.score(*arguments))
        total, count = 0.0, 0.0
        for X, y, *weights in blocks:
            per_row = self.per_row(scores_of(X), y)
            if weights:
                total += float(np.dot(weights[0], per_row))
                count += float(np.sum(weights[0]))
            else:
                total += float(np.sum(per_row))
                count += y.shape[0]
        return self.finish(total / count if count > 0 else 0.0)


class ConstantFeatureIntercept:
    """For a family whose intercept is b = s w_b, w_b the weight of a constant feature of value s
    regularised like the others (LIBLINEAR's convention): s comes from the family's declared
    ``intercept_scaling`` and is kept in ``intercept_scaling_``."""

    fit_intercept: bool
    intercept_scaling: float | str
    intercept_scaling_: float

    def _set_constant_feature(self, stats: DataStats) -> float:
        """s as given, or for "auto" the root mean square of the stored non-zero feature values
        (1 for binary features, about 0.1 for L2-normalised text), so that the constant feature is
        the size of a typical value; 0.0 without an intercept. Sets ``intercept_scaling_``."""
        if not self.fit_intercept:
            value = 0.0
        elif self.intercept_scaling != "auto":
            value = float(self.intercept_scaling)
        else:
            value = math.sqrt(stats.sum_sq / stats.n_values) if stats.n_values else 1.0
        self.intercept_scaling_ = value
        return value

    def _regularised_weights(self, w: np.ndarray) -> np.ndarray:
        """Engine weights (intercept b last when fitted) as the penalty sees them: (coef, b / s)."""
        if not self.fit_intercept:
            return w
        s = self.intercept_scaling
        s = self.intercept_scaling_ if s == "auto" else float(s)
        return np.concatenate([w[:-1], w[-1:] / s])


def _margins(X, weights: np.ndarray, with_intercept: bool) -> np.ndarray:
    """X @ W.T (+ the intercept column when ``weights`` carries it last): shape (m, n_outputs)."""
    coef = weights[:, :-1] if with_intercept else weights
    z = X @ coef.T
    z = np.asarray(z.todense() if sp.issparse(z) else z, dtype=np.float64)
    if with_intercept:
        z = z + weights[:, -1]
    return z


def _shaped(values, shape: tuple[int, ...], name: str, estimator: str) -> np.ndarray:
    """``values`` (None: zeros) as finite float64 of ``shape``; a single output's weights may
    come flat, as a regressor's ``coef_`` is."""
    if values is None:
        return np.zeros(shape)
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"The {name!r} argument of {estimator}.fit must hold numbers.") from exc
    if array.size != math.prod(shape) or (array.ndim and array.shape[-1] != shape[-1]):
        raise ValueError(
            f"The {name!r} argument of {estimator}.fit must have shape {shape} (one row per "
            f"output: one for a regressor or two classes, else one per class). Got {array.shape}."
        )
    if not np.isfinite(array).all():
        raise ValueError(f"The {name!r} argument of {estimator}.fit must be finite.")
    return array.reshape(shape)


def _generator(random_state) -> np.random.Generator:
    if random_state is None or isinstance(random_state, (int, np.integer)):
        return np.random.default_rng(random_state)
    return np.random.default_rng(check_random_state(random_state).randint(0, 2**32 - 1))


def _streaming_solvers() -> list[str]:
    """The names of the solvers whose estimators stream, from the estimator classes themselves."""
    names, pending = set(), [LinearModelBase]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls.streams and not cls.__name__.startswith("_"):
            names.add(cls.solver_name)
    return sorted(names)
