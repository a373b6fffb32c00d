"""A stored data set's column statistics (:mod:`app.services.datasets.column_stats`): those the
shard writer stored with it, or, for a data set stored before statistics were, computed in one
pass over its shards on first use and stored for the next."""

from __future__ import annotations

import contextlib
import logging
from typing import IO

from app.core.storage.base import Store
from app.services.datasets.column_stats import ColumnStats
from app.services.datasets.shards import DatasetShards, is_npz, manifest_key, open_dataset, stats_key

log = logging.getLogger(__name__)


def stats_of_shards(data: DatasetShards) -> ColumnStats:
    """The statistics of every row of ``data``, a shard at a time."""
    return ColumnStats.of_parts(
        ColumnStats.of_rows(data.shard(i)[0], data.text(i)) for i in range(data.manifest.n_shards)
    )


def dataset_stats(store: Store, key: str) -> ColumnStats:
    """The statistics of the data set stored under ``key``; FileNotFoundError without it."""
    if is_npz(key):  # converted to shards, with their statistics, at the next start
        return stats_of_shards(open_dataset(store, key))
    try:
        with store.open(stats_key(key)) as fh:
            return ColumnStats.from_bytes(fh.read())
    except FileNotFoundError:
        pass
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
