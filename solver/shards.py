"""A data set as shards of rows, opened one at a time: training data larger than memory.

``ShardedMatrix`` describes the rows of a data set cut into consecutive shards (the service stores
each as memory-mapped CSR arrays); ``open_shard(i)`` returns shard i's rows and labels on demand.
The estimators of the solvers that stream (their ``streams`` attribute: those whose step reads one
sample or minibatch at a time) accept it for ``fit`` and as an ``eval_set``. They keep a reference
to an opened shard only while they read it, so at most ``window`` shards (and one more while the
sampler moves on) are resident, and memory follows the shard size rather than the data set's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from numbers import Integral

import numpy as np
import scipy.sparse as sp

OpenShard = Callable[[int], tuple[sp.csr_matrix, np.ndarray]]


class ShardedMatrix:
    """The rows of a data set in shards, opened on demand.

    Parameters
    ----------
    n_features : int
        The columns of every shard.
    shard_rows : sequence of int
        The rows of each shard, in the data set's order.
    open_shard : callable
        ``open_shard(i)`` returns shard i as ``(X_i, y_i)``: a CSR matrix of shape
        ``(shard_rows[i], n_features)`` (memory-mapped arrays welcome) and its labels, shape
        ``(shard_rows[i],)``, already as the estimator needs them (float targets for a regressor,
        class labels or codes for a classifier). The caller drops its references when it moves on
        to the next shard.
    window : int, default=1
        How many shards a sampler keeps open at once, drawing from them in a random interleaving
        (``solver.sampling.ShardSampler``): the larger, the closer the draws are to uniform over
        all rows when the shards differ (rows stored sorted by label, say), at the memory of that
        many shards.
    """

    def __init__(self, n_features: int, shard_rows: Sequence[int], open_shard: OpenShard, window: int = 1):
        if not isinstance(n_features, Integral) or n_features < 1:
            raise ValueError(f"n_features must be a positive integer, got {n_features!r}")
        rows = list(shard_rows)
        if any(not isinstance(r, Integral) or r < 0 for r in rows):
            raise ValueError(f"shard_rows must be non-negative integers, got {rows[:10]!r}")
        if not callable(open_shard):
            raise TypeError("open_shard must be a callable open_shard(i) -> (X_i, y_i)")
        if not isinstance(window, Integral) or window < 1:
            raise ValueError(f"window must be a positive integer, got {window!r}")
        self._n_features: int = int(n_features)
        self._shard_rows: tuple[int, ...] = tuple(int(r) for r in rows)
        self._open_shard: OpenShard = open_shard
        self.window: int = int(window)

    @property
    def n_samples(self) -> int:
        return sum(self._shard_rows)

    @property
    def n_features(self) -> int:
        return self._n_features

    @property
    def n_shards(self) -> int:
        return len(self._shard_rows)

    @property
    def shape(self) -> tuple[int, int]:
        return self.n_samples, self._n_features

    @property
    def shard_rows(self) -> tuple[int, ...]:
        return self._shard_rows

    def __repr__(self) -> str:
        return (
            f"ShardedMatrix(n_samples={self.n_samples}, n_features={self.n_features}, "
            f"n_shards={self.n_shards}, window={self.window})"
        )

    def open(self, i: int) -> tuple[sp.csr_matrix, np.ndarray]:
        """Shard i as ``(X_i, y_i)``, checked against the declared shape.

        Raises ValueError when ``open_shard`` returns something else than a CSR matrix of
        ``shard_rows[i]`` rows and ``n_features`` columns with as many labels.
        """
        if not 0 <= i < self.n_shards:
            raise IndexError(f"shard {i} out of range: the matrix has {self.n_shards} shards")
        X, y = self._open_shard(i)
        expected = (self._shard_rows[i], self._n_features)
        if not sp.issparse(X) or X.format != "csr":
            raise ValueError(f"shard {i} is not a CSR matrix: got {type(X).__name__}")
        if X.shape != expected:
            raise ValueError(f"shard {i} has shape {X.shape}, expected {expected}")
        y = np.asarray(y)
        if y.shape != (expected[0],):
            raise ValueError(f"shard {i} has labels of shape {y.shape}, expected ({expected[0]},)")
        return X, y

    def shards(self) -> Iterator[tuple[sp.csr_matrix, np.ndarray]]:
        """Every shard in order, opened one at a time (the previous one is no longer referenced
        here when the next opens)."""
        for i in range(self.n_shards):
            yield self.open(i)

    def rows_at(self, rows: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
        """The rows at the sorted indices ``rows`` (over the whole data set) as one CSR matrix in
        memory, and their labels: each shard holding some of them is opened once, the others
        not at all."""
        bounds = np.concatenate([[0], np.cumsum(self._shard_rows, dtype=np.int64)])
        parts, labels = [], []
        for i in range(self.n_shards):
            lo, hi = np.searchsorted(rows, bounds[i : i + 2])
            if lo == hi:
                continue
            X, y = self.open(i)
            local = rows[lo:hi] - bounds[i]
            parts.append(X[local])
            labels.append(y[local])
        return sp.vstack(parts, format="csr"), np.concatenate(labels)

    def labels(self) -> Iterator[np.ndarray]:
        """Every shard's labels in order (the shard's rows are opened and dropped with them)."""
        for _, y in self.shards():
            yield y

    @classmethod
    def from_arrays(cls, X, y, shard_rows: Sequence[int], window: int = 1) -> ShardedMatrix:
        """Rows of an in-memory matrix and labels, cut into consecutive shards of ``shard_rows``
        rows (for tests and for splitting a data set that fits in memory)."""
        X = sp.csr_matrix(X)
        y = np.asarray(y)
        bounds = np.concatenate([[0], np.cumsum(shard_rows, dtype=np.int64)])
        if bounds[-1] != X.shape[0] or y.shape != (X.shape[0],):
            raise ValueError(
                f"shard_rows sum to {bounds[-1]}, X has {X.shape[0]} rows and y "
                f"{y.shape[0] if y.ndim else 0} labels"
            )

        def open_shard(i: int) -> tuple[sp.csr_matrix, np.ndarray]:
            return X[bounds[i] : bounds[i + 1]], y[bounds[i] : bounds[i + 1]]

        return cls(X.shape[1], shard_rows, open_shard, window)
