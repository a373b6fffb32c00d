"""A local directory of copies of store objects, bounded in bytes, least recently used out.

A remote store (app/core/storage/object_store.py) serves :meth:`Store.local_path` from here: a worker
memory-maps the copy instead of downloading the object again for every job. The copies never go
stale because store objects are write-once (the stores refuse to replace a key, and every key
holds a fresh uuid), so a copy is either absent or exactly the object.

Several processes (API processes, pool workers, Dask workers on one host) may share one cache
directory:

* a copy appears by ``os.replace`` of a temp file with a per-process name, so a reader sees no
  copy or a whole one; two processes that miss the same key at once both download it and the
  last rename wins (the bytes are the same);
* a hit marks the copy as used by setting its mtime (the LRU order);
* eviction runs under an ``fcntl.flock`` on ``.lock`` in the directory, so two processes do not
  both delete to make the same room. An evicted file that a process has open or memory-mapped
  stays readable by it (POSIX unlink); its disk space returns when the last user closes it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import time
from collections.abc import Callable, Iterator
from pathlib import Path

LOCK_NAME = ".lock"
# Temp files of a download or write in progress; those of a process that died are removed by
# eviction once they are this old.
_TMP_SUFFIX = ".tmp"
STALE_TMP_S = 3600.0


class LocalCache:
    """Copies of store keys under ``root`` (a key's copy is at ``root/key``), at most
    ``max_bytes`` in all after each insertion (a single object larger than that is kept alone
    until the next insertion)."""

    def __init__(self, root: Path, max_bytes: int) -> None:
        self.root = Path(root).resolve()
        self.max_bytes = max_bytes

    def __repr__(self) -> str:
        return f"LocalCache({str(self.root)!r}, max_bytes={self.max_bytes})"

    def _path(self, key: str) -> Path:
        return self.root / key  # keys are checked by the store (app.core.storage.base.check_key)

    def temp_path(self, key: str) -> Path:
        """A fresh temp file name beside ``key``'s copy, unique to this process and call."""
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}{_TMP_SUFFIX}")

    def get(self, key: str, fetch: Callable[[Path], None]) -> Path:
        """The copy of ``key``, fetched into a temp file by ``fetch(path)`` on a miss."""
        path = self._path(key)
        try:
            os.utime(path)  # a hit: now the most recently used
            return path
        except FileNotFoundError:
            pass
        tmp = self.temp_path(key)
        try:
            fetch(tmp)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return self.adopt(key, tmp)

    def adopt(self, key: str, tmp: Path) -> Path:
        """Make the complete file ``tmp`` (from :meth:`temp_path`) the copy of ``key``."""
        path = self._path(key)
        os.replace(tmp, path)
        self.evict(keep=path)
        return path

    def discard(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    def evict(self, keep: Path | None = None) -> int:
        """Remove the least recently used copies until the cache fits; returns how many."""
        self.root.mkdir(parents=True, exist_ok=True)
        with self._locked():
            now = time.time()
            entries: list[tuple[float, int, Path]] = []
            total = 0
            for path, st in self._files():
                if path.name.endswith(_TMP_SUFFIX):
                    if st.st_mtime < now - STALE_TMP_S:  # its writer died
                        path.unlink(missing_ok=True)
                        continue
                    total += st.st_size  # a live download takes room too; never evicted
                    continue
                total += st.st_size
                if path != keep:
                    entries.append((st.st_mtime, st.st_size, path))
            removed = 0
            for _, size, path in sorted(entries):
                if total <= self.max_bytes:
                    break
                path.unlink(missing_ok=True)
                total -= size
                removed += 1
            return removed

    def size(self) -> int:
        """Bytes the cache holds now (copies and downloads in progress)."""
        return sum(st.st_size for _, st in self._files())

    def _files(self) -> Iterator[tuple[Path, os.stat_result]]:
        for dirpath, _dirs, names in os.walk(self.root):
            for name in names:
                if name == LOCK_NAME:
                    continue
                path = Path(dirpath) / name
                with contextlib.suppress(FileNotFoundError):  # another process removed it
                    yield path, path.stat()

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        with open(self.root / LOCK_NAME, "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
