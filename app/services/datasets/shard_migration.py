"""The one-off conversion of data sets stored as a single ``.npz`` into shards, run at start-up.

Each old data set ``datasets/<uuid>.npz`` is written as shards under ``datasets/<uuid>`` (a key
derived from the old one, so a conversion a crash interrupted is simply done again), then its row
is pointed at the shards, then the ``.npz`` is removed. Until its row is updated every reader
still takes the old key (:func:`app.services.datasets.shards.open_dataset` reads both forms). A data set a
running job or batch prediction reads now is left for the next start, so nothing in flight loses
its file. Converting a data set holds it in memory once: these are the data sets the previous
version could hold in memory whole.
"""

from __future__ import annotations

import logging

from sqlalchemy import or_, select

from app.core.storage.base import Store
from app.db.engine import SessionFactory, transaction
from app.db.tables import BatchPrediction, Dataset, Job, JobStatus
from app.services.datasets.shards import delete_dataset, is_npz, load_npz, write_dataset

log = logging.getLogger(__name__)


def _in_use(s: object, dataset_id: int) -> bool:
    jobs = select(Job.id).where(
        or_(Job.dataset_id == dataset_id, Job.test_dataset_id == dataset_id), Job.status == JobStatus.RUNNING
    )
    batches = select(BatchPrediction.id).where(
        BatchPrediction.dataset_id == dataset_id, BatchPrediction.status == JobStatus.RUNNING
    )
    return any(
        s.scalars(q.limit(1)).first() is not None  # type: ignore[attr-defined]
        for q in (jobs, batches)
    )


def convert_npz_datasets(factory: SessionFactory, store: Store, shard_bytes: int) -> int:
    """Convert every data set still in one ``.npz``; returns how many were converted."""
    with factory() as s:
        old = [(d.id, d.file_name) for d in s.scalars(select(Dataset)) if is_npz(d.file_name)]
    converted = 0
    for dataset_id, old_key in old:
        with factory() as s:
            if _in_use(s, dataset_id):
                log.info("data set %d is in use; it is converted to shards at the next start", dataset_id)
                continue
        try:
            X, y, text = load_npz(store, old_key)
        except FileNotFoundError:  # another API process converted it meanwhile
            continue
        new_key = old_key.removesuffix(".npz")
        manifest = write_dataset(store, new_key, X, y, text, shard_bytes=shard_bytes)
        with transaction(factory) as s:
            row = s.get(Dataset, dataset_id)
            if row is not None and row.file_name == old_key:
                row.file_name = new_key
                row.stored_bytes = manifest.nbytes
        if row is None:  # deleted meanwhile: so are its shards
            delete_dataset(store, new_key)
        store.delete(old_key)
        converted += 1
        log.info("data set %d converted to %d shard(s) under %s", dataset_id, manifest.n_shards, new_key)
    return converted
