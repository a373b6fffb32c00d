"""A reserve of disk space in the data dir, released so that a DELETE can free space on a full disk.

On a full disk every database write fails, and so would the DELETE that frees space: SQLite
needs room for its write-ahead log to commit the delete (and the audit log records it). The
reserve is a file of ``PGS_DISK_RESERVE_BYTES`` allocated up front (``posix_fallocate``: the
blocks are really taken, not a sparse file). A DELETE that finds less free space than that
removes the file first, so the delete commits and then frees its own files. The upload service
puts the reserve back when the disk has room for it again (every ``PGS_SWEEP_INTERVAL_S``).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import shutil
import threading
from pathlib import Path

from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Receive, Scope, Send

log = logging.getLogger(__name__)

RESERVE_NAME = "disk-reserve"


class DiskReserve:
    def __init__(self, data_dir: Path, size: int) -> None:
        self.path = data_dir / RESERVE_NAME
        self.size = size
        self._lock = threading.Lock()
        self._warned = False

    def in_place(self) -> bool:
        try:
            return self.path.stat().st_size >= self.size
        except FileNotFoundError:
            return False

    def fill(self) -> bool:
        """Allocate the reserve unless it is there; False when the disk has no room for it now."""
        if not self.size:
            return False
        with self._lock:
            if self.in_place():
                return True
            partial = self.path.with_name(f".{RESERVE_NAME}.{os.getpid()}.tmp")
            try:
                fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                try:
                    os.posix_fallocate(fd, 0, self.size)
                    os.fsync(fd)
                finally:
                    os.close(fd)
                os.replace(partial, self.path)
            except OSError as exc:
                with contextlib.suppress(OSError):  # half a reserve holds space nobody releases
                    partial.unlink(missing_ok=True)
                if exc.errno not in (errno.ENOSPC, errno.EDQUOT) and not self._warned:
                    # The service runs without one rather than not at all (a read-only data dir
                    # is /readyz's and the writes' business).
                    self._warned = True
                    log.warning("no disk reserve at %s: %s", self.path, exc)
                return False
        log.info("disk reserve of %d bytes in place at %s", self.size, self.path)
        return True

    def release_if_low(self) -> bool:
        """Remove the reserve when the disk has less free space than it holds; True if removed."""
        try:
            if not self.size or shutil.disk_usage(self.path.parent).free >= self.size:
                return False
            with self._lock:
                if not self.path.exists():
                    return False
                self.path.unlink(missing_ok=True)
        except OSError as exc:  # the delete goes on: it may still find room
            log.warning("the disk reserve at %s could not be released: %s", self.path, exc)
            return False
        log.warning("the disk of %s is nearly full: disk reserve released for a delete", self.path.parent)
        return True


class ReserveForDeletesMiddleware:
    """Releases the reserve before a DELETE on a nearly full disk. Inside authentication: only a
    caller with a key can make the service give up its reserve."""

    def __init__(self, app: ASGIApp, reserve: DiskReserve) -> None:
        self.app = app
        self.reserve = reserve

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        caller = (scope.get("state") or {}).get("caller")
        if scope["type"] == "http" and scope["method"] == "DELETE" and caller is not None:
            await run_in_threadpool(self.reserve.release_if_low)
        await self.app(scope, receive, send)
