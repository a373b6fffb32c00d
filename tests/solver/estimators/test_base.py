"""What every estimator shares (solver.estimators.base): input and evaluation-data validation, labels,
probabilities, seeds and the batch-size bound."""

from __future__ import annotations

import numpy as np
import pytest

from solver import (
    SOLVERS,
    PGSClassifier,
    PGSRegressor,
)

from ..problems import binary_problem


@pytest.mark.parametrize(
    ("X_change", "y_change", "match"),
    [
        (lambda X: np.where(X > 1.5, np.nan, X), None, "Input X contains NaN"),
        (lambda X: np.where(X > 1.5, np.inf, X), None, "Input X contains infinity"),
        (None, lambda y: np.where(np.arange(y.size) == 3, np.nan, y), "Input y contains NaN"),
        (lambda X: X[:-1], None, "inconsistent numbers of samples"),
        (None, lambda y: np.zeros_like(y), "at least 2 classes.*got 1 class"),
    ],
)
def test_bad_data_gets_clear_errors(X_change, y_change, match, as_input):
    X, y = binary_problem()
    y = y.astype(float)
    X = X_change(X) if X_change else X
    y = y_change(y) if y_change else y
    with pytest.raises(ValueError, match=match):
        PGSClassifier().fit(as_input(X) if np.isfinite(X).all() else X, y)


@pytest.mark.parametrize(
    ("cls", "params", "eval_change", "match"),
    [
        (PGSClassifier, {"target_score": 0.9}, None, "'target_score'.*needs eval_set"),
        (PGSClassifier, {"target_score": 85}, lambda X, y: (X, y), "test accuracy, in \\[0, 1\\]"),
        (PGSClassifier, {}, lambda X, y: (X * np.nan, y), "eval_set X: Input contains NaN"),
        (PGSClassifier, {}, lambda X, y: (X, np.where(y > 0, "a", "b")), "eval_set y has labels"),
        (PGSRegressor, {}, lambda X, y: (X, y * np.nan), "eval_set y contains NaN"),
        (PGSRegressor, {"target_score": -1.0}, lambda X, y: (X, y), "test RMSE, >= 0"),
    ],
)
def test_evaluation_data_and_target_score_get_clear_errors(cls, params, eval_change, match):
    """A target that can never be checked, or evaluation data that cannot be scored, is refused
    before the fit instead of running to the end (or scoring 0 at every checkpoint)."""
    X, y = binary_problem()
    eval_set = eval_change(X, y) if eval_change else None
    with pytest.raises(ValueError, match=match):
        cls(**params).fit(X, y, eval_set=eval_set)


def test_same_random_state_same_model_and_different_seeds_differ():
    X, y = binary_problem()
    a = PGSClassifier(random_state=7).fit(X, y).coef_
    b = PGSClassifier(random_state=7).fit(X, y).coef_
    c = PGSClassifier(random_state=8).fit(X, y).coef_
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


def test_labels_of_any_two_values():
    X, y = binary_problem()
    labels = np.where(y == 1, "spam", "ham")
    clf = PGSClassifier(random_state=0).fit(X, labels)
    assert set(clf.predict(X)) <= {"spam", "ham"}
    assert clf.classes_.tolist() == ["ham", "spam"]
    assert clf.score(X, labels) > 0.8


@pytest.mark.parametrize("loss", ["hinge", "squared", "squared_hinge", "smooth_hinge"])
def test_predict_proba_only_for_logistic(loss):
    X, y = binary_problem()
    clf = PGSClassifier(loss=loss, random_state=0).fit(X, y)
    assert not hasattr(clf, "predict_proba")
    with pytest.raises(AttributeError) as info:
        clf.predict_proba(X)
    assert "need loss='logistic'" in str(info.value.__cause__)
    assert clf.score(X, y) > 0.8


@pytest.mark.parametrize(
    "cls",
    [spec.classifier for spec in SOLVERS.values() if "batch_size" in spec.classifier().get_params()],
    ids=lambda cls: cls.__name__,
)
def test_batch_size_above_the_sample_count_is_refused(cls):
    """Every minibatch solver: each iteration draws k indices, so k = 1e20 must be refused."""
    X, y = binary_problem(n=50)
    with pytest.raises(
        ValueError,
        match=r"'batch_size'.*at most the number of training samples "
        r"\(50\)\. Got 100000000000000000000",
    ):
        cls(batch_size=10**20).fit(X, y)
    cls(batch_size=50, n_iter=3).fit(X, y)
