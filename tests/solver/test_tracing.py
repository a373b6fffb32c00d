"""Tracing and stopping (solver.tracing): checkpoints, time to target, target score, time budget and
callbacks, through a fit."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_regression

from solver import (
    GCDClassifier,
    PGSClassifier,
    PGSRegressor,
    SCDClassifier,
    SMIDASClassifier,
    TruncGradClassifier,
)
from solver.tracing import time_to_target

from .problems import binary_problem


def test_trace_records_checkpoints_and_time_to_target():
    X, y = binary_problem(n=2000)
    clf = PGSClassifier(sigma=1e-4, random_state=0, n_iter=50000)
    clf.fit(X[:1500], y[:1500], eval_set=(X[1500:], y[1500:]))
    trace = clf.trace_
    assert trace[0].iteration == 0 and trace[-1].iteration == clf.n_iter_ == 50000
    assert all(a.iteration < b.iteration for a, b in zip(trace, trace[1:], strict=False))
    assert all(a.solver_seconds <= b.solver_seconds for a, b in zip(trace, trace[1:], strict=False))
    assert all(pt.score_name == "accuracy" and 0 <= pt.test_score <= 1 for pt in trace)
    assert trace[-1].test_score == pytest.approx(clf.score(X[1500:], y[1500:]))
    assert trace[-1].objective < trace[0].objective
    reached = time_to_target(trace, [0.5, 1.01], higher_is_better=True)
    assert reached[1.01] is None
    assert reached[0.5] == next(pt.solver_seconds for pt in trace if pt.test_score >= 0.5)


def test_trace_without_eval_set_only_on_request():
    X, y = binary_problem()
    assert PGSClassifier(random_state=0).fit(X, y).trace_ == []
    trace = PGSClassifier(random_state=0).fit(X, y, trace=True).trace_
    assert trace and all(pt.test_score is None for pt in trace)


def test_regression_trace_is_rmse():
    X, y = make_regression(n_samples=500, n_features=4, noise=1.0, random_state=0)
    y = y / y.std()
    reg = PGSRegressor(random_state=0, target_score=0.3)
    reg.fit(X[:400], y[:400], eval_set=(X[400:], y[400:]))
    assert reg.trace_[-1].score_name == "rmse"
    assert reg.stop_reason_ == "target_score" and reg.trace_[-1].test_score <= 0.3


def test_stop_at_target_score():
    X, y = binary_problem(n=3000)
    clf = PGSClassifier(random_state=0, n_iter=10**6, target_score=0.8)
    clf.fit(X[:2000], y[:2000], eval_set=(X[2000:], y[2000:]))
    assert clf.stop_reason_ == "target_score"
    assert clf.n_iter_ < 10**6
    assert clf.trace_[-1].test_score >= 0.8


def test_stop_at_time_budget():
    X, y = binary_problem(n=3000)
    clf = PGSClassifier(random_state=0, n_iter=10**9, time_budget=0.2).fit(X, y)
    assert clf.stop_reason_ == "time_budget"
    assert 0 < clf.n_iter_ < 10**9


def test_callback_sees_progress_and_can_stop():
    X, y = binary_problem(n=3000)
    seen = []

    def callback(progress):
        seen.append(progress)
        return len(seen) < 3

    clf = PGSClassifier(random_state=0, n_iter=10**8)
    clf.fit(X[:2000], y[:2000], eval_set=(X[2000:], y[2000:]), callback=callback)
    assert clf.stop_reason_ == "callback" and len(seen) == 3
    assert [s.iteration for s in seen] == sorted(s.iteration for s in seen)
    assert seen[-1].iteration == clf.n_iter_ and seen[-1].n_iter == 10**8
    assert sum(len(s.new_points) for s in seen) == len(clf.trace_)
    assert clf.predict(X).shape == (3000,)  # still a fitted model


@pytest.mark.parametrize("cls", [SCDClassifier, GCDClassifier, SMIDASClassifier, TruncGradClassifier])
def test_trace_records_data_accesses_and_density(cls):
    X, y = binary_problem(n=500)
    est = cls(sigma=1e-2, random_state=0, n_iter=3000).fit(X, y, trace=True)
    accesses = [pt.data_accesses for pt in est.trace_]
    assert accesses[0] == 0 and all(a < b for a, b in zip(accesses, accesses[1:], strict=False))
    last = est.trace_[-1]
    assert last.nnz_weights == np.count_nonzero(est.coef_) + np.count_nonzero(est.intercept_)
    assert last.objective < est.trace_[0].objective
    assert est.export_model()[0]["nnz_weights"] == np.count_nonzero(est.coef_)
