"""The files a database snapshot's rows reference, as backup member names.

The rows are the source of truth: a data set's shards, a model's files and a batch prediction's
results are written before their row is committed and deleted after it is (app/api/routes), so
every key a committed row names existed when the row was read. A data set's row names a key
prefix; its manifest in the store lists the shard keys under it (and its column statistics'
key, which a data set stored before them may not have yet).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import Engine, create_engine, select

from app.backup.archive import STORE_PREFIX, UPLOADS_PREFIX
from app.core.storage.base import Store
from app.db.tables import BatchPrediction, Dataset, Model, Upload, UploadState
from app.services.datasets import shards
from app.services.model_registry.batch_predictions import result_keys


@dataclass
class References:
    store_keys: list[str] = field(default_factory=list)
    upload_ids: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    def names(self) -> list[str]:
        """Backup member names, in the order they are copied."""
        return [STORE_PREFIX + k for k in self.store_keys] + [upload_member(u) for u in self.upload_ids]


def upload_member(upload_id: str) -> str:
    return f"{UPLOADS_PREFIX}{upload_id}.bin"


def snapshot_engine(path: Path) -> Engine:
    return create_engine(f"sqlite:///{path}")


def _dataset_keys(store: Store, key: str) -> list[str]:
    """A data set's keys, its manifest last. A manifest gone from the store (the data set was
    deleted after the snapshot) is listed alone: copying it fails as missing, which is what
    makes the backup take a newer snapshot."""
    if shards.is_npz(key):
        return [key]
    try:
        keys = shards.read_manifest(store, key).keys(key)
    except FileNotFoundError:
        return [shards.manifest_key(key)]
    stats = shards.stats_key(key)
    # A data set stored before column statistics has none until its first use; they are
    # derived from the shards, so a backup without them is whole (they are computed again).
    return [k for k in keys if k != stats or _exists(store, k)]


def _exists(store: Store, key: str) -> bool:
    try:
        with store.open(key):
            return True
    except FileNotFoundError:
        return False


def references(snapshot: Path, store: Store) -> References:
    """What the rows of the SQLite file ``snapshot`` reference."""
    refs = References()
    engine = snapshot_engine(snapshot)
    try:
        with engine.connect() as conn:
            dataset_keys = conn.scalars(select(Dataset.file_name).order_by(Dataset.id)).all()
            model_stems = conn.scalars(select(Model.file_stem).order_by(Model.id)).all()
            results = conn.execute(
                select(BatchPrediction.result_key, BatchPrediction.outputs)
                .where(BatchPrediction.result_key.is_not(None))
                .order_by(BatchPrediction.id)
            ).all()
            uploads = conn.scalars(
                select(Upload.id).where(Upload.state.in_(UploadState.HOLDING)).order_by(Upload.created_at)
            ).all()
    finally:
        engine.dispose()
    for key in dataset_keys:
        refs.store_keys += _dataset_keys(store, key)
    for stem in model_stems:
        refs.store_keys += [f"{stem}.npz", f"{stem}.json"]
    for result_key, outputs in results:
        refs.store_keys += list(result_keys(str(result_key), outputs or []).values())
    refs.upload_ids = list(uploads)
    refs.counts = {
        "datasets": len(dataset_keys),
        "models": len(model_stems),
        "batch_prediction_results": len(results),
        "uploads": len(uploads),
        "files": len(refs.store_keys) + len(uploads),
    }
    return refs
