"""Training that streams from shards (solver.sampling): the iterates against in-memory fits, the
order of the samples, and how many shards are resident."""

from __future__ import annotations

import weakref

import numpy as np
import pytest
import scipy.sparse as sp

from solver import (
    SOLVERS,
    OGDRegressor,
    PGSClassifier,
    PGSRegressor,
    SGDClassifier,
    ShardedMatrix,
    SMIDASClassifier,
    TruncGradRegressor,
)
from solver._sparse import as_kernel_data, mean_row_nnz
from solver.losses import LOSSES
from solver.pgs import PGSState
from solver.sampling import InterleavingSampler, TrainingShards

from .problems import sparse_problem

# Shard sizes that do not divide by the minibatch sizes below, with an empty shard.
SHARDS = [13, 0, 29, 7, 31]
M = sum(SHARDS)


def _problem(loss="logistic"):
    X, y, _ = sparse_problem(loss, seed=3, m=M, n=9)
    return sp.csr_matrix(X), y


def _fitted(est, X, y, shard_rows=None, **fit):
    if shard_rows is not None:
        X, y = ShardedMatrix.from_arrays(X, y, shard_rows), None
    return est.fit(X, y, **fit)


STREAMING = [
    (PGSClassifier, {"p": 2.0, "output": "random"}),
    (PGSClassifier, {"p": 1.5, "batch_size": 4, "sampling": "replacement"}),
    (PGSRegressor, {"p": 1.8, "loss": "squared"}),
    (SGDClassifier, {"batch_size": 3}),
    (OGDRegressor, {"loss": "huber"}),
    (SMIDASClassifier, {"sigma": 1e-3}),
    (TruncGradRegressor, {"sigma": 1e-3}),
]


@pytest.mark.parametrize(("cls", "params"), STREAMING)
def test_one_shard_fits_as_in_memory_iterate_for_iterate(cls, params):
    X, y = _problem("squared" if "Regressor" in cls.__name__ else "logistic")
    make = lambda: cls(random_state=4, n_iter=150, checkpoint_growth=1.01, **params)  # noqa: E731
    memory = _fitted(make(), X, y, trace=True)
    sharded = _fitted(make(), X, y, [M], trace=True)
    np.testing.assert_array_equal(sharded.coef_, memory.coef_)
    np.testing.assert_array_equal(sharded.intercept_, memory.intercept_)
    # The checkpoints: the same iterates (their objective, which streams, to rounding).
    assert [p.iteration for p in sharded.trace_] == [p.iteration for p in memory.trace_]
    np.testing.assert_allclose(
        [p.objective for p in sharded.trace_], [p.objective for p in memory.trace_], rtol=1e-12
    )


def _visit_order(shard_rows, seed, count):
    """The sample order of a sharded fit with sampling="permutation", built in plain NumPy: each
    epoch shuffles the shards that have rows (Generator.shuffle), and each shard's rows follow a
    Fisher-Yates shuffle driven by one uniform per row (solver.sampling.shuffle_step)."""
    rng = np.random.default_rng(seed)
    offsets = np.concatenate([[0], np.cumsum(shard_rows)])
    visit = np.flatnonzero(shard_rows)
    order: list[int] = []
    while len(order) < count:
        rng.shuffle(visit)
        for s in visit:
            r = shard_rows[s]
            perm = np.arange(r)
            uniforms = rng.random(r)
            for pos in range(r):
                j = min(pos + int(uniforms[pos] * (r - pos)), r - 1)
                perm[pos], perm[j] = perm[j], perm[pos]
            order.extend(offsets[s] + perm)
    return np.array(order[:count])


@pytest.mark.parametrize(("p", "batch_size"), [(2.0, 1), (2.0, 3), (1.5, 4)])
def test_several_shards_fit_as_in_memory_on_the_rows_in_visit_order(p, batch_size):
    """Minibatches run across shard ends (batch sizes 3 and 4 divide none of the shards), epochs
    reshuffle the shard order, and the iterate carries over: PGS on the whole data in memory,
    fed the rows in the order the shards were visited, gives the same model."""
    X, y = _problem()
    n_iter = 3 * M // batch_size  # three epochs
    params = {
        "p": p,
        "batch_size": batch_size,
        "sigma": 1e-2,
        "t0": 5.0,
        "average_power": 1.0,
        "radius": None,
        "intercept_scaling": 1.0,
        "random_state": 7,
    }
    sharded = _fitted(PGSClassifier(n_iter=n_iter, **params), X, y, SHARDS)

    data = as_kernel_data(X)
    state = PGSState(
        data,
        np.where(y == 1, 1.0, -1.0),
        loss=LOSSES["logistic"],
        p=p,
        sigma=1e-2,
        radius=np.inf,
        fit_intercept=True,
        batch_size=batch_size,
        t0=5.0,
        epsilon=1.0,
        average=True,
        average_power=1.0,
        mean_nnz=mean_row_nnz(data),
    )
    state.run(_visit_order(SHARDS, 7, n_iter * batch_size))
    reference = state.average()
    np.testing.assert_allclose(sharded.coef_[0], reference[:-1], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(sharded.intercept_[0], reference[-1], rtol=1e-12, atol=1e-15)


def _sampler_order(shard_rows, window, batch_size, counts, seed=7):
    """The rows an InterleavingSampler draws, read back through a matrix whose row i is the
    indicator of column i, in calls of ``counts`` samples each."""
    m = sum(shard_rows)
    sharded = ShardedMatrix.from_arrays(sp.identity(m, format="csr"), np.zeros(m), shard_rows, window=window)
    rows = TrainingShards(sharded, lambda y: y[None, :], 1)
    sampler = rows.sampler(batch_size, "permutation", np.random.default_rng(seed))
    assert isinstance(sampler, InterleavingSampler)
    order = []
    for count in counts:
        for segment in sampler.draw(count):
            indptr, indices = segment.data.indptr, segment.data.indices
            order.extend(int(indices[indptr[r]]) for r in segment.rows)
    return np.array(order)


@pytest.mark.parametrize(("window", "batch_size"), [(2, 1), (3, 3), (8, 4)])
def test_a_window_of_shards_is_drawn_row_by_row_interleaved(monkeypatch, window, batch_size):
    """With several shards open, the draws do not depend on how they are asked for, each epoch
    is nearly a permutation of all rows (a chunk may straddle two epochs), rows of different
    shards alternate, and the fit from the shards is PGS in memory on the rows in that order."""
    monkeypatch.setattr("solver.sampling.CHUNK_ROWS", 12)  # chunks shorter than the shards
    X, y = _problem()
    n_iter = 3 * M // batch_size
    order = _sampler_order(SHARDS, window, batch_size, [n_iter * batch_size])
    chunked = _sampler_order(SHARDS, window, batch_size, [batch_size, 5 * batch_size] * 10)
    np.testing.assert_array_equal(chunked, order[: len(chunked)])  # 60 minibatches of 240 rows
    chunk = 12 // batch_size * batch_size
    assert len(set(order[: M - chunk].tolist())) == M - chunk
    shard_of = np.searchsorted(np.cumsum(SHARDS), order[:M], "right")
    assert np.count_nonzero(np.diff(shard_of)) > 2 * len([r for r in SHARDS if r])

    sharded = PGSClassifier(
        n_iter=n_iter,
        p=2.0,
        batch_size=batch_size,
        sigma=1e-2,
        t0=5.0,
        average_power=1.0,
        radius=None,
        intercept_scaling=1.0,
        random_state=7,
    ).fit(ShardedMatrix.from_arrays(X, y, SHARDS, window=window), None)
    data = as_kernel_data(X)
    state = PGSState(
        data,
        np.where(y == 1, 1.0, -1.0),
        loss=LOSSES["logistic"],
        p=2.0,
        sigma=1e-2,
        radius=np.inf,
        fit_intercept=True,
        batch_size=batch_size,
        t0=5.0,
        epsilon=1.0,
        average=True,
        average_power=1.0,
        mean_nnz=mean_row_nnz(data),
    )
    state.run(order)
    reference = state.average()
    np.testing.assert_allclose(sharded.coef_[0], reference[:-1], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(sharded.intercept_[0], reference[-1], rtol=1e-12, atol=1e-15)


def test_a_window_mixes_the_classes_of_a_data_set_stored_sorted_by_label(monkeypatch):
    monkeypatch.setattr("solver.sampling.CHUNK_ROWS", M)
    _, y = _problem()
    y = np.sort(y)
    shards = [20, 20, 20, 20]  # each shard of one class but the boundary's
    order = _sampler_order(shards, 4, 1, [M])
    # A window of every shard and a chunk of every row: the first epoch is a permutation of all
    # rows, and both classes come in every quarter of it, as in memory.
    assert sorted(order.tolist()) == list(range(M))
    for quarter in np.split(order, 4):
        assert len(set(y[quarter])) == 2


def _recording(X, y, shard_rows, window=1):
    """A ShardedMatrix that records the shards it opens and tracks which are still referenced
    (without a garbage collection: a memory-mapped shard must be unmapped as soon as the solver
    moves on, by reference counting alone)."""
    bounds = np.concatenate([[0], np.cumsum(shard_rows)])
    opened: list[int] = []
    alive: dict[int, weakref.ref] = {}
    most = [0]

    def open_shard(i):
        most[0] = max(most[0], sum(ref() is not None for ref in alive.values()))
        part = X[bounds[i] : bounds[i + 1]].copy()  # its own arrays, to watch them go away
        alive[len(opened)] = weakref.ref(part.data)
        opened.append(i)
        return part, y[bounds[i] : bounds[i + 1]]

    return ShardedMatrix(X.shape[1], shard_rows, open_shard, window), opened, most


@pytest.mark.parametrize("sampling", ["permutation", "replacement"])
def test_every_epoch_visits_each_shard_once_with_at_most_two_resident(sampling):
    X, y = _problem()
    sharded, opened, most = _recording(X, y, SHARDS)
    PGSClassifier(n_iter=4 * M, batch_size=1, sampling=sampling, random_state=1).fit(sharded, None)
    # The visits after the passes of the fit's set-up (statistics, first block, F(0)).
    filled = [i for i, r in enumerate(SHARDS) if r]
    visits = opened[-4 * len(filled) :]
    for epoch in range(4):
        assert sorted(visits[epoch * 4 : (epoch + 1) * 4]) == filled
    assert len({tuple(visits[e * 4 : (e + 1) * 4]) for e in range(4)}) > 1  # the order is drawn
    assert most[0] <= 2


def test_evaluation_streams_over_sharded_eval_sets():
    X, y = _problem()
    eval_sharded = ShardedMatrix.from_arrays(X, y, SHARDS)
    memory = PGSClassifier(random_state=0, n_iter=200).fit(X, y, eval_set=(X, y))
    sharded = PGSClassifier(random_state=0, n_iter=200).fit(X, y, eval_set=eval_sharded)
    assert [p.test_score for p in sharded.trace_] == [p.test_score for p in memory.trace_]
    regressor = OGDRegressor(random_state=0, n_iter=200)
    Xr, yr = _problem("squared")
    a = regressor.fit(Xr, yr, eval_set=(Xr, yr)).trace_
    b = (
        OGDRegressor(random_state=0, n_iter=200)
        .fit(Xr, yr, eval_set=ShardedMatrix.from_arrays(Xr, yr, SHARDS))
        .trace_
    )
    np.testing.assert_allclose([p.test_score for p in b], [p.test_score for p in a], rtol=1e-12)


def test_a_classifier_learns_its_classes_from_every_shard():
    X, y = _problem()
    labels = np.where(y > 0, "spam", "ham")
    labels[-3:] = "eggs"  # a third class, only in the last shard
    clf = PGSClassifier(random_state=0, n_iter=300).fit(ShardedMatrix.from_arrays(X, labels, SHARDS), None)
    assert clf.classes_.tolist() == ["eggs", "ham", "spam"]
    assert clf.coef_.shape == (3, X.shape[1])
    assert set(clf.predict(X)) <= {"eggs", "ham", "spam"}


@pytest.mark.parametrize("window", [2, 3])
def test_a_window_of_shards_is_all_a_fit_holds_of_them(monkeypatch, window):
    # Chunks that straddle the turnover of the window (its shards run out together, as their
    # rows are drawn in proportion): the rows taken from the old shards are set aside before the
    # next shards open, so a fit never holds two windows at once.
    monkeypatch.setattr("solver.sampling.CHUNK_ROWS", 7)
    X, y = _problem()
    shard_rows = [10] * (M // 10)
    sharded, opened, most = _recording(X, y, shard_rows, window)
    PGSClassifier(n_iter=3 * M, random_state=1).fit(sharded, None)
    assert len(opened) > 3 * len(shard_rows)  # three epochs' turnovers, past the set-up passes
    # At each opening: the other shards of the window, and none of the last window's.
    assert most[0] <= window - 1


@pytest.mark.parametrize("name", sorted(n for n, spec in SOLVERS.items() if not spec.streams))
def test_a_solver_that_does_not_stream_refuses_shards_and_names_those_that_do(name):
    X, y = _problem()
    est = SOLVERS[name].classifier()
    with pytest.raises(ValueError, match="ogd, pgs, sgd, smidas, truncgrad"):
        est.fit(ShardedMatrix.from_arrays(X, y, SHARDS), None)


def test_a_shard_with_bad_values_is_named():
    X, y = _problem()
    X = X.copy()
    X.data[-1] = np.nan
    with pytest.raises(ValueError, match="shard 4: Input X contains NaN"):
        PGSClassifier(n_iter=10).fit(ShardedMatrix.from_arrays(X, y, SHARDS), None)


def test_taken_rows_are_those_of_the_matrix_in_memory_across_shards():
    """TrainingShards.rows_at (the trace's objective sample of a sharded fit) reads the rows at
    global indices from the shards holding them, empty shards and shard ends included."""
    X, y = _problem()
    rows = TrainingShards(ShardedMatrix.from_arrays(X, y, SHARDS), lambda y: y[None, :] * 2.0, 1)
    picked = np.array([0, 12, 13, 41, 42, 48, 49, M - 1])
    X_taken, targets = rows.rows_at(picked)
    assert (X_taken != X[picked]).nnz == 0
    np.testing.assert_array_equal(targets, 2.0 * y[picked][None, :])


@pytest.mark.parametrize(("cls", "params"), STREAMING[:2])
def test_a_sampled_objective_is_the_same_sharded_or_in_memory(cls, params):
    X, y = _problem()
    make = lambda: cls(random_state=4, n_iter=150, objective_rows=17, **params)  # noqa: E731
    memory = _fitted(make(), X, y, trace=True)
    sharded = _fitted(make(), X, y, [M], trace=True)
    np.testing.assert_allclose(
        [p.objective for p in sharded.trace_], [p.objective for p in memory.trace_], rtol=1e-12
    )


def test_an_untraced_fit_reads_no_objective_sample(monkeypatch):
    """The sample is read at the first checkpoint: a fit without a trace never reads it."""

    def refuse(self, rows):
        raise AssertionError("an untraced fit read the objective's sample")

    monkeypatch.setattr(TrainingShards, "rows_at", refuse)
    X, y = _problem()
    PGSClassifier(random_state=4, n_iter=150, objective_rows=17).fit(
        ShardedMatrix.from_arrays(X, y, SHARDS), None
    )
    with pytest.raises(AssertionError, match="read the objective's sample"):
        PGSClassifier(random_state=4, n_iter=150, objective_rows=17).fit(
            ShardedMatrix.from_arrays(X, y, SHARDS), None, trace=True
        )
