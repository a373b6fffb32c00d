"""The trace's test score on ``eval_rows`` (solver.estimators.base): every (m_test / eval_rows)-th
row of the eval_set, the same rows at every checkpoint, read once from a ShardedMatrix; every row
when the set is no larger; the fitted model independent of it; and the checkpoints' cost reported
beside the solver clock (``checkpoint_seconds_``)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_regression

from solver import PGSClassifier, PGSRegressor, ShardedMatrix
from solver.sampling import even_rows

from .problems import binary_problem


@pytest.mark.parametrize(("m", "k"), [(400, 50), (1000, 7), (20_001, 20_000), (10**9, 3)])
def test_the_sample_is_k_sorted_rows_evenly_spread(m, k):
    rows = even_rows(m, k)
    assert rows is not None and rows.shape == (k,) and rows[0] == 0 and rows[-1] < m
    gaps = np.diff(rows)
    # Every (m / k)-th row: the gaps are floor(m / k) or one more.
    assert set(np.unique(gaps)) <= {m // k, m // k + 1}
    np.testing.assert_array_equal(even_rows(m, k), rows)  # the same rows every time


@pytest.mark.parametrize(("m", "k"), [(400, 400), (10, 20_000), (0, 5), (400, None)])
def test_every_row_when_the_set_is_no_larger(m, k):
    assert even_rows(m, k) is None


def _test_set(n: int = 600):
    X, y = binary_problem(n=2 * n)
    return X[:n], y[:n], X[n:], y[n:]


def test_the_trace_score_is_the_score_on_the_sampled_rows_and_the_model_does_not_change():
    """eval_rows=40 of 600 test rows: every 15th. The final checkpoint is the returned model, so
    its test score is the model's accuracy on those rows; the model is the one of a fit whose
    trace scores every row."""
    X, y, Xt, yt = _test_set()
    make = lambda rows: PGSClassifier(sigma=1e-3, n_iter=3000, random_state=0, eval_rows=rows)  # noqa: E731
    sampled = make(40).fit(X, y, eval_set=(Xt, yt))
    full = make(None).fit(X, y, eval_set=(Xt, yt))
    np.testing.assert_array_equal(sampled.coef_, full.coef_)
    rows = np.arange(0, 600, 15)
    assert sampled.trace_[-1].test_score == sampled.score(Xt[rows], yt[rows])
    assert full.trace_[-1].test_score == full.score(Xt, yt)
    # A test set no larger than eval_rows: every row.
    assert make(600).fit(X, y, eval_set=(Xt, yt)).trace_[-1].test_score == full.score(Xt, yt)


def test_a_regressor_traces_the_rmse_of_the_sampled_rows():
    X, y = make_regression(n_samples=800, n_features=5, noise=1.0, random_state=0)
    y = y / np.abs(y).max()
    est = PGSRegressor(loss="squared", sigma=1e-3, n_iter=2000, random_state=0, eval_rows=100)
    est.fit(X[:400], y[:400], eval_set=(X[400:], y[400:]))
    rows = 400 + np.arange(0, 400, 4)
    rmse = np.sqrt(np.mean((est.predict(X[rows]) - y[rows]) ** 2))
    assert est.trace_[-1].test_score == pytest.approx(rmse, rel=1e-12)


def test_a_sharded_eval_set_is_read_once_for_its_sample():
    """The sample of a sharded test set is read at the first checkpoint, each shard holding some
    of its rows opened once, and scored at every checkpoint from memory: however many checkpoints
    the fit takes, no shard is read again. The scores are those of the same set in memory."""
    X, y, Xt, yt = _test_set()
    shard_rows = [100, 0, 250, 250]
    whole = ShardedMatrix.from_arrays(Xt, yt, shard_rows)
    opened: list[int] = []

    def open_shard(i):
        opened.append(i)
        return whole.open(i)

    sharded = ShardedMatrix(Xt.shape[1], shard_rows, open_shard)
    make = lambda: PGSClassifier(sigma=1e-3, n_iter=5000, random_state=0, eval_rows=40)  # noqa: E731
    est = make().fit(X, y, eval_set=sharded)
    assert len(est.trace_) > 3
    assert sorted(opened) == [0, 2, 3]  # the empty shard is never opened
    in_memory = make().fit(X, y, eval_set=(Xt, yt))
    assert [p.test_score for p in est.trace_] == [p.test_score for p in in_memory.trace_]


def test_the_sampled_rows_of_a_sharded_set_are_those_in_memory():
    X, y, _, _ = _test_set()
    X = sp.csr_matrix(X)
    matrix = ShardedMatrix.from_arrays(X, y, [13, 0, 287, 300])
    picked = np.array([0, 12, 13, 299, 300, 599])
    X_taken, y_taken = matrix.rows_at(picked)
    assert (X_taken != X[picked]).nnz == 0
    np.testing.assert_array_equal(y_taken, y[picked])


def test_the_checkpoints_cost_is_reported_off_the_solver_clock():
    X, y, Xt, yt = _test_set()
    traced = PGSClassifier(n_iter=3000, random_state=0).fit(X, y, eval_set=(Xt, yt))
    untraced = PGSClassifier(n_iter=3000, random_state=0).fit(X, y)
    assert traced.checkpoint_seconds_ > 0.0
    assert untraced.checkpoint_seconds_ == 0.0
