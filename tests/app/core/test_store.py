"""The Store contract (app/core/storage/), run against the local directory, a real
S3-compatible server (moto on 127.0.0.1), and fsspec's in-memory file system (a back end with
renames: the temp-name-then-rename write path): the same behaviour whichever store is
configured."""

from __future__ import annotations

import io
import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from app.core.config import Settings
from app.core.storage.base import InvalidKey, Store
from app.core.storage.local import LocalDirStore
from app.core.storage.object_store import FsspecStore
from tests.helpers import make_settings
from tests.s3 import S3Server


@pytest.fixture(params=["local", "s3", "memory"])
def store_settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    if request.param == "local":
        return make_settings(tmp_path)
    if request.param == "memory":
        return make_settings(tmp_path, store_url=f"memory://{uuid.uuid4().hex}/store")
    s3: S3Server = request.getfixturevalue("s3")
    return make_settings(tmp_path, **s3.settings())


@pytest.fixture
def store(store_settings: Settings) -> Iterator[Store]:
    store = store_settings.store
    store.ensure()
    yield store


def _array_writer(a: np.ndarray):
    return lambda fh: np.save(fh, a, allow_pickle=False)


def test_the_settings_pick_the_store(store_settings: Settings, store: Store):
    expected = FsspecStore if store_settings.store_url else LocalDirStore
    assert isinstance(store, expected)
    store.ping()


def test_write_then_read_and_memory_map(store: Store):
    a = np.arange(1000, dtype=np.float64)
    size = store.write("datasets/abc/shard-0.data.npy", _array_writer(a))
    with store.open("datasets/abc/shard-0.data.npy") as fh:
        assert len(fh.read()) == size
        fh.seek(0)
        np.testing.assert_array_equal(np.load(fh), a)
    path = store.local_path("datasets/abc/shard-0.data.npy")
    mapped = np.load(path, mmap_mode="r")
    assert isinstance(mapped, np.memmap)
    np.testing.assert_array_equal(mapped, a)


def test_keys_are_write_once(store: Store):
    store.write("models/m.json", lambda fh: fh.write(b"first"))
    with pytest.raises(FileExistsError):
        store.write("models/m.json", lambda fh: fh.write(b"second"))
    with store.open("models/m.json") as fh:
        assert fh.read() == b"first"


def test_missing_keys(store: Store):
    with pytest.raises(FileNotFoundError):
        store.local_path("datasets/nothing.npy")
    with pytest.raises(FileNotFoundError), store.open("datasets/nothing.npy"):
        pass
    store.delete("datasets/nothing.npy")  # missing keys are ignored


def test_delete(store: Store):
    store.write("predictions/p.score.npy", _array_writer(np.ones(3)))
    store.local_path("predictions/p.score.npy")  # a cached copy, where the store has a cache
    store.delete("predictions/p.score.npy")
    with pytest.raises(FileNotFoundError):
        store.local_path("predictions/p.score.npy")


def test_a_failed_write_leaves_nothing(store: Store, store_settings: Settings):
    def half_then_fail(fh: io.BufferedWriter) -> None:
        fh.write(b"x" * 1000)
        raise RuntimeError("the writer failed")

    with pytest.raises(RuntimeError):
        store.write("datasets/broken.npz", half_then_fail)
    with pytest.raises(FileNotFoundError):
        store.local_path("datasets/broken.npz")
    leftovers = [
        p
        for root in (store_settings.data_dir, store_settings.cache_dir)
        if root
        for p in root.rglob("*")
        if p.is_file() and p.name != ".lock"
    ]
    assert leftovers == [] or all(p.name == "pgs-store" for p in leftovers), leftovers
    store.write("datasets/broken.npz", lambda fh: fh.write(b"whole"))  # the key is still free


def test_many_keys_of_one_data_set(store: Store):
    keys = [f"datasets/d1/shard-{i}.{part}.npy" for i in range(20) for part in ("indptr", "data")]
    for i, key in enumerate(keys):
        store.write(key, _array_writer(np.full(10, i)))
    for i, key in enumerate(keys):
        assert np.load(store.local_path(key), mmap_mode="r")[0] == i
    store.delete(*keys)
    for key in keys[:3]:
        with pytest.raises(FileNotFoundError):
            store.local_path(key)


@pytest.mark.parametrize("key", ["../x", "/abs", "a//b", "models/../../etc", ".", "a b"])
def test_invalid_keys(store: Store, key: str):
    with pytest.raises(InvalidKey):
        store.write(key, lambda fh: fh.write(b"x"))
    with pytest.raises(InvalidKey):
        store.local_path(key)
