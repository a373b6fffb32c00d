"""The remote store's local cache (app/core/storage/cache.py) and what only a remote store does:
bounded copies shared by processes, another host reading what one wrote, an unreachable server,
interrupted multipart uploads."""

from __future__ import annotations

import multiprocessing
import os
import time
from pathlib import Path

import numpy as np
import pytest

from app.core.storage.cache import STALE_TMP_S, LocalCache
from app.core.storage.object_store import FsspecStore
from tests.helpers import make_settings
from tests.s3 import S3Server

KIB = 1024


def _fill(size: int, byte: bytes = b"x"):
    return lambda tmp: tmp.write_bytes(byte * size)


def test_least_recently_used_copies_go_first(tmp_path: Path):
    cache = LocalCache(tmp_path / "cache", max_bytes=3 * KIB)
    for name in ("a", "b", "c"):
        cache.get(f"datasets/{name}", _fill(KIB))
        time.sleep(0.01)  # distinct mtimes
    cache.get("datasets/a", _fill(KIB, b"never fetched again"))  # a hit: a becomes the newest
    time.sleep(0.01)
    cache.get("datasets/d", _fill(KIB))
    present = sorted(p.name for p in (tmp_path / "cache" / "datasets").iterdir())
    assert present == ["a", "c", "d"], present  # b was the least recently used
    assert (tmp_path / "cache" / "datasets" / "a").read_bytes() == b"x" * KIB
    assert cache.size() <= 3 * KIB


def test_an_object_larger_than_the_cache_is_kept_alone(tmp_path: Path):
    cache = LocalCache(tmp_path / "cache", max_bytes=KIB)
    cache.get("datasets/small", _fill(100))
    path = cache.get("datasets/big", _fill(4 * KIB))
    assert path.stat().st_size == 4 * KIB  # the caller gets its copy
    assert not (tmp_path / "cache" / "datasets" / "small").exists()


def test_dead_downloads_are_swept(tmp_path: Path):
    cache = LocalCache(tmp_path / "cache", max_bytes=KIB)
    stale = cache.temp_path("datasets/x")
    stale.write_bytes(b"half")
    fresh = cache.temp_path("datasets/y")
    fresh.write_bytes(b"in progress")
    old = time.time() - STALE_TMP_S - 10
    os.utime(stale, (old, old))
    cache.evict()
    assert not stale.exists() and fresh.exists()


def _slow_fetch_and_read(root: str, n_bytes: int, queue: multiprocessing.Queue) -> None:
    def fetch(tmp: Path) -> None:
        with open(tmp, "wb") as fh:
            for _ in range(8):  # slowly, so that the processes overlap
                fh.write(b"z" * (n_bytes // 8))
                time.sleep(0.02)

    path = LocalCache(Path(root), max_bytes=10 * n_bytes).get("datasets/shared", fetch)
    queue.put(path.read_bytes() == b"z" * n_bytes)


@pytest.mark.slow
def test_processes_sharing_a_cache_see_whole_copies(tmp_path: Path):
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    procs = [
        ctx.Process(target=_slow_fetch_and_read, args=(str(tmp_path / "c"), 64 * KIB, queue))
        for _ in range(4)
    ]
    for p in procs:
        p.start()
    results = [queue.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    assert results == [True] * 4
    names = [p.name for p in (tmp_path / "c" / "datasets").iterdir()]
    assert names == ["shared"], names  # every temp file renamed or removed


def test_another_host_reads_through_its_own_bounded_cache(tmp_path: Path, s3: S3Server):
    store_settings = s3.settings()
    writer = make_settings(tmp_path / "api", **store_settings).store
    writer.ensure()
    keys = [f"datasets/d/shard-{i}.npy" for i in range(6)]
    for i, key in enumerate(keys):
        writer.write(key, lambda fh, i=i: np.save(fh, np.full(1000, i)))
    reader = make_settings(tmp_path / "worker", cache_bytes=20 * KIB, **store_settings).store
    assert isinstance(reader, FsspecStore)
    for i, key in enumerate(keys):
        assert np.load(reader.local_path(key), mmap_mode="r")[-1] == i
        assert reader.cache.size() <= 20 * KIB
    assert str(reader.local_path(keys[-1])).startswith(str(tmp_path / "worker"))


def test_an_unreachable_server_fails_ping(tmp_path: Path):
    store = make_settings(tmp_path, store_url="s3://nowhere/x", s3_endpoint_url="http://127.0.0.1:9").store
    with pytest.raises(Exception, match="(?i)connect"):
        store.ping()


def test_interrupted_multipart_uploads_are_aborted(tmp_path: Path, s3: S3Server):
    store = make_settings(tmp_path, **s3.settings()).store
    assert isinstance(store, FsspecStore)
    store.ensure()
    bucket, _, prefix = store.root.partition("/")
    store.fs.call_s3("create_multipart_upload", Bucket=bucket, Key=f"{prefix}/models/half.npz")
    assert len(store.fs.list_multipart_uploads(bucket)) == 1
    # (Only the abort is checked: moto reports every upload as initiated in 2010, so the age
    # filter that spares live uploads cannot be seen here.)
    assert store.sweep_partial(older_than_s=0) == 1
    assert store.fs.list_multipart_uploads(bucket) == []


def test_interrupted_renames_are_swept_where_the_backend_renames(tmp_path: Path):
    store = make_settings(tmp_path, store_url="memory://sweep-test/store").store
    assert isinstance(store, FsspecStore) and not store.is_object_store
    store.ensure()
    store.write("models/whole.npz", lambda fh: fh.write(b"whole"))
    store.fs.pipe_file(f"{store.root}/models/half.npz.1a2b3c4d.tmp", b"half")
    assert store.sweep_partial(older_than_s=3600) == 0  # young: maybe a live write
    assert store.sweep_partial(older_than_s=0) == 1
    assert sorted(p.rsplit("/", 1)[1] for p in store.fs.find(store.root)) == ["pgs-store", "whole.npz"]
