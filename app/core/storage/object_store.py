"""A store behind any fsspec URL (``s3://bucket/prefix`` above all), with a local cache.

Hosts that share no file system share this store: the API writes uploaded data sets to it,
workers read them and write models, every API process serves models and batch results from it.

* ``write`` spools the object to a local temp file, then sends it in one operation: on an object
  store (S3 and alike) a PUT or multipart upload, which makes the object visible only whole; on
  other file systems a temp name beside the key, then a rename. The spooled file then becomes
  the local cached copy (a fresh object is usually read again soon, by the API or a worker).
* Keys are write-once (``FileExistsError`` on an existing key): that is what lets every host keep
  cached copies without ever asking whether they are current.
* ``open`` and ``local_path`` read through the cache (app/core/storage/cache.py), so memory-mapping
  a shard costs one download per host, not one per job.
* Credentials come from the backend's usual sources (for S3 the ``AWS_*`` environment variables,
  ``~/.aws``, or an instance role); ``PGS_S3_ENDPOINT_URL`` points s3fs at an S3-compatible
  server (MinIO, moto, Ceph).
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import secrets
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import IO, Any

import fsspec

from app.core.storage.base import StoreUnavailable, check_key
from app.core.storage.cache import LocalCache

log = logging.getLogger(__name__)

# Backends where a single PUT (or a completed multipart upload) is atomic and a rename is a
# copy: their objects are written in place.
OBJECT_STORES = frozenset({"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss"})
# Written by ensure(); /readyz asks for it, which checks reachability, credentials and the
# bucket in one request, whatever the backend.
MARKER_NAME = "pgs-store"
PARTIAL_NAME_SUFFIX = ".tmp"


class FsspecStore:
    def __init__(self, url: str, cache: LocalCache, options: dict[str, Any] | None = None) -> None:
        self.url, self.cache, self.options = url, cache, dict(options or {})
        # No request yet: the first one goes out with the first operation. Listings are not
        # cached: another host may add or delete a key at any time.
        self.fs, root = fsspec.core.url_to_fs(
            url, use_listings_cache=False, **_backend_options(url, self.options)
        )
        self.root = root.rstrip("/")

    def __repr__(self) -> str:
        return f"FsspecStore({self.url!r})"

    def __getstate__(self) -> dict[str, Any]:
        # Picklable for worker processes: they open their own connection.
        return {"url": self.url, "cache": self.cache, "options": self.options}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["url"], state["cache"], state["options"])  # type: ignore[misc]

    @property
    def protocols(self) -> set[str]:
        protocol = self.fs.protocol
        return {protocol} if isinstance(protocol, str) else set(protocol)

    @property
    def is_object_store(self) -> bool:
        return bool(self.protocols & OBJECT_STORES)

    def _remote(self, key: str) -> str:
        return f"{self.root}/{check_key(key)}"

    def _marker(self) -> str:
        # Beside the keys, not one of them (keys live under datasets/, models/, predictions/).
        return f"{self.root}/{MARKER_NAME}"

    # -- the Store protocol ---------------------------------------------------------------------

    def write(self, key: str, write: Callable[[IO[bytes]], None]) -> int:
        remote = self._remote(key)
        with self._reaching("write", key):
            exists = self.fs.exists(remote)
        if exists:
            raise FileExistsError(f"store keys are write-once: {key!r} exists")
        tmp = self.cache.temp_path(key)
        try:
            with open(tmp, "wb") as fh:
                write(fh)
            size = tmp.stat().st_size
            with self._reaching("write", key):
                self._send(tmp, remote)
            self.cache.adopt(key, tmp)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return size

    def _send(self, tmp: Path, remote: str) -> None:
        if self.is_object_store:
            self.fs.put_file(str(tmp), remote)
            return
        partial = f"{remote}.{secrets.token_hex(4)}{PARTIAL_NAME_SUFFIX}"
        try:
            self.fs.put_file(str(tmp), partial)
            self.fs.mv(partial, remote)
        except BaseException:
            self._remove(partial)
            raise

    def local_path(self, key: str) -> Path:
        remote = self._remote(key)

        def fetch(tmp: Path) -> None:
            with self._reaching("read", key):
                self.fs.get_file(remote, str(tmp))

        return self.cache.get(key, fetch)

    def open(self, key: str) -> AbstractContextManager[IO[bytes]]:
        return open(self.local_path(key), "rb")  # the builtin: a file is its own context manager

    def delete(self, *keys: str) -> None:
        for key in keys:
            with self._reaching("delete", key):
                self._remove(self._remote(key))
            self.cache.discard(key)

    def sweep_partial(self, older_than_s: float) -> int:
        """Uploads a crash interrupted: unfinished multipart uploads under the prefix on S3
        (invisible, but billed), temp names elsewhere; and the cache's dead downloads."""
        self.cache.evict()
        if self.protocols & {"s3", "s3a"}:
            return self._abort_multipart_uploads(older_than_s)
        if self.is_object_store:
            return 0
        cutoff = time.time() - older_than_s
        removed = 0
        for path, info in self.fs.find(self.root, detail=True).items():
            if path.endswith(PARTIAL_NAME_SUFFIX) and _mtime(info) < cutoff:
                self._remove(path)
                removed += 1
        return removed

    def ping(self) -> None:
        """Raise unless the store answers (reachable, the credentials work, the bucket is
        there): /readyz reports the error."""
        self.fs.info(self._marker())

    def ensure(self) -> None:
        """Create the root (on S3: the bucket, where the credentials allow it) and the marker
        that :meth:`ping` looks for."""
        remote = self._marker()
        if self.fs.exists(remote):
            return
        self.fs.makedirs(self.root, exist_ok=True)
        self.fs.pipe_file(remote, b"pgs-service store\n")

    # -- helpers -------------------------------------------------------------------------------

    @contextmanager
    def _reaching(self, what: str, key: str) -> Iterator[None]:
        """Errors of the backend other than a missing or existing key mean the store cannot
        serve now (unreachable, credentials refused, no bucket): StoreUnavailable (503)."""
        try:
            yield
        except (FileNotFoundError, FileExistsError):
            raise
        except Exception as exc:
            raise StoreUnavailable(f"{self!r} could not {what} {key!r}: {type(exc).__name__}: {exc}") from exc

    def _remove(self, remote: str) -> None:
        try:
            self.fs.rm_file(remote)
        except FileNotFoundError:
            pass

    def _abort_multipart_uploads(self, older_than_s: float) -> int:
        bucket, _, prefix = self.root.partition("/")
        cutoff = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=older_than_s)
        removed = 0
        for upload in self.fs.list_multipart_uploads(bucket):
            if not upload["Key"].startswith(prefix) or upload["Initiated"] >= cutoff:
                continue
            self.fs.call_s3(
                "abort_multipart_upload", Bucket=bucket, Key=upload["Key"], UploadId=upload["UploadId"]
            )
            removed += 1
        return removed


def _backend_options(url: str, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` for the backend, with botocore's "standard" retry mode on S3 unless the
    environment names one (``AWS_RETRY_MODE``). Its default, "legacy", backs off for about 7 s
    before it gives up on an endpoint that refuses connections, on every call: an upload to an
    unreachable store answered 503 after 19 s and /readyz after 5 s. "standard" (AWS's
    recommended mode) retries the same transient errors and throttling three times, with a
    shorter jittered backoff: about 1.4 s on that endpoint."""
    protocol = fsspec.core.split_protocol(url)[0]
    if protocol in ("s3", "s3a") and "AWS_RETRY_MODE" not in os.environ:
        return {"config_kwargs": {"retries": {"mode": "standard"}}, **options}
    return options


def _mtime(info: dict[str, Any]) -> float:
    value = info.get("mtime") or info.get("created") or info.get("LastModified") or 0.0
    if isinstance(value, dt.datetime):
        return value.timestamp()
    return float(value)
