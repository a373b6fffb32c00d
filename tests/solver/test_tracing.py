"""Tracing and stopping (solver.tracing): checkpoints, time to target, target score, time budget and
callbacks, through a fit; the trace's contract (compilation off the solver clock, checkpoints by
samples seen) without timing anything."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest
from numba.core.event import install_recorder
from sklearn.datasets import make_regression

from solver import (
    GCDClassifier,
    KernelPGSClassifier,
    KernelPGSRegressor,
    LBFGSClassifier,
    OGDClassifier,
    PGSClassifier,
    PGSRegressor,
    SCDClassifier,
    SMIDASClassifier,
    TruncGradClassifier,
    tracing,
)
from solver._sparse import prepare
from solver.losses import LOSSES, UNWEIGHTED, mean_loss
from solver.tracing import FIRST_CHECKPOINT_SAMPLES, CheckpointSchedule, drive, time_to_target

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


# -- the trace contract: compilation off the solver clock, checkpoints by samples seen ------------


class _ClockedEngine:
    """An engine on a fake clock: compiling its kernels costs 100 s, each iteration 1 s."""

    samples_per_iteration = 1

    def __init__(self, clock):
        self.t = 0
        self.clock = clock
        self.compiled = False

    def compile(self):
        self.clock.now += 100.0
        self.compiled = True

    def run(self, n):
        assert self.compiled, "an iteration ran before the engine compiled its kernels"
        self.clock.now += float(n)
        self.t += n

    def output_weights(self):
        return np.zeros((1, 2))


def test_compilation_is_done_before_the_solver_clock_starts(monkeypatch):
    clock = SimpleNamespace(now=0.0)
    monkeypatch.setattr(tracing, "time", SimpleNamespace(perf_counter=lambda: clock.now))
    result = drive(
        _ClockedEngine(clock),
        50,
        evaluate=lambda weights: (0.0, None),
        schedule=CheckpointSchedule(interval=None, first_samples=10),
    )
    assert result.compile_seconds == 100.0
    assert result.solver_seconds == 50.0
    assert [(pt.samples_seen, pt.solver_seconds) for pt in result.trace[:3]] == [
        (0, 0.0),
        (10, 10.0),
        (13, 13.0),
    ]


@pytest.mark.parametrize(
    "make",
    [
        lambda: PGSClassifier(p=2.0, random_state=0),
        lambda: PGSClassifier(p=1.5, batch_size=4, sampling="replacement", random_state=0),
        lambda: OGDClassifier(random_state=0),
        lambda: KernelPGSClassifier(random_state=0),
        lambda: SCDClassifier(random_state=0),
        lambda: GCDClassifier(random_state=0),
        lambda: SMIDASClassifier(random_state=0),
        lambda: LBFGSClassifier(),
    ],
)
def test_after_compile_an_engine_runs_without_compiling(make, as_input):
    """Engine.compile covers every kernel that run calls, for the run's own argument types."""
    X, y = binary_problem(n=60)
    est = make()
    est.n_features_in_ = X.shape[1]  # what fit sets before it makes the engine
    engine = est._make_engine(
        *prepare(as_input(X)), np.where(y == 1, 1.0, -1.0)[None, :], np.random.default_rng(0)
    )
    engine.compile()
    with install_recorder("numba:compile") as compiles:
        engine.run(5)
    assert [event for _, event in compiles.buffer] == []


FRESH_COMPILE = """
import json, numpy as np
from numba.core.event import install_recorder
from solver import PGSClassifier
from solver._sparse import prepare
X = np.random.default_rng(0).normal(size=(50, 4))
y = np.where(X[:, 0] > 0, 1.0, -1.0)
engine = PGSClassifier(random_state=0)._make_engine(*prepare(X), y[None, :], np.random.default_rng(0))
with install_recorder("numba:compile") as before:
    engine.compile()
with install_recorder("numba:compile") as during:
    engine.run(20)
print(json.dumps({"compile": len(before.buffer), "run": len(during.buffer)}))
"""


@pytest.mark.slow
def test_a_fresh_compile_happens_in_compile_not_in_run(tmp_path):
    """With an empty Numba cache, the kernels are compiled by Engine.compile, before the solver
    clock starts, and the iterations compile nothing."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", FRESH_COMPILE], env=env, check=True, capture_output=True, text=True
    )
    events = json.loads(out.stdout.strip().splitlines()[-1])
    assert events["compile"] > 0 and events["run"] == 0


def test_schedule_counts_samples_from_the_first_checkpoint():
    schedule = CheckpointSchedule(growth=2.0, first_samples=1000)
    assert [schedule.next_iteration(t, 1) for t in (0, 1000, 2000)] == [1000, 2000, 4000]
    # Minibatches of 64: the first checkpoint once 1,000 samples are seen, then doubling.
    assert [schedule.next_iteration(t, 64) for t in (0, 16, 32)] == [16, 32, 64]
    # Coordinate descent sees no samples per iteration: by iterations.
    assert [schedule.next_iteration(t, 0) for t in (0, 1, 10)] == [1, 2, 20]


@pytest.mark.parametrize("batch_size", [1, 10])
def test_checkpoints_are_at_the_same_samples_seen_whatever_the_size_of_the_data(batch_size):
    """A trace of 2,000 samples of a data set 40 times larger has its checkpoints at the same
    samples seen: time to target is measured at the same points for every m."""
    X, y = binary_problem(n=300)
    samples = []
    for copies in (1, 40):
        clf = PGSClassifier(
            random_state=0, batch_size=batch_size, n_iter=20_000 // batch_size, checkpoint_interval=None
        )
        clf.fit(np.tile(X, (copies, 1)), np.tile(y, copies), trace=True)
        samples.append([pt.samples_seen for pt in clf.trace_])
    assert samples[0] == samples[1]
    assert samples[0][1] == FIRST_CHECKPOINT_SAMPLES


@pytest.mark.parametrize(
    "make",
    [
        lambda rows: PGSRegressor(
            p=1.8, loss="squared", sigma=1e-3, n_iter=3000, random_state=0, objective_rows=rows
        ),
        lambda rows: KernelPGSRegressor(
            loss="squared", sigma=1e-2, n_iter=300, random_state=0, objective_rows=rows
        ),
    ],
    ids=["linear", "kernel"],
)
def test_the_trace_objective_of_a_large_set_is_that_of_an_even_sample_of_its_rows(make):
    """objective_rows=50 of 400 rows: every 8th row. The model is the same as with the objective
    over every row (the sample draws nothing from the solver's stream); the penalty is too, so
    the two final objectives differ by the mean losses of the sample and of all rows."""
    X, y = make_regression(n_samples=400, n_features=5, noise=1.0, random_state=0)
    y = y / np.abs(y).max()
    full = make(None).fit(X, y, trace=True)
    sampled = make(50).fit(X, y, trace=True)
    np.testing.assert_array_equal(sampled.predict(X), full.predict(X))
    z, rows = full.predict(X), np.arange(0, 400, 8)
    loss = LOSSES["squared"].code

    def mean(z, y):
        return mean_loss(loss, z, y, 1.0, UNWEIGHTED)

    assert sampled.trace_[-1].objective - full.trace_[-1].objective == pytest.approx(
        mean(z[rows], y[rows]) - mean(z, y), rel=1e-9
    )
    # A data set no larger than objective_rows: every row.
    assert make(400).fit(X, y, trace=True).trace_[-1].objective == full.trace_[-1].objective
