"""A data set's column statistics as the API shows them: a page of columns, each with its name,
kind, counts, moments and (text) most frequent values.

A CSV, Parquet or Arrow data set lists every column in order; an svmlight data set (up to 2^24
features, most of them never set) only the columns with a value in some row."""

from __future__ import annotations

import logging
import math
from typing import Any

import numpy as np

from app.core.storage.base import Store
from app.db.tables import Dataset
from app.services.datasets.column_stats import CategoryCounts, ColumnStats
from app.services.datasets.dataset_stats import stored_dataset_stats
from app.services.datasets.shards import manifest_key

log = logging.getLogger(__name__)

TOP_CATEGORIES = 10


class StatsPending(Exception):
    """The data set was stored before column statistics were: the background pass that computes
    them (:func:`app.services.datasets.dataset_stats.backfill_dataset_stats`) has not reached it."""


def column_page(store: Store, dataset: Dataset, offset: int, limit: int) -> dict[str, Any] | None:
    """Columns ``offset .. offset + limit - 1`` of the listed ones (ColumnPage); None when the
    data set's files cannot be read; StatsPending while its statistics are still being computed.
    Never computes them here: a request must not read every row of a data set."""
    stats = stored_dataset_stats(store, dataset.file_name)
    if stats is None:
        try:
            with store.open(manifest_key(dataset.file_name)):
                pass
        except FileNotFoundError:
            log.warning("data set %d: its files are missing from the store", dataset.id)
            return None
        raise StatsPending(dataset.id)
    occurring = dataset.format == "svmlight"
    total = len(stats.columns) if occurring else dataset.n_features
    end = min(offset + limit, total)
    indices = stats.columns[offset:end] if occurring else np.arange(offset, max(end, offset))
    text = list(dataset.text_columns or [])
    names = dataset.feature_names or []
    items = []
    for j in (int(j) for j in indices):
        item = _text(stats, stats.text[text.index(j)]) if j in text else _numeric(stats, j)
        items.append({"index": j, "name": names[j] if j < len(names) else None, **item})
    return {
        "items": items,
        "total": total,
        "offset": offset,
        "limit": limit,
        "listed": "occurring" if occurring else "all",
    }


def _number(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def _numeric(stats: ColumnStats, j: int) -> dict[str, Any]:
    at = int(np.searchsorted(stats.columns, j))
    if at == len(stats.columns) or stats.columns[at] != j:  # no stored value: all zeros
        zero = 0.0 if stats.n_rows else None
        values = (stats.n_rows, 0, zero, zero, zero, zero, zero)
    else:
        count = int(stats.count[at])
        std = math.sqrt(stats.m2[at] / count) if count else math.nan
        values = (
            count,
            int(stats.missing[at]),
            _number(stats.mean[at]) if count else None,
            _number(std),
            _number(stats.min[at]),
            _number(stats.max[at]),
            _number(stats.max_abs[at]),
        )
    keys = ("count", "missing", "mean", "std", "min", "max", "max_abs")
    return {"kind": "numeric", **dict(zip(keys, values, strict=True)), **dict.fromkeys(_TEXT_ONLY)}


_TEXT_ONLY = ("distinct", "categories_truncated", "top_categories")


def _text(stats: ColumnStats, tally: CategoryCounts) -> dict[str, Any]:
    empty = tally.values == ""
    missing = int(tally.counts[empty].sum())
    order = np.lexsort((tally.values, -tally.counts))[:TOP_CATEGORIES]
    return {
        "kind": "text",
        "count": stats.n_rows - missing,
        "missing": missing,
        **dict.fromkeys(("mean", "std", "min", "max", "max_abs")),
        "distinct": len(tally.values),
        "categories_truncated": tally.truncated,
        "top_categories": [{"value": str(tally.values[i]), "count": int(tally.counts[i])} for i in order],
    }
