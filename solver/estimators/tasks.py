"""Classification and regression over ``LinearModelBase``: a family's classifier adds
``LinearClassifierMixin`` (two or more classes, one-vs-rest beyond two), its regressor
``LinearRegressorMixin``; each turns labels into the targets the engines fit and scores a test set."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from scipy.special import expit, softmax
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, validate_data

from ..parameters import ClassWeights, param
from ..shards import ShardedMatrix
from ..weights import fit_weights
from .base import Evaluation
from .constraints import choice
from .early_stopping import validation_split
from .sigma_search import fit_with_sigma_search


@dataclasses.dataclass(eq=False, repr=False, kw_only=True)
class _ClassWeighted:
    """The parameter every classifier declares besides its family's (a dataclass, so that
    ``solver.parameters.declare_parameters`` finds it among the classifier's bases)."""

    class_weight: Any = param(
        default=None,
        allowed=[choice(["balanced"])[0], ClassWeights(), None],
        doc='Weights of the classes in the loss: "balanced" (n_samples / (n_classes * '
        "n_samples of the class)), a mapping from label to weight (1 for a label it omits), or "
        "None (all 1).",
        details="They multiply fit's sample_weight; solver.weights says how the weights enter the objective.",
    )


class LinearClassifierMixin(_ClassWeighted, ClassifierMixin):
    """Binary (labels of any two values) and one-vs-rest multiclass classification."""

    classes_: np.ndarray

    def fit(
        self,
        X,
        y,
        sample_weight=None,
        eval_set=None,
        callback=None,
        trace=None,
        coef_init=None,
        intercept_init=None,
        eval_metric=None,
    ):
        """Fit on X (dense or sparse, float32/float64) and labels y of two or more classes.

        ``sample_weight`` (shape (n_samples,), finite, >= 0) weighs each row in the loss, times
        ``class_weight`` (``solver.weights``). ``eval_set=(X_test, y_test)`` records test accuracy
        (or ``eval_metric``, an ``EvalMetric``) at each checkpoint in ``trace_``
        (``(X_test, y_test, sample_weight)``: weighted by the test rows' weights; ``trace=True``
        records the objective alone). ``callback(progress)`` is called after every chunk of
        iterations (about 0.1 s of solver time apart); returning False stops the fit, leaving a
        fitted model.

        ``coef_init`` and ``intercept_init`` (shaped as ``coef_`` and ``intercept_``, for the
        same classes; None: zeros) start the fit from those weights instead of 0, as for
        scikit-learn's SGDClassifier: a warm start from a nearby problem's model, e.g. the same
        model on older rows. A family that cannot start from weights refuses them.
        """
        self.validate_params()
        if self.sigma == "auto":
            return fit_with_sigma_search(
                self, X, y, eval_set, callback, trace, coef_init, intercept_init, eval_metric, sample_weight
            )
        if isinstance(X, ShardedMatrix):
            _check_unweighted_shards(self, sample_weight)
            self._check_streams(X)
            self.n_features_in_ = X.n_features
            self.classes_ = np.unique(np.concatenate([_classes_of(y) for y in X.labels()]))
        else:
            X, y = validate_data(
                self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32], ensure_all_finite=False
            )  # X's values: prepare's one pass
            self.classes_ = _classes_of(y)
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
        evaluation = self._accuracy_on(self._check_eval_set(eval_set))
        evaluation = None if evaluation is None else evaluation.with_metric(eval_metric)
        classes = self.classes_
        n_outputs = 1 if classes.shape[0] == 2 else classes.shape[0]
        if isinstance(X, ShardedMatrix) and self.class_weight is not None:
            raise ValueError(
                f"The 'class_weight' parameter of {type(self).__name__} weighs rows, which "
                "needs them in memory: it cannot train from shards."
            )
        validation = None
        if self.early_stopping:  # refuses a ShardedMatrix: it sets rows apart in memory
            X, y, sample_weight, held = validation_split(self, X, y, sample_weight)
            validation = self._accuracy_on(held)
        with self._starting_from(coef_init, intercept_init, n_outputs):
            if isinstance(X, ShardedMatrix):
                return self._fit_shards(
                    X, lambda y: _one_vs_rest(y, classes), n_outputs, evaluation, callback, trace
                )
            self._sample_weight = fit_weights(y, sample_weight, self.class_weight, classes)
            return self._fit_targets(X, _one_vs_rest(y, classes), evaluation, callback, trace, validation)

    def _accuracy_on(self, eval_data) -> Evaluation | None:
        """Test accuracy; the labels of a ShardedMatrix are not checked against the classes (one
        it does not know counts as an error)."""
        if eval_data is None:
            return None
        if not isinstance(eval_data, ShardedMatrix):
            unknown = np.setdiff1d(eval_data[1], self.classes_)
            if unknown.size:
                raise ValueError(
                    f"eval_set y has labels that y has not: {unknown[:5].tolist()} (the classes "
                    f"are {self.classes_[:10].tolist()})"
                )
        return Evaluation(
            eval_data,
            lambda scores, y: self._labels_from(scores) == y,
            lambda mean: mean,
            "accuracy",
            higher_is_better=True,
        )

    def _labels_from(self, scores):
        if scores.ndim == 1 or scores.shape[1] == 1:
            return self.classes_[(np.ravel(scores) > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

    def decision_function(self, X):
        """Signed scores: shape (n_samples,) for two classes, (n_samples, n_classes) otherwise."""
        scores = self._decision_scores(X)
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

    coef_: np.ndarray
    intercept_: float

    def fit(
        self,
        X,
        y,
        sample_weight=None,
        eval_set=None,
        callback=None,
        trace=None,
        coef_init=None,
        intercept_init=None,
        eval_metric=None,
    ):
        """Fit on X (dense or sparse) and real targets y; see ``LinearClassifierMixin.fit``
        (``coef_init`` of shape (n_features,), ``intercept_init`` a number).

        ``target_score`` is an RMSE here: the fit stops once the test RMSE falls to it.
        """
        self.validate_params()
        if self.sigma == "auto":
            return fit_with_sigma_search(
                self, X, y, eval_set, callback, trace, coef_init, intercept_init, eval_metric, sample_weight
            )
        if isinstance(X, ShardedMatrix):
            _check_unweighted_shards(self, sample_weight)
            self._check_streams(X)
            self.n_features_in_ = X.n_features
        else:
            X, y = validate_data(
                self,
                X,
                y,
                accept_sparse="csr",
                dtype=[np.float64, np.float32],
                y_numeric=True,
                ensure_all_finite=False,  # X's values: checked by prepare's one pass
            )
            y = np.ascontiguousarray(y, dtype=np.float64)
        if self.target_score is not None and self.target_score < 0.0:
            raise ValueError(
                f"The 'target_score' parameter of {type(self).__name__} is a test RMSE, >= 0. Got "
                f"{self.target_score!r} instead."
            )
        evaluation = self._rmse_on(self._check_eval_set(eval_set))
        evaluation = None if evaluation is None else evaluation.with_metric(eval_metric)
        validation = None
        if self.early_stopping:  # refuses a ShardedMatrix: it sets rows apart in memory
            X, y, sample_weight, held = validation_split(self, X, y, sample_weight)
            validation = self._rmse_on(held)
        with self._starting_from(coef_init, intercept_init, 1):
            if isinstance(X, ShardedMatrix):
                return self._fit_shards(X, _regression_targets, 1, evaluation, callback, trace)
            self._sample_weight = fit_weights(y, sample_weight)
            return self._fit_targets(X, y[None, :], evaluation, callback, trace, validation)

    @staticmethod
    def _rmse_on(eval_data) -> Evaluation | None:
        if eval_data is None:
            return None
        if not isinstance(eval_data, ShardedMatrix):
            X_test, y_test, *weights = eval_data
            eval_data = (
                X_test,
                check_array(y_test, ensure_2d=False, dtype=np.float64, input_name="eval_set y"),
                *weights,
            )
        return Evaluation(
            eval_data, lambda scores, y: (scores[:, 0] - y) ** 2, math.sqrt, "rmse", higher_is_better=False
        )

    def _as_task_outputs(self) -> None:
        # One output: coef_ of shape (n_features,) (when the model has one) and a float intercept.
        self.intercept_ = float(np.ravel(self.intercept_)[0])
        if hasattr(self, "coef_"):
            self.coef_ = np.ravel(self.coef_)

    def predict(self, X):
        return self._decision_scores(X)[:, 0]


def _check_unweighted_shards(estimator: Any, sample_weight: Any) -> None:
    """Shards carry rows and labels only: weights need the rows in memory."""
    if sample_weight is not None:
        raise ValueError(
            f"{type(estimator).__name__} weighs rows in memory; sample_weight cannot go with a ShardedMatrix."
        )


def _classes_of(y: np.ndarray) -> np.ndarray:
    """``np.unique(y)`` of classification labels, after scikit-learn's check that they are.

    Labels of at most two integral values (the common binary case) are recognised in four
    vectorised passes over y (min, max, and a count of each); scikit-learn's check and the sort of
    np.unique cost 30 ms at m = 500k.
    """
    if y.ndim == 1 and y.size and y.dtype.kind in "iuf":
        low, high = y.min(), y.max()
        integral = y.dtype.kind != "f" or (float(low).is_integer() and float(high).is_integer())
        at_ends = np.count_nonzero(y == low) + (np.count_nonzero(y == high) if high != low else 0)
        if integral and at_ends == y.size:
            return np.unique(np.array([low, high], dtype=y.dtype))
    check_classification_targets(y)
    return np.unique(y)


def _regression_targets(y: np.ndarray) -> np.ndarray:
    """A shard's float targets as one output row, refusing values that are not finite."""
    y = np.asarray(y, dtype=np.float64)[None, :]
    if not np.isfinite(y).all():
        raise ValueError("Input y contains NaN or infinity.")
    return y


def _one_vs_rest(y: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Targets in {-1, +1}: one row for two classes (positive = classes[1]), else one per class.

    Labels that already are the targets (float64 -1/+1, in memory the kernels may take as it is)
    are used without a copy; the others are mapped by 2 [y == c] - 1, which, unlike
    ``np.where(y == c, 1.0, -1.0)`` and its unpredictable branch per row, streams: 0.3 ms instead
    of 2.3 ms at m = 400k.
    """
    if classes.shape[0] == 2 and _are_targets(y, classes):
        return y[None, :]
    positives = classes[1:] if classes.shape[0] == 2 else classes
    targets = np.empty((positives.shape[0], y.shape[0]))
    for row, c in zip(targets, positives, strict=True):
        np.multiply(y == c, 2.0, out=row)
        row -= 1.0
    return targets


def _are_targets(y: np.ndarray, classes: np.ndarray) -> bool:
    """Whether binary labels y of ``classes`` are the +-1 float64 targets themselves, in an array
    the kernels read as they read their own: C-contiguous and writeable (a read-only array is
    another type to Numba, which would compile the kernels again for it)."""
    return (
        y.dtype == np.float64
        and y.flags.c_contiguous
        and y.flags.writeable
        and classes[0] == -1.0
        and classes[1] == 1.0
    )
