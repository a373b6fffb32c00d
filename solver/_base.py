"""What every linear estimator of this package shares: validation, one-vs-rest, the chunked and
traced fit, prediction, and persistence without pickle.

A solver supplies an ``Engine`` (see ``solver.tracing``) through ``_make_engine`` and its
regulariser through ``_penalty``; the classifier and regressor mixins below do the rest. Concrete
estimator classes register themselves by name, so ``load_model`` can rebuild any of them.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from scipy.special import expit, softmax
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from ._sparse import KernelData, as_kernel_data
from .losses import LOSSES, mean_loss
from .tracing import CheckpointSchedule, Engine, drive

ESTIMATORS: dict[str, type[LinearModelBase]] = {}

# The first checkpoint after iteration 0 comes after this fraction of an epoch (CheckpointSchedule).
FIRST_CHECKPOINT_EPOCH = 0.01

# Parameters that every solver takes, with the same meaning.
COMMON_CONSTRAINTS: dict = {
    "sigma": [Interval(Real, 0.0, None, closed="neither")],
    "n_iter": [Interval(Integral, 1, None, closed="left"), None],
    "fit_intercept": ["boolean"],
    "random_state": ["random_state"],
    "target_score": [Real, None],
    "time_budget": [Interval(Real, 0.0, None, closed="neither"), None],
    "checkpoint_growth": [Interval(Real, 1.0, None, closed="neither")],
    "checkpoint_interval": [Interval(Real, 0.0, None, closed="neither"), None],
}


def first_step_t0(curvature: float, mean_sq_norm: float, sigma: float) -> float:
    """The t0 that makes the first step 1 / ((1 + t0) sigma) about 1 / (curvature * E||x||^2).

    The rule behind ``t0="auto"`` of PGS, ogd and kernel PGS: the largest step that is stable
    for a smooth loss, then steps decaying like 1 / (sigma t).
    """
    if not math.isfinite(mean_sq_norm):
        raise ValueError(
            "The feature values are too large: the mean squared row norm overflows float64. Scale "
            "the features (e.g. MaxAbsScaler or StandardScaler)."
        )
    first_step = 1.0 / (curvature * max(mean_sq_norm, 1e-12))
    return max(1.0, 1.0 / (sigma * first_step) - 1.0)


class LinearModelBase(BaseEstimator):
    """Fit machinery shared by the linear estimators; subclasses define the solver."""

    _parameter_constraints: ClassVar[dict] = dict(COMMON_CONSTRAINTS)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if not cls.__name__.startswith("_"):
            ESTIMATORS[cls.__name__] = cls

    # -- hooks for a solver ----------------------------------------------------------------------

    def _make_engine(self, data: KernelData, targets: np.ndarray, rng) -> Engine:
        """An engine advancing one model per row of ``targets`` (shape (n_outputs, m))."""
        raise NotImplementedError

    def _default_n_iter(self, m: int) -> int:
        raise NotImplementedError

    def _penalty(self, w: np.ndarray) -> float:
        """The regulariser's value at ``w`` (intercept last when fit_intercept)."""
        raise NotImplementedError

    # -- shared ----------------------------------------------------------------------------------

    def _store_params(self, arguments: dict) -> None:
        """Keep every ``__init__`` argument unchanged under its own name, as scikit-learn expects;
        each estimator's ``__init__`` calls this with ``locals()`` instead of assigning one by one."""
        for name in self._get_param_names():
            setattr(self, name, arguments[name])

    def validate_params(self) -> None:
        """Raise ``ValueError``/``TypeError`` naming the parameter, its allowed values and the value given."""
        self._validate_params()
        if self.target_score is not None and not math.isfinite(self.target_score):
            raise ValueError(
                f"The 'target_score' parameter of {type(self).__name__} must be a finite number or "
                f"None. Got {self.target_score!r} instead."
            )

    def _fit_targets(self, X, targets, eval_fn, score_name, higher_is_better, callback, trace):
        """Fit one model per row of ``targets`` (shape (n_outputs, m)) and set the attributes."""
        batch_size = getattr(self, "batch_size", None)  # the minibatch solvers' k
        if batch_size is not None and batch_size > X.shape[0]:
            # Not only pointless: each iteration draws k indices, so a huge k exhausts memory.
            raise ValueError(
                f"The 'batch_size' parameter of {type(self).__name__} must be at most the number "
                f"of training samples ({X.shape[0]}). Got {batch_size!r} instead."
            )
        if self.target_score is not None and eval_fn is None:
            raise ValueError(
                f"The 'target_score' parameter of {type(self).__name__} stops the fit at a test "
                f"score, so it needs eval_set=(X_test, y_test). Got target_score="
                f"{self.target_score!r} and no eval_set."
            )
        data = as_kernel_data(X)
        n_iter = self.n_iter if self.n_iter is not None else self._default_n_iter(X.shape[0])
        engine = self._make_engine(data, targets, _generator(self.random_state))

        def evaluate(weights):
            objective = sum(self._objective(X, y, w) for y, w in zip(targets, weights, strict=True))
            return objective, (eval_fn(weights) if eval_fn is not None else None)

        result = drive(
            engine,
            n_iter,
            evaluate=evaluate if (eval_fn is not None or trace) else None,
            score_name=score_name if eval_fn is not None else None,
            higher_is_better=higher_is_better,
            schedule=CheckpointSchedule(
                self.checkpoint_growth, self.checkpoint_interval,
                first_samples=math.ceil(FIRST_CHECKPOINT_EPOCH * X.shape[0]),
            ),
            target_score=self.target_score,
            time_budget=self.time_budget,
            callback=callback,
        )
        self._set_weights(engine.output_weights())
        self.n_iter_ = engine.t
        self.trace_ = result.trace
        self.stop_reason_ = result.stop_reason
        self.solver_seconds_ = result.solver_seconds
        return self

    def _scores(self, X, weights: np.ndarray) -> np.ndarray:
        """Scores of X under engine output ``weights`` (n_outputs, n_weights): shape (m, n_outputs).

        A solver whose weights are not a vector over the features (kernel PGS) overrides this.
        """
        return _margins(X, weights, self.fit_intercept)

    def _objective(self, X, y: np.ndarray, w: np.ndarray) -> float:
        z = self._scores(X, w[None, :])[:, 0]
        loss = mean_loss(LOSSES[self.loss].code, z, y, float(getattr(self, "epsilon", 1.0)))
        return float(self._penalty(w) + loss)

    def _set_weights(self, weights: np.ndarray) -> None:
        if self.fit_intercept:
            self.coef_, self.intercept_ = weights[:, :-1].copy(), weights[:, -1].copy()
        else:
            self.coef_, self.intercept_ = weights.copy(), np.zeros(weights.shape[0])

    def _check_eval_set(self, eval_set):
        if eval_set is None:
            return None
        if not isinstance(eval_set, (tuple, list)) or len(eval_set) != 2:
            raise ValueError("eval_set must be a pair (X_test, y_test)")
        X_test, y_test = eval_set
        try:
            X_test = check_array(X_test, accept_sparse="csr", dtype=[np.float64, np.float32])
        except ValueError as exc:
            raise ValueError(f"eval_set X: {exc}") from exc
        if X_test.shape[1] != self.n_features_in_:
            raise ValueError(
                f"eval_set X has {X_test.shape[1]} features, but {type(self).__name__} was given "
                f"{self.n_features_in_} features to fit"
            )
        y_test = np.asarray(y_test)
        if y_test.shape != (X_test.shape[0],):
            raise ValueError(f"eval_set y must have shape ({X_test.shape[0]},), got {y_test.shape}")
        return X_test, y_test

    def _validated(self, X):
        check_is_fitted(self)
        return validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32],
                             reset=False)

    def export_model(self) -> tuple[dict, dict[str, np.ndarray]]:
        """A JSON-serialisable description and plain arrays; ``solver.load_model`` reverses it."""
        check_is_fitted(self)
        meta = {
            "format": 1,
            "estimator": type(self).__name__,
            "params": {k: _jsonable(v) for k, v in self.get_params().items()},
            "n_features_in": int(self.n_features_in_),
            "n_iter": int(self.n_iter_),
            "classes": self.classes_.tolist() if hasattr(self, "classes_") else None,
            "nnz_weights": int(np.count_nonzero(self.coef_)),
        }
        arrays = {"coef": np.asarray(self.coef_), "intercept": np.atleast_1d(self.intercept_)}
        return meta, arrays

    @classmethod
    def _from_export(cls, meta: dict, arrays: dict[str, np.ndarray]) -> LinearModelBase:
        """The inverse of ``export_model`` for this class (see ``load_model``)."""
        est = cls(**meta["params"])
        est.n_features_in_ = int(meta["n_features_in"])
        est.n_iter_ = int(meta["n_iter"])
        coef = np.asarray(arrays["coef"], dtype=np.float64)
        intercept = np.asarray(arrays["intercept"], dtype=np.float64)
        if coef.shape[-1] != est.n_features_in_:
            raise ValueError("coef does not match n_features_in")
        if isinstance(est, ClassifierMixin):
            est.classes_ = np.asarray(meta["classes"])
            est.coef_, est.intercept_ = coef.reshape(-1, est.n_features_in_), intercept
        else:
            est.coef_, est.intercept_ = coef.reshape(-1), float(intercept[0])
        est.trace_ = []
        est.stop_reason_ = "loaded"
        return est

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class LinearClassifierMixin(ClassifierMixin):
    """Binary (labels of any two values) and one-vs-rest multiclass classification."""

    def fit(self, X, y, eval_set=None, callback=None, trace=None):
        """Fit on X (dense or sparse, float32/float64) and labels y of two or more classes.

        ``eval_set=(X_test, y_test)`` records test accuracy at each checkpoint in ``trace_``
        (``trace=True`` records the objective alone). ``callback(progress)`` is called after every
        chunk of iterations (about 0.1 s of solver time apart); returning False stops the fit,
        leaving a fitted model.
        """
        self.validate_params()
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32])
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if self.classes_.shape[0] < 2:
            raise ValueError(
                f"{type(self).__name__} needs samples of at least 2 classes in y; got 1 class: "
                f"{self.classes_.tolist()}"
            )
        if self.target_score is not None and not 0.0 <= self.target_score <= 1.0:
            raise ValueError(
                f"The 'target_score' parameter of {type(self).__name__} is a test accuracy, in "
                f"[0, 1]. Got {self.target_score!r} instead."
            )
        eval_data = self._check_eval_set(eval_set)
        eval_fn = None
        if eval_data is not None:
            X_test, y_test = eval_data
            unknown = np.setdiff1d(y_test, self.classes_)
            if unknown.size:
                raise ValueError(
                    f"eval_set y has labels that y has not: {unknown[:5].tolist()} (the classes "
                    f"are {self.classes_[:10].tolist()})"
                )

            def eval_fn(weights):
                scores = self._scores(X_test, weights)
                return float(np.mean(self._labels_from(scores) == y_test))

        targets = _one_vs_rest(y, self.classes_)
        return self._fit_targets(X, targets, eval_fn, "accuracy", True, callback, trace)

    def _labels_from(self, scores):
        if scores.ndim == 1 or scores.shape[1] == 1:
            return self.classes_[(np.ravel(scores) > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

    def decision_function(self, X):
        """Signed scores: shape (n_samples,) for two classes, (n_samples, n_classes) otherwise."""
        scores = _margins(self._validated(X), self.coef_, False) + self.intercept_
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X):
        return self._labels_from(self.decision_function(X))

    def _is_logistic(self):
        # scikit-learn's available_if re-raises this as "has no attribute", caused by this message.
        if self.loss != "logistic":
            raise AttributeError(
                f"probabilities need loss='logistic'; this {type(self).__name__} has "
                f"loss={self.loss!r} (use decision_function)"
            )
        return True

    @available_if(_is_logistic)
    def predict_proba(self, X):
        """Class probabilities of the logistic model.

        Two classes: the sigmoid of the score. More classes: each one-vs-rest score is a log-odds,
        and the odds are normalised (a softmax of the scores). Unlike normalising the sigmoids,
        this never ties two saturated classes, so its argmax is always ``predict``.
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            pos = expit(scores)
            return np.column_stack([1.0 - pos, pos])
        return softmax(scores, axis=1)

    @available_if(_is_logistic)
    def predict_log_proba(self, X):
        return np.log(self.predict_proba(X))


class LinearRegressorMixin(RegressorMixin):
    """Regression on real targets; ``trace_`` records the test RMSE."""

    def fit(self, X, y, eval_set=None, callback=None, trace=None):
        """Fit on X (dense or sparse) and real targets y; see ``LinearClassifierMixin.fit``.

        ``target_score`` is an RMSE here: the fit stops once the test RMSE falls to it.
        """
        self.validate_params()
        X, y = validate_data(
            self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32], y_numeric=True
        )
        y = np.ascontiguousarray(y, dtype=np.float64)
        if self.target_score is not None and self.target_score < 0.0:
            raise ValueError(
                f"The 'target_score' parameter of {type(self).__name__} is a test RMSE, >= 0. Got "
                f"{self.target_score!r} instead."
            )
        eval_data = self._check_eval_set(eval_set)
        eval_fn = None
        if eval_data is not None:
            X_test, y_test = eval_data
            y_test = check_array(y_test, ensure_2d=False, dtype=np.float64, input_name="eval_set y")

            def eval_fn(weights):
                z = self._scores(X_test, weights)[:, 0]
                return float(np.sqrt(np.mean((z - y_test) ** 2)))

        return self._fit_targets(X, y[None, :], eval_fn, "rmse", False, callback, trace)

    def _set_weights(self, weights):
        super()._set_weights(weights)
        self.coef_ = self.coef_[0]
        self.intercept_ = float(self.intercept_[0])

    def predict(self, X):
        return _margins(self._validated(X), self.coef_[None, :], False)[:, 0] + self.intercept_


def load_model(meta: dict, arrays: dict[str, np.ndarray]) -> LinearModelBase:
    """Rebuild a fitted estimator from ``export_model()`` output; runs no code from the data."""
    if meta.get("format") != 1 or meta.get("estimator") not in ESTIMATORS:
        raise ValueError(f"not a model this version can load: {meta.get('estimator')!r}")
    return ESTIMATORS[meta["estimator"]]._from_export(meta, arrays)


def _margins(X, weights: np.ndarray, with_intercept: bool) -> np.ndarray:
    """X @ W.T (+ the intercept column when ``weights`` carries it last): shape (m, n_outputs)."""
    coef = weights[:, :-1] if with_intercept else weights
    z = X @ coef.T
    z = np.asarray(z.todense() if sp.issparse(z) else z, dtype=np.float64)
    if with_intercept:
        z = z + weights[:, -1]
    return z


def _one_vs_rest(y: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Targets in {-1, +1}: one row for two classes (positive = classes[1]), else one per class."""
    if classes.shape[0] == 2:
        return np.where(y == classes[1], 1.0, -1.0)[None, :]
    return np.stack([np.where(y == c, 1.0, -1.0) for c in classes])


def _generator(random_state) -> np.random.Generator:
    if random_state is None or isinstance(random_state, (int, np.integer)):
        return np.random.default_rng(random_state)
    return np.random.default_rng(check_random_state(random_state).randint(0, 2**32 - 1))


def _jsonable(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.random.RandomState):
        return None
    return value
