"""solver.ShardedMatrix: the rows of a data set in shards, opened on demand and checked."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from solver import SOLVERS, ShardedMatrix


def _data(m=10, n=4, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(m, n, density=0.5, format="csr", random_state=seed)
    return X, rng.integers(0, 2, size=m).astype(np.float64)


def test_properties_follow_the_declared_shards():
    X, y = _data()
    sharded = ShardedMatrix.from_arrays(X, y, [4, 0, 6])
    assert sharded.n_samples == 10
    assert sharded.n_features == 4
    assert sharded.n_shards == 3
    assert sharded.shape == (10, 4)
    assert sharded.shard_rows == (4, 0, 6)
    assert "n_shards=3" in repr(sharded)


def test_shards_concatenate_to_the_matrix_and_its_labels():
    X, y = _data()
    sharded = ShardedMatrix.from_arrays(X, y, [3, 3, 4])
    parts = list(sharded.shards())
    assert [part.shape[0] for part, _ in parts] == [3, 3, 4]
    np.testing.assert_array_equal(sp.vstack([p for p, _ in parts]).toarray(), X.toarray())
    np.testing.assert_array_equal(np.concatenate(list(sharded.labels())), y)


def test_open_is_lazy_and_opens_only_the_shard_asked_for():
    X, y = _data()
    opened = []

    def open_shard(i):
        opened.append(i)
        return X[5 * i : 5 * i + 5], y[5 * i : 5 * i + 5]

    sharded = ShardedMatrix(4, [5, 5], open_shard)
    assert opened == []
    sharded.open(1)
    assert opened == [1]


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        (lambda X, y: (X.toarray(), y), "not a CSR matrix"),
        (lambda X, y: (X.tocsc(), y), "not a CSR matrix"),
        (lambda X, y: (X[:4], y[:4]), "has shape"),
        (lambda X, y: (X, y[:4]), "labels of shape"),
    ],
)
def test_open_refuses_a_shard_unlike_its_declaration(returned, message):
    X, y = _data(m=5)
    sharded = ShardedMatrix(4, [5], lambda i: returned(X, y))
    with pytest.raises(ValueError, match=message):
        sharded.open(0)


def test_open_refuses_a_shard_index_out_of_range():
    X, y = _data()
    with pytest.raises(IndexError, match="2 shards"):
        ShardedMatrix.from_arrays(X, y, [5, 5]).open(2)


@pytest.mark.parametrize(
    ("n_features", "rows", "open_shard", "error"),
    [
        (0, [1], lambda i: None, ValueError),
        (2.5, [1], lambda i: None, ValueError),
        (3, [-1], lambda i: None, ValueError),
        (3, [1.5], lambda i: None, ValueError),
        (3, [1], "not callable", TypeError),
    ],
)
def test_constructor_refuses_bad_declarations(n_features, rows, open_shard, error):
    with pytest.raises(error):
        ShardedMatrix(n_features, rows, open_shard)


def test_from_arrays_refuses_rows_that_do_not_add_up():
    X, y = _data()
    with pytest.raises(ValueError, match="sum to 9"):
        ShardedMatrix.from_arrays(X, y, [4, 5])


def test_the_catalogue_says_which_solvers_stream():
    streaming = {name for name, spec in SOLVERS.items() if spec.streams}
    assert streaming == {"pgs", "sgd", "ogd", "smidas", "truncgrad"}
    assert SOLVERS["pgs"].describe()["streams"] is True
    assert SOLVERS["lbfgs"].describe()["streams"] is False
