"""The store in a local directory (the default: the data dir), and :func:`open_store`, which picks
the store ``PGS_STORE_URL`` names."""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import IO, Any

from app.core.files import atomic_write, remove_quietly
from app.core.storage.base import PARTIAL_NAME, InvalidKey, Store, check_key

log = logging.getLogger(__name__)


class LocalDirStore:
    """A store in a local (or network-mounted) directory, with atomic renames."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()

    def __repr__(self) -> str:
        return f"LocalDirStore({str(self.root)!r})"

    def path(self, key: str) -> Path:
        p = (self.root / check_key(key)).resolve()
        # Defence in depth against symlinks inside the root pointing outside it.
        if self.root not in p.parents:
            raise InvalidKey(f"key {key!r} leaves the store")
        return p

    def write(self, key: str, write: Callable[[IO[bytes]], None]) -> int:
        path = self.path(key)
        if path.exists():
            raise FileExistsError(f"store keys are write-once: {key!r} exists")
        return atomic_write(path, write)

    def open(self, key: str) -> AbstractContextManager[IO[bytes]]:
        return open(self.path(key), "rb")  # the builtin: a file is its own context manager

    def delete(self, *keys: str) -> None:
        paths = [self.path(k) for k in keys]
        remove_quietly(*paths)
        # A data set's directory of shards goes with its last file (top-level ones stay).
        for d in {p.parent for p in paths if p.parent.parent != self.root and p.parent != self.root}:
            with contextlib.suppress(OSError):  # not empty, or already gone
                d.rmdir()

    def local_path(self, key: str) -> Path:
        p = self.path(key)
        if not p.is_file():
            raise FileNotFoundError(errno.ENOENT, "no such key in the store", key)
        return p

    def sweep_partial(self, older_than_s: float) -> int:
        """Temp files of writes a crash interrupted. Only old ones: on a shared volume a live
        worker on another host may be writing one right now."""
        cutoff = time.time() - older_than_s
        removed = 0
        for sub in ("datasets", "models", "predictions"):
            # A data set is a directory of shards (datasets/<uuid>/): one level deeper.
            for d in (self.root / sub, *(self.root / sub).glob("*/")):
                if not d.is_dir():
                    continue
                for entry in os.scandir(d):
                    if PARTIAL_NAME.match(entry.name) and entry.stat().st_mtime < cutoff:
                        remove_quietly(Path(entry.path))
                        removed += 1
        return removed

    def ensure(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)

    def ping(self) -> None:
        if not os.access(self.root, os.R_OK | os.W_OK | os.X_OK):
            raise OSError(f"the store directory {self.root} is missing or not writable")


def as_store(store_or_dir: Store | Path | str) -> Store:
    """Accept a store or a data dir path (the local default)."""
    if isinstance(store_or_dir, (str, Path)):
        return LocalDirStore(Path(store_or_dir))
    return store_or_dir


def open_store(
    url: str, data_dir: Path, cache_dir: Path, cache_bytes: int, options: dict[str, Any] | None = None
) -> Store:
    """The store at ``url``: empty or ``file://`` a local directory (empty: the data dir), any
    other fsspec URL a remote store cached in ``cache_dir`` (at most ``cache_bytes``)."""
    if not url:
        return LocalDirStore(data_dir)
    if url.startswith("file://"):
        return LocalDirStore(Path(url[len("file://") :]))
    from app.core.storage.cache import LocalCache
    from app.core.storage.object_store import FsspecStore  # imports fsspec only where configured

    return FsspecStore(url, LocalCache(cache_dir, cache_bytes), options)
