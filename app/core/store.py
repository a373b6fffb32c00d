"""The shared store for data sets, models and batch prediction results: one small interface, a
directory or an object store behind it.

Everything a worker reads (uploaded data sets) or writes (models, batch predictions) goes through
a :class:`Store` addressed by keys such as ``datasets/<uuid>/manifest.json`` (a data set's
shards, app/services/shards.py), ``models/<uuid>.npz`` and ``predictions/<uuid>.<output>.npy``
(the database holds the keys). Keys are write-once: every key holds a fresh uuid, and writing an
existing key is refused, so a copy of an object is never stale. ``PGS_STORE_URL`` picks the store
(:func:`open_store`): empty, the data dir (:class:`LocalDirStore`; with several hosts a volume
every API process and worker mounts at the same path), or an fsspec URL such as
``s3://bucket/prefix`` (app/core/remote_store.py), which hosts share without a shared file system.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import IO, Any, Protocol

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from app.core.errors import problem_response
from app.core.files import atomic_write, remove_quietly

log = logging.getLogger(__name__)

# Keys are relative, "/"-separated, made of safe characters: never "..", never absolute.
_KEY = re.compile(r"^(?!.*\.\.)[A-Za-z0-9_\-][A-Za-z0-9_\-./]*$")
# atomic_write's temp files: ".<name>.<random>.tmp" beside the final file.
_PARTIAL = re.compile(r"^\..+\.tmp$")


class InvalidKey(ValueError):
    pass


class StoreUnavailable(RuntimeError):
    """A remote store did not answer, or refused the request (credentials, a missing bucket):
    the request may succeed later (503), unlike a full disk (507)."""


class Store(Protocol):
    def write(self, key: str, write: Callable[[IO[bytes]], None]) -> int:
        """Create ``key`` atomically (readers see no object or all of it); FileExistsError if
        it exists (keys are write-once). Returns the size in bytes."""
        ...

    def open(self, key: str) -> AbstractContextManager[IO[bytes]]:
        """Read ``key`` as a seekable binary file; FileNotFoundError if it does not exist."""
        ...

    def delete(self, *keys: str) -> None:
        """Remove the keys; missing ones are ignored."""
        ...

    def local_path(self, key: str) -> Path:
        """A local file holding ``key``'s bytes, for ``np.load(path, mmap_mode="r")``;
        FileNotFoundError if the key does not exist."""
        ...

    def sweep_partial(self, older_than_s: float) -> int:
        """Remove writes that a crash interrupted; returns how many."""
        ...

    def ensure(self) -> None:
        """Create what the store needs before its first write (a directory, a bucket)."""
        ...

    def ping(self) -> None:
        """Raise unless the store can be used now (for /readyz)."""
        ...


def check_key(key: str) -> str:
    if not _KEY.match(key) or key.startswith("/") or "//" in key:
        raise InvalidKey(f"not a store key: {key!r}")
    return key


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
                    if _PARTIAL.match(entry.name) and entry.stat().st_mtime < cutoff:
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
    from app.core.remote_store import FsspecStore  # imports fsspec only where configured
    from app.core.store_cache import LocalCache

    return FsspecStore(url, LocalCache(cache_dir, cache_bytes), options)


# -- a store that cannot take more -------------------------------------------------------------

# errno values that mean "the server cannot store this now", not a bug: the disk is full, a quota
# is reached, the file system is read-only, or the data dir is not writable.
STORAGE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EFBIG})


def install_storage_error_handler(app: FastAPI) -> None:
    """507 Insufficient Storage (problem+json) for OSErrors with a storage errno, 503 when a
    remote store is unavailable; the writes are atomic, so such a failure leaves nothing behind
    (no partial data set or model)."""

    async def handler(request: Request, exc: Exception) -> JSONResponse:
        code = getattr(exc, "errno", None)
        if code in STORAGE_ERRNOS:
            log.error("storage error on %s %s: %s", request.method, request.url.path, exc)
            return problem_response(
                request,
                507,
                f"the server cannot store data right now ({os.strerror(code)}); nothing was "
                "stored, retry later",
                kind="insufficient-storage",
            )
        log.error("unhandled OSError on %s %s", request.method, request.url.path, exc_info=exc)
        return problem_response(request, 500, "internal error; see the server log", kind="internal")

    async def unavailable(request: Request, exc: Exception) -> JSONResponse:
        log.error("store unavailable on %s %s: %s", request.method, request.url.path, exc)
        return problem_response(
            request,
            503,
            f"the store is unavailable ({exc}); nothing was stored, retry later",
            kind="store-unavailable",
            headers={"Retry-After": "30"},
        )

    app.add_exception_handler(OSError, handler)
    app.add_exception_handler(StoreUnavailable, unavailable)
