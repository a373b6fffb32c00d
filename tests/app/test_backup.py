"""The backup's consistency rules, in process: a data set deleted between the database snapshot
and the copy of its files makes the backup take a newer snapshot (the backup never holds a row
without its files); the backup reads and writes any store through the store interface (S3 here);
PostgreSQL is refused with the way to back it up; a data set without its column statistics yet
is backed up whole and gets them after the restore. The round trip through real server processes is
tests/security/test_backup_restore.py."""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager
from pathlib import Path
from typing import IO

import numpy as np
import pytest
from fastapi.testclient import TestClient

from app.backup.archive import BackupError
from app.backup.make import backup
from app.backup.restore import restore
from app.core.config import Settings
from app.core.storage.base import Store
from app.core.storage.local import LocalDirStore
from app.db.engine import make_engine, run_migrations
from app.main import create_app
from app.services.datasets.shards import open_dataset, shard_key, stats_key
from tests.cluster.harness import tiny_svmlight
from tests.helpers import make_settings, upload
from tests.s3 import S3Server


class DeletingStore(LocalDirStore):
    """The data dir's store, which has the service delete a data set through its API (the row,
    then the files) the moment the backup opens ``trigger``, one of that data set's files."""

    def __init__(self, root: Path, client: TestClient, dataset_id: int, trigger: str) -> None:
        super().__init__(root)
        self.client, self.dataset_id, self.trigger, self.fired = client, dataset_id, trigger, False

    def open(self, key: str) -> AbstractContextManager[IO[bytes]]:
        if key == self.trigger and not self.fired:
            self.fired = True
            assert self.client.delete(f"/v1/datasets/{self.dataset_id}").status_code == 204
        return super().open(key)


def _dataset_key(settings: Settings, dataset_id: int) -> str:
    with sqlite3.connect(settings.data_dir / "pgs.db") as conn:
        return str(conn.execute("SELECT file_name FROM datasets WHERE id = ?", (dataset_id,)).fetchone()[0])


def test_a_data_set_stored_before_column_statistics_is_backed_up_and_gets_them_after(tmp_path: Path):
    settings = make_settings(tmp_path)
    with TestClient(create_app(settings)) as c:
        ds = upload(c, tiny_svmlight(200, 10), "old.svm").json()
    key = _dataset_key(settings, ds["id"])
    (settings.data_dir / stats_key(key)).unlink()  # as stored before statistics were
    done = backup(settings, tmp_path / "backup")
    assert done.manifest.counts["datasets"] == 1
    target = make_settings(tmp_path / "restored")
    restore(target, tmp_path / "backup")
    with TestClient(create_app(target)) as c:
        assert c.get(f"/v1/datasets/{ds['id']}").json()["columns"] == ds["columns"]
    assert (target.data_dir / stats_key(key)).is_file()


def test_a_data_set_deleted_during_the_backup_is_left_out_whole(tmp_path: Path):
    settings = make_settings(tmp_path)
    with TestClient(create_app(settings)) as c:
        kept = upload(c, tiny_svmlight(200, 10), "kept.svm").json()
        victim = upload(c, tiny_svmlight(300, 10, seed=3), "victim.svm").json()
        victim_key = _dataset_key(settings, victim["id"])
        # Its labels: copied after the shard's other arrays, which the backup then holds in vain.
        store = DeletingStore(settings.data_dir, c, victim["id"], shard_key(victim_key, 0, "y"))

        class RacingSettings(Settings):
            @property
            def store(self) -> Store:
                return store

        done = backup(RacingSettings.model_validate(settings.model_dump()), tmp_path / "backup")
    assert store.fired
    assert done.manifest.snapshots == 2, "the deletion was seen, and a newer snapshot taken"
    assert done.manifest.counts["datasets"] == 1
    assert not [e.name for e in done.manifest.files if victim_key in e.name]
    assert not (tmp_path / "backup" / "store" / victim_key).exists(), "its copied arrays discarded"
    target = make_settings(tmp_path / "restored")
    run_migrations(make_engine(target.database_url))  # tables without rows: still fresh
    restore(target, tmp_path / "backup")
    with TestClient(create_app(target)) as c:
        assert [d["id"] for d in c.get("/v1/datasets").json()["items"]] == [kept["id"]]


@pytest.mark.slow
def test_a_backup_of_an_s3_store_restores_into_another_bucket(tmp_path: Path, s3: S3Server):
    source = make_settings(tmp_path / "a", **s3.settings())
    with TestClient(create_app(source)) as c:
        ds = upload(c, tiny_svmlight(200, 10), "on-s3.svm").json()
    backup(source, tmp_path / "backup.tar")
    target = make_settings(tmp_path / "b", **s3.settings())
    assert target.store_url != source.store_url
    restore(target, tmp_path / "backup.tar")
    with TestClient(create_app(target)) as c:
        assert c.get(f"/v1/datasets/{ds['id']}").json() == ds
    key = _dataset_key(source, ds["id"])
    original, restored = open_dataset(source.store, key), open_dataset(target.store, key)
    np.testing.assert_array_equal(original.shard(0)[0].toarray(), restored.shard(0)[0].toarray())
    assert not (tmp_path / "b" / "var" / "datasets").exists() or not any(
        (tmp_path / "b" / "var" / "datasets").iterdir()
    ), "the restored files went to the bucket, not the data dir"


def test_postgresql_is_refused_with_the_way_to_back_it_up(tmp_path: Path):
    settings = make_settings(tmp_path, database_url="postgresql://pgs@127.0.0.1:5432/pgs")
    with pytest.raises(BackupError, match="pg_dump"):
        backup(settings, tmp_path / "backup")
    with pytest.raises(BackupError, match="pg_dump"):
        restore(settings, tmp_path / "backup")
    assert not (tmp_path / "backup").exists() and not (tmp_path / "backup.partial").exists()
