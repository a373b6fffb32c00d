"""The shared store's interface: keys, the :class:`Store` protocol, and what a store that cannot
take more answers over HTTP."""

from __future__ import annotations

import errno
import logging
import os
import re
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import IO, Protocol

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from app.core.errors import problem_response

log = logging.getLogger(__name__)
# Keys are relative, "/"-separated, made of safe characters: never "..", never absolute.
_KEY = re.compile(r"^(?!.*\.\.)[A-Za-z0-9_\-][A-Za-z0-9_\-./]*$")
# atomic_write's temp files: ".<name>.<random>.tmp" beside the final file.
PARTIAL_NAME = re.compile(r"^\..+\.tmp$")


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
