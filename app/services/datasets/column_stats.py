"""Per-column statistics of a data set's rows, computed a shard at a time and merged.

What a job's default preprocessing learns from its training rows is a function of these: the
mean of each numeric column's present values (imputation), their variance after imputation
(standardisation), their largest absolute value (max-abs scaling) and the categories of each text
column (one-hot encoding). The shard writer computes them as it writes (they are stored with the
data set: :mod:`app.services.datasets.dataset_stats`), and a job computes those of its training rows
in one pass over their shards when they are not the whole data set.

A numeric column's statistics count every row: an implicit zero of a sparse row is a value, a NaN
(a missing cell) is not. Only the columns with a stored value in some row are kept (indices and
arrays, never a dense array of a 2^24-feature svmlight set's width); every other column is all
zeros. Two parts merge exactly: counts add, minima and maxima combine, and the means and the sums
of squared deviations (M2) merge with Chan, Golub and LeVeque's pairwise formula, which stays
accurate where a sum of squares would cancel. A text column keeps its categories with their
counts, at most :data:`MAX_CATEGORIES`: past that the most frequent are kept and the column is
marked ``truncated`` (a job then reads its categories from the rows themselves). The labels keep
their distinct values with their counts (:class:`LabelCounts`) while there are at most
:data:`MAX_LABELS` of them: what a request needs to know of a classifier's classes (the rows of its
smallest class) without reading the rows.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import scipy.sparse as sp
from numba import njit

# The categories a text column keeps with their counts (the most frequent, when it has more).
MAX_CATEGORIES = 1000
# The distinct labels counted (as many as a classifier may have classes): past that the labels
# are a regression's, whose counts would be as long as the data set and say nothing.
MAX_LABELS = 1000
# A shard's columns are found by a dense count over its index range while that range is at most
# this many times its stored values (plus a constant); a wider one (a few values among 2^24
# features) sorts its indices instead.
_DENSE_RANGE_FACTOR = 4
_DENSE_RANGE_SLACK = 1 << 16
_NUMERIC = ("columns", "count", "missing", "mean", "m2", "min", "max")


@dataclass(frozen=True)
class CategoryCounts:
    """A text column's categories (sorted) and how many rows have each."""

    values: np.ndarray
    counts: np.ndarray
    truncated: bool = False

    @classmethod
    def of(cls, values: np.ndarray) -> CategoryCounts:
        uniq, counts = np.unique(np.asarray(values, dtype=str), return_counts=True)
        return cls(uniq, counts.astype(np.int64)).capped()

    def merge(self, other: CategoryCounts) -> CategoryCounts:
        values = np.concatenate([self.values, other.values])
        uniq, inverse = np.unique(values, return_inverse=True)
        weights = np.concatenate([self.counts, other.counts])
        counts = np.bincount(inverse, weights=weights, minlength=len(uniq))
        return CategoryCounts(uniq, counts.astype(np.int64), self.truncated or other.truncated).capped()

    def capped(self, limit: int | None = None) -> CategoryCounts:
        """At most ``limit`` (:data:`MAX_CATEGORIES`) categories: the most frequent."""
        limit = MAX_CATEGORIES if limit is None else limit
        if len(self.values) <= limit:
            return self
        # The most frequent, ties broken by the value; kept in sorted order.
        order = np.lexsort((self.values, -self.counts))[:limit]
        keep = np.sort(order)
        return CategoryCounts(self.values[keep], self.counts[keep], True)


@dataclass(frozen=True)
class LabelCounts:
    """The distinct labels (sorted, in the labels' dtype) and how many rows have each; both
    None once more than :data:`MAX_LABELS` were seen."""

    values: np.ndarray | None
    counts: np.ndarray | None

    @classmethod
    def of(cls, y: np.ndarray) -> LabelCounts:
        values, counts = np.unique(np.asarray(y), return_counts=True)
        return cls(values, counts.astype(np.int64)).capped()

    def merge(self, other: LabelCounts) -> LabelCounts:
        if self.values is None or other.values is None or self.counts is None or other.counts is None:
            return LabelCounts(None, None)
        values, inverse = np.unique(np.concatenate([self.values, other.values]), return_inverse=True)
        weights = np.concatenate([self.counts, other.counts])
        counts = np.bincount(inverse, weights=weights, minlength=len(values))
        return LabelCounts(values, counts.astype(np.int64)).capped()

    def capped(self) -> LabelCounts:
        return self if self.values is None or len(self.values) <= MAX_LABELS else LabelCounts(None, None)

    @classmethod
    def stored_in(cls, npz: Any) -> LabelCounts | None:
        """The counts in an open ``ColumnStats.to_bytes`` file, reading none of its other
        arrays; None when it has none (stored before labels were counted)."""
        if "labels.values" in npz:
            return cls(npz["labels.values"], npz["labels.counts"])
        return cls(None, None) if "labels.more" in npz else None


@dataclass(frozen=True)
class ColumnStats:
    """Statistics of ``n_rows`` rows. Per numeric column listed in ``columns`` (sorted indices):
    ``count`` present values (implicit zeros included), ``missing`` NaN cells, ``mean`` and
    ``m2`` (sum of squared deviations) of the present values, their ``min`` and ``max`` (NaN
    without any). Per text column of the data set, in its order: :class:`CategoryCounts`. The
    labels' :class:`LabelCounts`, None when not counted (rows given without their labels, or
    statistics stored before labels were counted)."""

    n_rows: int
    columns: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    count: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    missing: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    mean: np.ndarray = field(default_factory=lambda: np.empty(0))
    m2: np.ndarray = field(default_factory=lambda: np.empty(0))
    min: np.ndarray = field(default_factory=lambda: np.empty(0))
    max: np.ndarray = field(default_factory=lambda: np.empty(0))
    text: tuple[CategoryCounts, ...] = ()
    labels: LabelCounts | None = None

    # -- computing -------------------------------------------------------------------------

    @classmethod
    def of_rows(
        cls, X: sp.csr_matrix, text: np.ndarray | None = None, y: np.ndarray | None = None
    ) -> ColumnStats:
        """The statistics of CSR rows ``X`` (NaN: missing), their text values (rows x k) and
        their labels ``y``."""
        return cls.of_values(X.shape[0], X.indices, X.data, text, y)

    @classmethod
    def of_values(
        cls,
        n: int,
        indices: np.ndarray,
        data: np.ndarray,
        text: np.ndarray | None = None,
        y: np.ndarray | None = None,
    ) -> ColumnStats:
        """The statistics of ``n`` rows whose stored values are ``data`` in columns ``indices``
        (a CSR matrix's arrays: the row pointers do not matter), and of their labels ``y``."""
        columns, inverse = _columns_of(np.asarray(indices))
        data = np.asarray(data, dtype=np.float64)
        count, missing, mean, m2, low, high = _moments(inverse, data, n, len(columns))
        tallies = () if text is None else tuple(CategoryCounts.of(text[:, j]) for j in range(text.shape[1]))
        labels = None if y is None else LabelCounts.of(y)
        return cls(n, columns, count, missing, mean, m2, low, high, tallies, labels)

    @classmethod
    def of_parts(cls, parts: Iterable[ColumnStats]) -> ColumnStats:
        """The statistics of the parts' rows together (none: no rows)."""
        total = cls(0)
        for part in parts:
            total = total.merge(part)
        return total

    def merge(self, other: ColumnStats) -> ColumnStats:
        """The statistics of both parts' rows."""
        if not self.n_rows and not self.columns.size:
            return other
        columns = _union(self.columns, other.columns)
        a, b = self.on(columns), other.on(columns)
        n = a.count + b.count
        delta = b.mean - a.mean
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.where(n > 0, b.count / n, 0.0)
            mean = a.mean + delta * share
            m2 = a.m2 + b.m2 + np.where(n > 0, delta * delta * a.count * share, 0.0)
        # A part of no rows (the start of a merge) may list no text columns.
        if self.text and other.text:
            text = tuple(x.merge(y) for x, y in zip(self.text, other.text, strict=True))
        else:
            text = self.text or other.text
        labels = None if self.labels is None or other.labels is None else self.labels.merge(other.labels)
        return ColumnStats(
            self.n_rows + other.n_rows,
            columns,
            n,
            a.missing + b.missing,
            mean,
            m2,
            np.fmin(a.min, b.min),
            np.fmax(a.max, b.max),
            text,
            labels,
        )

    def on(self, columns: np.ndarray) -> ColumnStats:
        """These statistics listed for ``columns`` (sorted, a superset of ``self.columns``): a
        column without a stored value is ``n_rows`` zeros."""
        if np.array_equal(columns, self.columns):
            return self
        at = np.searchsorted(columns, self.columns)
        zero = 0.0 if self.n_rows else np.nan

        def spread(values: np.ndarray, fill: float, dtype: type) -> np.ndarray:
            out: np.ndarray = np.full(len(columns), fill, dtype=dtype)
            out[at] = values
            return out

        return ColumnStats(
            self.n_rows,
            columns,
            spread(self.count, self.n_rows, np.int64),
            spread(self.missing, 0, np.int64),
            spread(self.mean, 0.0, np.float64),
            spread(self.m2, 0.0, np.float64),
            spread(self.min, zero, np.float64),
            spread(self.max, zero, np.float64),
            self.text,
            self.labels,
        )

    def shifted(self, delta: int) -> ColumnStats:
        """The same statistics with every column index moved by ``delta`` (an svmlight file
        found to be 0-based after its first blocks were read as 1-based)."""
        return replace(self, columns=self.columns + delta)

    # -- reading ---------------------------------------------------------------------------

    @property
    def max_abs(self) -> np.ndarray:
        """The largest absolute present value of each listed column (NaN without any)."""
        return np.fmax(np.abs(self.min), np.abs(self.max))

    def dense(self, n_features: int) -> ColumnStats:
        """The statistics of every column ``0..n_features - 1`` (for a width that fits in memory
        as a few arrays)."""
        return self.on(np.arange(n_features, dtype=np.int64))

    # -- storing ---------------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        """An .npz of plain arrays (read back with ``allow_pickle=False``)."""
        arrays = {name: getattr(self, name) for name in _NUMERIC}
        arrays["n_rows"] = np.asarray(self.n_rows, dtype=np.int64)
        arrays["text_truncated"] = np.asarray([t.truncated for t in self.text], dtype=bool)
        for k, tally in enumerate(self.text):
            arrays[f"text.{k}.values"] = np.asarray(tally.values, dtype=str)
            arrays[f"text.{k}.counts"] = tally.counts
        if self.labels is not None and self.labels.values is not None:
            arrays["labels.values"], arrays["labels.counts"] = self.labels.values, self.labels.counts
        elif self.labels is not None:  # counted, more than MAX_LABELS
            arrays["labels.more"] = np.asarray(True)
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, body: bytes) -> ColumnStats:
        with np.load(io.BytesIO(body), allow_pickle=False) as f:
            truncated = f["text_truncated"]
            text = tuple(
                CategoryCounts(f[f"text.{k}.values"], f[f"text.{k}.counts"], bool(truncated[k]))
                for k in range(len(truncated))
            )
            labels = LabelCounts.stored_in(f)
            return cls(int(f["n_rows"]), text=text, labels=labels, **{name: f[name] for name in _NUMERIC})


@njit(cache=True, nogil=True)
def _moments(
    inverse: np.ndarray, data: np.ndarray, n: int, k: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(count, missing, mean, m2, min, max) of ``k`` columns over ``n`` rows whose stored values
    are ``data`` in the columns ``inverse`` (0..k-1), in two passes: the means, then the squared
    deviations from them (no sum of squares to cancel)."""
    stored = np.zeros(k, np.int64)
    missing = np.zeros(k, np.int64)
    total = np.zeros(k)
    low = np.full(k, np.inf)
    high = np.full(k, -np.inf)
    for p in range(data.size):
        c, v = inverse[p], data[p]
        stored[c] += 1
        if np.isnan(v):
            missing[c] += 1
            continue
        total[c] += v
        low[c] = min(low[c], v)
        high[c] = max(high[c], v)
    count = n - missing
    mean = np.zeros(k)
    for c in range(k):
        if count[c] == 0:
            low[c], high[c] = np.nan, np.nan
            continue
        mean[c] = total[c] / count[c]
        if stored[c] < n:  # implicit zeros
            low[c], high[c] = min(low[c], 0.0), max(high[c], 0.0)
    m2 = np.zeros(k)
    for p in range(data.size):
        v = data[p]
        if not np.isnan(v):
            d = v - mean[inverse[p]]
            m2[inverse[p]] += d * d
    for c in range(k):
        # Each implicit zero deviates from the mean by -mean.
        m2[c] += (n - stored[c]) * mean[c] * mean[c]
    return count, missing, mean, m2, low, high


def warm_up() -> None:
    """Compile (or load from the Numba cache) the kernel, as the parse forkserver does before
    forking its children (app/services/datasets/parse_preload.py)."""
    ColumnStats.of_values(2, np.array([0, 1, 1], np.int32), np.array([1.0, np.nan, 2.0]))


def _union(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The sorted union of two sorted index arrays (``np.union1d`` hashes: several times slower
    on the 10^5 columns of a wide svmlight set)."""
    if np.array_equal(a, b):
        return a
    both = np.sort(np.concatenate([a, b]))
    return both[np.concatenate([[True], both[1:] != both[:-1]])].astype(np.int64)


def _columns_of(indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the sorted distinct column indices, each stored value's position among them)."""
    if indices.size == 0:
        return np.empty(0, np.int64), np.empty(0, np.intp)
    width = int(indices.max()) + 1
    if width > _DENSE_RANGE_FACTOR * indices.size + _DENSE_RANGE_SLACK:
        columns, inverse = np.unique(indices, return_inverse=True)
        return columns.astype(np.int64), inverse.reshape(-1)
    seen = np.bincount(indices, minlength=width) > 0
    position = np.cumsum(seen) - 1
    return np.flatnonzero(seen).astype(np.int64), position[indices]


if __name__ == "__main__":
    warm_up()
