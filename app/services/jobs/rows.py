"""Which rows of its stored data sets a job trains and evaluates on, read a shard at a time.

A job's rows are a :class:`RowSelection`: a data set read through :mod:`app.services.datasets.shards` and,
per shard, a boolean mask of the rows taken (the evaluation split, a study's subsample). A
streaming solver gets it as a ``solver.ShardedMatrix`` whose shards are opened, selected and
encoded one at a time; the other solvers get the selected rows as one in-memory CSR matrix.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from app.services.datasets.column_stats import ColumnStats
from app.services.datasets.shards import DatasetShards
from app.services.datasets.splits import ShardSplit, widen
from solver import ShardedMatrix

Mask = Callable[[int], np.ndarray | None]
Transform = Callable[[sp.csr_matrix, np.ndarray | None], Any]


def _all_rows(_: int) -> None:
    return None


@dataclass(frozen=True)
class RowSelection:
    """Rows of ``data``: shard ``i``'s rows where ``mask(i)`` is true (None: all of them), at
    ``n_features`` columns (a test set may be narrower than the training set)."""

    data: DatasetShards
    n_features: int
    mask: Mask = _all_rows

    @property
    def whole(self) -> bool:
        """Every row of the data set (its stored statistics are this selection's)."""
        return self.mask is _all_rows

    @property
    def shard_rows(self) -> list[int]:
        return [
            r if (m := self.mask(i)) is None else int(m.sum()) for i, r in enumerate(self.data.shard_rows)
        ]

    @property
    def n_samples(self) -> int:
        return sum(self.shard_rows)

    @property
    def largest_shard_bytes(self) -> int:
        """The stored bytes of the largest shard (all its rows, selected or not)."""
        return max(self.data.manifest.shard_nbytes, default=0)

    def shard(self, i: int) -> tuple[sp.csr_matrix, np.ndarray]:
        X, y = self.data.shard(i)
        m = self.mask(i)
        if m is not None:
            X, y = X[m], y[m]
        return widen(X, self.n_features), y

    def labels(self) -> Iterator[np.ndarray]:
        for i in range(self.data.manifest.n_shards):
            yield self.shard(i)[1]

    def shard_text(self, i: int) -> np.ndarray | None:
        """Shard ``i``'s selected rows' text column values (rows x k), None without any."""
        text, m = self.data.text(i), self.mask(i)
        return text if text is None or m is None else text[m]

    def text(self) -> np.ndarray | None:
        """The selected rows' text column values (rows x k, in memory), None without any."""
        if not self.data.manifest.text_columns:
            return None
        return np.concatenate([np.array(self.shard_text(i)) for i in range(self.data.manifest.n_shards)])

    def column_stats(self) -> ColumnStats:
        """The selected rows' column statistics, in one pass over their shards."""
        shards = range(self.data.manifest.n_shards)
        return ColumnStats.of_parts(ColumnStats.of_rows(self.shard(i)[0], self.shard_text(i)) for i in shards)

    def categories(self, k: int) -> np.ndarray:
        """The sorted distinct values of the selected rows' ``k``-th text column, all of them."""
        seen = np.empty(0, dtype=str)
        for i in range(self.data.manifest.n_shards):
            text = self.shard_text(i)
            if text is not None:
                seen = np.union1d(seen, np.asarray(text[:, k], dtype=str))
        return seen

    def matrix(
        self,
        encode: Callable[[np.ndarray], np.ndarray],
        transform: Transform | None = None,
        width: int | None = None,
        window: int = 1,
    ) -> ShardedMatrix:
        """The rows as a ShardedMatrix whose labels are ``encode(y)`` (class codes, targets);
        with ``transform(X, text)`` (a fitted preprocessing) each shard's rows go through it,
        into ``width`` columns. A sampler interleaves ``window`` shards."""

        def open_shard(i: int) -> tuple[sp.csr_matrix, np.ndarray]:
            X, y = self.shard(i)
            if transform is not None:
                X = sp.csr_matrix(transform(X, self.shard_text(i)))
            return X, encode(y)

        return ShardedMatrix(width or self.n_features, self.shard_rows, open_shard, window)

    def in_memory(self) -> tuple[sp.csr_matrix, np.ndarray]:
        """The rows as one CSR matrix and their labels, copied out of the maps in one pass: the
        stack reads every mapped shard into the result (a copy of each shard first would read
        and write the data twice)."""
        pieces = [self.shard(i) for i in range(self.data.manifest.n_shards)]
        if not pieces:
            return sp.csr_matrix((0, self.n_features)), np.empty(0)
        if len(pieces) == 1:  # a stack of one block would keep the maps
            X, y = pieces[0]
            return sp.csr_matrix(X, copy=True), np.array(y)
        return (sp.vstack([X for X, _ in pieces], format="csr"), np.concatenate([y for _, y in pieces]))

    def subsample(self, rows: np.ndarray) -> RowSelection:
        """The rows at positions ``rows`` (sorted) of this selection."""
        bounds = np.concatenate([[0], np.cumsum(self.shard_rows)])
        within = [rows[(rows >= lo) & (rows < hi)] - lo for lo, hi in zip(bounds, bounds[1:], strict=False)]
        outer = self.mask

        def mask(i: int) -> np.ndarray:
            m = outer(i)
            positions = np.arange(self.data.shard_rows[i]) if m is None else np.flatnonzero(m)
            taken = np.zeros(self.data.shard_rows[i], dtype=bool)
            taken[positions[within[i]]] = True
            return taken

        return RowSelection(self.data, self.n_features, mask)


def split(
    data: DatasetShards, n_features: int, fraction: float, seed: int
) -> tuple[RowSelection, RowSelection]:
    """(training rows, evaluation rows) of a seeded ``fraction`` split (:class:`ShardSplit`)."""
    shard_split = ShardSplit(data.shard_rows, fraction, seed)

    def train(i: int) -> np.ndarray:
        return ~shard_split.held_out_mask(i)

    return (RowSelection(data, n_features, train), RowSelection(data, n_features, shard_split.held_out_mask))


def distinct_labels(rows: RowSelection) -> np.ndarray:
    """The sorted distinct labels of the rows, a shard at a time."""
    seen: np.ndarray | None = None
    for y in rows.labels():
        u = np.unique(y)
        seen = u if seen is None else np.union1d(seen, u)
    return np.empty(0) if seen is None else seen


def codes_of(classes: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The position of each label in the sorted ``classes``; -1 for a label not among them
    (an evaluation label the training rows never had: no prediction equals it)."""
    if len(classes) == 0:
        return np.full(len(y), -1)
    pos = np.clip(np.searchsorted(classes, y), 0, len(classes) - 1)
    return np.where(classes[pos] == y, pos, -1)


def evaluate(
    predict: Callable[[sp.csr_matrix], np.ndarray],
    rows: ShardedMatrix,
    classification: bool,
    sample_weight: np.ndarray | None = None,
) -> float:
    """Accuracy (classification: the labels are class codes) or RMSE of ``predict`` on the
    rows, a shard at a time; weighted by ``sample_weight`` (the rows' weights, in order) if given."""
    total, n = 0.0, 0.0
    start = 0
    for X, y in rows.shards():
        if X.shape[0] == 0:
            continue
        predicted = predict(X)
        per_row = (predicted == y).astype(np.float64) if classification else (predicted - y) ** 2
        if sample_weight is None:
            total += float(np.sum(per_row))
            n += X.shape[0]
        else:
            weights = sample_weight[start : start + X.shape[0]]
            total += float(np.dot(weights, per_row))
            n += float(np.sum(weights))
        start += X.shape[0]
    mean = total / n if n else float("nan")
    return mean if classification else float(np.sqrt(mean))
