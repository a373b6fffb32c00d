"""A stored data set's column statistics (:mod:`app.services.datasets.column_stats`): those the
shard writer stored with it, or, for a data set stored before statistics were, computed in one
pass over its shards and stored for the next use.

That pass reads every row: a worker's job may make it (it reads the rows anyway), and so does
:func:`backfill_dataset_stats` in the background after the service starts, but a request never
does (:func:`stored_dataset_stats`): on a data set of many GB it would hold a request and a
thread of the API for minutes."""

from __future__ import annotations

import contextlib
import logging
from typing import IO

import numpy as np
from sqlalchemy import select

from app.core.storage.base import Store
from app.db.engine import SessionFactory
from app.db.tables import Dataset
from app.services.datasets.column_stats import ColumnStats, LabelCounts
from app.services.datasets.shards import DatasetShards, is_npz, manifest_key, open_dataset, stats_key

log = logging.getLogger(__name__)


def stats_of_shards(data: DatasetShards) -> ColumnStats:
    """The statistics of every row of ``data`` and its labels, a shard at a time."""

    def of_shard(i: int) -> ColumnStats:
        X, y = data.shard(i)
        return ColumnStats.of_rows(X, data.text(i), y)

    return ColumnStats.of_parts(of_shard(i) for i in range(data.manifest.n_shards))


def stored_dataset_stats(store: Store, key: str) -> ColumnStats | None:
    """The statistics stored with the data set under ``key``; None when it has none yet."""
    if is_npz(key):  # converted to shards, with their statistics, at the next start
        return None
    try:
        with store.open(stats_key(key)) as fh:
            return ColumnStats.from_bytes(fh.read())
    except FileNotFoundError:
        return None


def stored_label_counts(store: Store, key: str) -> LabelCounts | None:
    """The label counts stored with the data set under ``key``, read without the rest of its
    statistics (megabytes for a wide data set): what a request may read. None when none are
    stored."""
    if is_npz(key):
        return None
    try:
        with store.open(stats_key(key)) as fh, np.load(fh, allow_pickle=False) as npz:
            return LabelCounts.stored_in(npz)
    except FileNotFoundError:
        return None


def dataset_stats(store: Store, key: str) -> ColumnStats:
    """The statistics of the data set stored under ``key``, computed and stored first when it
    has none; FileNotFoundError without the data set."""
    if is_npz(key):
        return stats_of_shards(open_dataset(store, key))
    stats = stored_dataset_stats(store, key)
    if stats is not None:
        return stats
    stats = stats_of_shards(open_dataset(store, key))
    body = stats.to_bytes()

    def write(fh: IO[bytes]) -> None:
        fh.write(body)

    # Keys are write-once: a concurrent first use that stored them already stored the same.
    with contextlib.suppress(FileExistsError):
        store.write(stats_key(key), write)
        log.info("column statistics of %s computed and stored", key)
    try:
        with store.open(manifest_key(key)):
            pass
    except FileNotFoundError:  # deleted meanwhile: its statistics go too
        store.delete(stats_key(key))
        raise
    return stats


def backfill_dataset_stats(factory: SessionFactory, store: Store) -> int:
    """Compute and store the statistics of every data set stored without them, one at a time;
    returns how many. Run in the background at start-up: until it reaches a data set, GET shows
    that data set's columns as pending."""
    with factory() as s:
        keys = [key for key in s.scalars(select(Dataset.file_name)) if not is_npz(key)]
    done = 0
    for key in keys:
        try:
            if not _has_stats(store, key):
                dataset_stats(store, key)
                done += 1
        except FileNotFoundError:  # deleted meanwhile, or its files are missing (logged by GET)
            continue
    return done


def _has_stats(store: Store, key: str) -> bool:
    """Whether statistics are stored under ``key``, without reading them: a start-up looks at
    every data set, and a wide one's statistics take megabytes."""
    try:
        with store.open(stats_key(key)):
            return True
    except FileNotFoundError:
        return False
