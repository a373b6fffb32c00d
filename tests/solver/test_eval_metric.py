"""``fit(..., eval_metric=EvalMetric(...))`` (solver.estimators.base): the trace's test score is
that metric of every evaluation row's scores and labels, named by it and compared to targets in
its direction; in memory, from a ShardedMatrix, and through sigma "auto"'s refit."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score, mean_absolute_error

from solver import PGSClassifier, PGSRegressor, ShardedMatrix
from solver.estimators.base import EvalMetric

from .problems import binary_problem


def _balanced(scores: np.ndarray, y: np.ndarray) -> float:
    return float(balanced_accuracy_score(y, (scores[:, 0] > 0).astype(int)))


BALANCED = EvalMetric("balanced_accuracy", _balanced, higher_is_better=True)


@pytest.mark.parametrize("sharded", [False, True])
def test_the_trace_scores_the_metric_on_every_row(sharded: bool):
    X, y = binary_problem(n=800)
    X_fit, y_fit, X_test, y_test = X[:500], y[:500], X[500:], y[500:]
    eval_set = ShardedMatrix.from_arrays(X_test, y_test, [100, 150, 50]) if sharded else (X_test, y_test)
    clf = PGSClassifier(loss="logistic", sigma=1e-3, n_iter=3000, random_state=0)
    clf.fit(X_fit, y_fit, eval_set=eval_set, eval_metric=BALANCED)
    final = clf.trace_[-1]
    assert final.score_name == "balanced_accuracy"
    assert final.test_score == pytest.approx(balanced_accuracy_score(y_test, clf.predict(X_test)), abs=1e-12)


def test_a_lower_is_better_metric_sets_the_target_direction():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 5))
    y = X @ np.arange(1.0, 6.0) + rng.normal(scale=0.1, size=600)
    mae = EvalMetric("mae", lambda s, t: float(mean_absolute_error(t, s[:, 0])), higher_is_better=False)
    reg = PGSRegressor(loss="squared", sigma=1e-4, n_iter=200_000, target_score=2.0, random_state=0)
    reg.fit(X[:400], y[:400], eval_set=(X[400:], y[400:]), eval_metric=mae)
    assert reg.stop_reason_ == "target_score" and reg.trace_[-1].test_score <= 2.0


def test_sigma_auto_passes_the_metric_to_its_refit():
    X, y = binary_problem(n=600)
    clf = PGSClassifier(loss="logistic", sigma="auto", n_sigmas=3, folds=2, n_iter=1000, random_state=0)
    clf.fit(X[:400], y[:400], eval_set=(X[400:], y[400:]), eval_metric=BALANCED)
    assert clf.trace_[-1].score_name == "balanced_accuracy"
