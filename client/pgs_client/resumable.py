"""Resumable uploads (the tus 1.0 protocol the service speaks at ``/v1/uploads``).

A file is sent in chunks of ``chunk_size`` bytes, each a PATCH at the offset the service holds.
When a chunk breaks (the connection dropped, a timeout, a 409 because the service has a
different offset), the uploader asks the service for its offset (HEAD) and goes on from there:
the bytes that arrived before the break are not sent again. The upload's URL is remembered in a
small file under the user's cache directory, keyed by the file (path, size, modification time)
and the service, so running the same upload again after the program was stopped resumes it too.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from pgs_client.errors import ApiError, Conflict, ConnectionFailed, NotFound, PgsError, api_error
from pgs_client.progress import Bar
from pgs_client.transport import Transport

log = logging.getLogger("pgs_client")

TUS = {"Tus-Resumable": "1.0.0"}
# Files at least this big go as resumable uploads (smaller ones in one multipart POST).
RESUMABLE_BYTES = 64 * 1024 * 1024
CHUNK_BYTES = 64 * 1024 * 1024
READ_BYTES = 1024 * 1024
# Breaks in a row without a byte of progress before the upload gives up.
MAX_STALLS = 5
POLL_S = 0.5


def _cache_file() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pgs-client" / "uploads.json"


class ResumeStore:
    """Upload URLs by file and service, in a JSON file (written whole, then renamed)."""

    def __init__(self, path: Path | None = None):
        self.path = path or _cache_file()

    @staticmethod
    def key(service: str, file: Path) -> str:
        st = file.stat()
        return f"{service} {file.resolve()} {st.st_size} {st.st_mtime_ns}"

    def _load(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text())
        except (FileNotFoundError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def get(self, key: str) -> str | None:
        return self._load().get(key)

    def put(self, key: str, location: str | None) -> None:
        data = self._load()
        if location is None:
            data.pop(key, None)
        else:
            data[key] = location
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1))
        tmp.replace(self.path)


class Uploader:
    def __init__(self, transport: Transport, store: ResumeStore | None = None, chunk_size: int = CHUNK_BYTES):
        self._t, self._store, self.chunk_size = transport, store or ResumeStore(), chunk_size

    def send(self, path: Path, filename: str, bar: Bar) -> str:
        """Upload ``path`` (resuming an earlier upload of it when the service still has it);
        returns the upload's path on the service."""
        key = ResumeStore.key(self._t.url, path)
        size = path.stat().st_size
        location = self._store.get(key)
        offset = self._offset(location) if location else None
        if location is None or offset is None:
            location, offset = self._create(size, filename), 0
            self._store.put(key, location)
        else:
            log.info("resuming the upload of %s at byte %d of %d", path, offset, size)
        stalls = 0
        with path.open("rb") as fh:
            while offset < size:
                bar.update(offset)
                try:
                    offset = self._patch(location, fh, offset, min(self.chunk_size, size - offset))
                    stalls = 0
                except (ConnectionFailed, Conflict) as exc:
                    held = self._offset(location)
                    if held is None:
                        raise PgsError(f"the upload {location} is gone (expired?)") from exc
                    stalls = 0 if held > offset else stalls + 1
                    if stalls >= MAX_STALLS:
                        raise
                    log.warning("upload chunk at byte %d broke (%s); resuming at byte %d", offset, exc, held)
                    offset = held
        bar.update(size)
        return location

    def forget(self, path: Path) -> None:
        self._store.put(ResumeStore.key(self._t.url, path), None)

    def _create(self, size: int, filename: str) -> str:
        meta = "filename " + base64.b64encode(filename.encode()).decode()
        r = self._t.request(
            "POST",
            "/v1/uploads",
            safe=False,
            headers={**TUS, "Upload-Length": str(size), "Upload-Metadata": meta},
        )
        return r.headers["Location"]

    def _offset(self, location: str) -> int | None:
        """The service's offset; None when it no longer has the upload."""
        try:
            r = self._t.request("HEAD", location, safe=True, headers=TUS)
        except ApiError as exc:
            if isinstance(exc, NotFound) or exc.status == 410:
                return None
            raise
        return int(r.headers["Upload-Offset"])

    def _patch(self, location: str, fh: BinaryIO, offset: int, length: int) -> int:
        def body() -> Iterator[bytes]:
            fh.seek(offset)
            left = length
            while left > 0:
                block = fh.read(min(READ_BYTES, left))
                if not block:
                    return
                left -= len(block)
                yield block

        r = self._t.request(
            "PATCH",
            location,
            safe=False,
            content=body(),
            headers={
                **TUS,
                "Upload-Offset": str(offset),
                "Content-Length": str(length),
                "Content-Type": "application/offset+octet-stream",
            },
        )
        return int(r.headers["Upload-Offset"])

    def finish(self, location: str, fields: dict[str, str]) -> dict[str, Any]:
        """Turn the upload into a data set and wait for the parse; the upload's final state."""
        self._t.request("POST", f"{location}/dataset", safe=False, json=fields)
        return self.wait(location)

    def wait(self, location: str) -> dict[str, Any]:
        while True:
            upload: dict[str, Any] = self._t.get(location)
            if upload["state"] == "done":
                return upload
            if upload["state"] == "failed":
                error = upload["error"]
                raise api_error(
                    error["status"], {**error, "title": "upload failed", "instance": location}, {}
                )
            time.sleep(POLL_S)
