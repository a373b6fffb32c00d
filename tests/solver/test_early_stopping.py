"""Early stopping (solver/estimators/early_stopping.py, solver.tracing.NoImprovement): the rule is
scikit-learn SGDClassifier's, the validation rows are never trained on, the split is the one
sigma="auto" draws, and the families that cannot stop early, bad values and shards are refused
with the parameter named."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification, make_regression
from sklearn.linear_model import LogisticRegression
from sklearn.linear_model import SGDClassifier as SklearnSGD

from solver import (
    GCDClassifier,
    GDClassifier,
    KernelPGSClassifier,
    LBFGSClassifier,
    OGDClassifier,
    PGSClassifier,
    PGSRegressor,
    SCDClassifier,
    SGDClassifier,
    ShardedMatrix,
    SMIDASClassifier,
    TruncGradClassifier,
)
from solver.selection import make_splits
from solver.tracing import NoImprovement


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=6000, n_features=30, n_informative=10, flip_y=0.1, random_state=0)
    return sp.csr_matrix(X), y


def _rule(scores, patience=2, tol=0.01, higher_is_better=True):
    """The checkpoint (1-based) at which NoImprovement stops over ``scores``, or None."""
    values = iter(scores)
    rule = NoImprovement(lambda w: next(values), patience, tol, higher_is_better)
    for k in range(1, len(scores) + 1):
        if rule.exhausted(np.zeros(1)):
            return k
    return None


def test_the_rule_is_scikit_learns_no_gain_above_tol_for_patience_checkpoints():
    # 0.5 -> 0.6 is a gain; 0.605 and 0.609 are not (below best + tol): the second stops it.
    assert _rule([0.5, 0.6, 0.605, 0.609, 0.7]) == 4
    # A gain of more than tol resets the count.
    assert _rule([0.5, 0.6, 0.605, 0.62, 0.625, 0.63]) == 6
    # RMSE: lower is better.
    assert _rule([2.0, 1.0, 0.995, 0.999], higher_is_better=False) == 4
    # The count starts only once a checkpoint has improved on the first (a trivial model's plateau).
    assert _rule([0.97, 0.97, 0.97, 0.97, 0.99, 0.99, 0.99]) == 7


def test_a_fit_stops_when_the_validation_score_stops_improving(data):
    X, y = data
    est = PGSClassifier(sigma=1e-3, early_stopping=True, random_state=0).fit(X, y)
    assert est.stop_reason_ == "no_improvement"
    # Without n_iter the run may go 20 times the default 5 epochs of the 4,800 training rows.
    assert 0 < est.n_iter_ < 100 * 4800
    # Every checkpoint after the first scored the validation rows (the trace records them).
    assert len(est.validation_scores_) == len(est.trace_) - 1
    # Within a point of scikit-learn's LogisticRegression fitted on every row (0.7225).
    assert est.score(X, y) > LogisticRegression().fit(X, y).score(X, y) - 0.01


def test_the_validation_rows_are_not_trained_on(data):
    # The same fit on the training part of sigma="auto"'s split, for as many iterations, gives the
    # same model: the validation rows took no part in it.
    X, y = data
    est = PGSClassifier(sigma=1e-3, early_stopping=True, validation_fraction=0.25, random_state=4)
    est.fit(X, y)
    [(train, held)], _ = make_splits(y, classification=True, folds=None, validation_fraction=0.25, seed=4)
    assert len(held) == 1500
    alone = PGSClassifier(sigma=1e-3, n_iter=est.n_iter_, random_state=4).fit(X[train], y[train])
    np.testing.assert_allclose(est.coef_, alone.coef_)
    np.testing.assert_allclose(est.intercept_, alone.intercept_)


def test_the_rows_weights_are_split_with_the_rows(data):
    # Weighted, the fit on the training part uses the training rows' weights, and the validation
    # score is the held rows' weighted accuracy.
    X, y = data
    weights = np.random.default_rng(3).integers(0, 4, size=y.shape[0]).astype(np.float64)
    est = PGSClassifier(sigma=1e-3, early_stopping=True, validation_fraction=0.25, random_state=4)
    est.fit(X, y, sample_weight=weights)
    [(train, held)], _ = make_splits(y, classification=True, folds=None, validation_fraction=0.25, seed=4)
    alone = PGSClassifier(sigma=1e-3, n_iter=est.n_iter_, random_state=4)
    alone.fit(X[train], y[train], sample_weight=weights[train])
    np.testing.assert_allclose(est.coef_, alone.coef_)
    held_accuracy = np.average(est.predict(X[held]) == y[held], weights=weights[held])
    assert est.validation_scores_[-1] == pytest.approx(held_accuracy, abs=1e-12)


def test_early_stopping_reaches_scikit_learns_accuracy(data):
    X, y = data
    X_fit, y_fit, X_test, y_test = X[:5000], y[:5000], X[5000:], y[5000:]
    ours = SGDClassifier(sigma=1e-4, early_stopping=True, random_state=0).fit(X_fit, y_fit)
    theirs = SklearnSGD(
        loss="log_loss", alpha=1e-4, early_stopping=True, validation_fraction=0.2, random_state=0
    ).fit(X_fit, y_fit)
    assert ours.stop_reason_ == "no_improvement" and theirs.n_iter_ < theirs.max_iter
    assert ours.score(X_test, y_test) >= theirs.score(X_test, y_test) - 0.03


@pytest.mark.parametrize(
    "cls",
    [SGDClassifier, OGDClassifier, SMIDASClassifier, TruncGradClassifier, SCDClassifier, KernelPGSClassifier],
)
def test_every_stochastic_family_stops_early(cls, data):
    X, y = data[0][:1500], data[1][:1500]
    est = cls(sigma=1e-3, early_stopping=True, random_state=0).fit(X, y)
    assert est.stop_reason_ == "no_improvement"
    assert len(est.validation_scores_) == len(est.trace_) - 1


def test_a_regressor_stops_on_the_validation_rmse():
    X, y = make_regression(n_samples=3000, n_features=20, noise=5.0, random_state=0)
    est = PGSRegressor(sigma=1e-4, early_stopping=True, random_state=0).fit(X, y)
    assert est.stop_reason_ == "no_improvement"
    assert est.validation_scores_[-1] < np.std(y) / 2


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"validation_fraction": 0.0}, "validation_fraction"),
        ({"validation_fraction": 1.0}, "validation_fraction"),
        ({"n_iter_no_change": 0}, "n_iter_no_change"),
        ({"tol": -1e-3}, "tol"),
    ],
)
def test_bad_values_are_refused_naming_the_parameter(params, name, data):
    X, y = data
    with pytest.raises(ValueError, match=f"'{name}' parameter"):
        PGSClassifier(early_stopping=True, **params).fit(X, y)


@pytest.mark.parametrize("cls", [LBFGSClassifier, GDClassifier, GCDClassifier])
def test_a_solver_without_stochastic_iterations_refuses_early_stopping(cls, data):
    X, y = data
    with pytest.raises(ValueError, match="'early_stopping' parameter .* must be False") as caught:
        cls(early_stopping=True).fit(X, y)
    assert cls.solver_name in str(caught.value)
    assert cls(early_stopping=False, n_iter=2).fit(X, y).stop_reason_ in ("completed", "converged")


def test_shards_are_refused(data, tmp_path):
    X, y = data
    shards = ShardedMatrix.from_arrays(X, y, [3000, 3000])
    with pytest.raises(ValueError, match="'early_stopping' parameter .* shards"):
        PGSClassifier(early_stopping=True).fit(shards, None)
