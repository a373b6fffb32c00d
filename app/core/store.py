"""The shared store for data sets, models and batch prediction results: one small interface, a
directory behind it.

Everything a worker reads (uploaded data sets) or writes (models, batch predictions) goes through
a :class:`Store` addressed by keys such as ``datasets/<uuid>.npz``, ``models/<uuid>.npz`` and
``predictions/<uuid>.<output>.npy`` (the database holds the keys). :class:`LocalDirStore` keeps
them under the data dir; with several hosts that directory is a volume every API process and
worker mounts at the same path. An object store would implement the same four methods
(``write`` as a single PUT is atomic there too).
"""

from __future__ import annotations

import errno
import logging
import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import IO, Protocol

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


class Store(Protocol):
    def write(self, key: str, write: Callable[[IO[bytes]], None]) -> int:
        """Create or replace ``key`` atomically: readers see the old object or all of the new."""
        ...

    def open(self, key: str) -> AbstractContextManager[IO[bytes]]:
        """Read ``key`` as a seekable binary file; FileNotFoundError if it does not exist."""
        ...

    def delete(self, *keys: str) -> None:
        """Remove the keys; missing ones are ignored."""
        ...

    def sweep_partial(self, older_than_s: float) -> int:
        """Remove writes that a crash interrupted; returns how many."""
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
        return atomic_write(self.path(key), write)

    @contextmanager
    def _open(self, key: str) -> Iterator[IO[bytes]]:
        with open(self.path(key), "rb") as fh:
            yield fh

    def open(self, key: str) -> AbstractContextManager[IO[bytes]]:
        return self._open(key)

    def delete(self, *keys: str) -> None:
        remove_quietly(*(self.path(k) for k in keys))

    def sweep_partial(self, older_than_s: float) -> int:
        """Temp files of writes a crash interrupted. Only old ones: on a shared volume a live
        worker on another host may be writing one right now."""
        cutoff = time.time() - older_than_s
        removed = 0
        for sub in ("datasets", "models", "predictions"):
            d = self.root / sub
            if not d.is_dir():
                continue
            for entry in os.scandir(d):
                if _PARTIAL.match(entry.name) and entry.stat().st_mtime < cutoff:
                    remove_quietly(Path(entry.path))
                    removed += 1
        return removed


def as_store(store_or_dir: Store | Path | str) -> Store:
    """Accept a store or a data dir path (the local default)."""
    if isinstance(store_or_dir, (str, Path)):
        return LocalDirStore(Path(store_or_dir))
    return store_or_dir


def open_store(data_dir: Path) -> Store:
    """The store configured for the service (a directory today)."""
    return LocalDirStore(data_dir)


# -- a store that cannot take more -------------------------------------------------------------

# errno values that mean "the server cannot store this now", not a bug: the disk is full, a quota
# is reached, the file system is read-only, or the data dir is not writable.
STORAGE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM,
                            errno.EFBIG})


def install_storage_error_handler(app: FastAPI) -> None:
    """507 Insufficient Storage (problem+json) for OSErrors with a storage errno; the writes
    are atomic, so such a failure leaves nothing behind (no partial data set or model)."""

    async def handler(request: Request, exc: Exception) -> JSONResponse:
        code = getattr(exc, "errno", None)
        if code in STORAGE_ERRNOS:
            log.error("storage error on %s %s: %s", request.method, request.url.path, exc)
            return problem_response(
                request, 507,
                f"the server cannot store data right now ({os.strerror(code)}); nothing was "
                "stored, retry later", kind="insufficient-storage",
            )
        log.error("unhandled OSError on %s %s", request.method, request.url.path, exc_info=exc)
        return problem_response(request, 500, "internal error; see the server log",
                                kind="internal")

    app.add_exception_handler(OSError, handler)
