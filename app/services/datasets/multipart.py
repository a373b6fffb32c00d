"""Receive a multipart upload by streaming the file part to disk, enforcing a size limit.

Starlette's own form parser has no size limit for files (it spools everything first), so the
service parses the multipart stream itself with python-multipart's push parser: bytes go to a
temp file under the data dir as they arrive, the SHA-256 is computed on the way, and the request
is refused with 413 as soon as the file part passes the limit.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, cast

import anyio.to_thread
from fastapi import Request
from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.requests import ClientDisconnect

from app.core.errors import ProblemError, invalid

log = logging.getLogger(__name__)

FILE_FIELD = "file"
MAX_FIELD_BYTES = 64 * 1024
MAX_FIELDS = 32
# Multipart framing and the small form fields on top of the file itself.
ENVELOPE_ALLOWANCE = 1024 * 1024


def too_large(limit: int) -> ProblemError:
    return ProblemError(
        413, f"the uploaded file exceeds the limit of {limit} bytes", kind="payload-too-large"
    )


@dataclass
class ReceivedUpload:
    fields: dict[str, str] = field(default_factory=dict)
    path: Path | None = None
    filename: str = ""
    size: int = 0
    sha256: str = ""


class _Collector:
    """python-multipart callbacks; file bytes are queued and written by the async caller."""

    def __init__(self, max_file_bytes: int) -> None:
        self.max_file_bytes = max_file_bytes
        self.fields: dict[str, str] = {}
        self.filename: str | None = None
        self.file_seen = False
        self.pending: list[bytes] = []
        self.size = 0
        self.digest = hashlib.sha256()
        self._headers: dict[bytes, bytes] = {}
        self._hname = b""
        self._hvalue = b""
        self._name = ""
        self._is_file = False
        self._data = bytearray()

    def callbacks(self) -> dict[str, Any]:
        return {
            "on_part_begin": self.on_part_begin,
            "on_part_data": self.on_part_data,
            "on_part_end": self.on_part_end,
            "on_header_field": self.on_header_field,
            "on_header_value": self.on_header_value,
            "on_header_end": self.on_header_end,
            "on_headers_finished": self.on_headers_finished,
        }

    def on_part_begin(self) -> None:
        self._headers, self._data, self._is_file, self._name = {}, bytearray(), False, ""

    def on_header_field(self, data: bytes, start: int, end: int) -> None:
        self._hname += data[start:end]

    def on_header_value(self, data: bytes, start: int, end: int) -> None:
        self._hvalue += data[start:end]

    def on_header_end(self) -> None:
        self._headers[self._hname.lower()] = self._hvalue
        self._hname, self._hvalue = b"", b""

    def on_headers_finished(self) -> None:
        _, opts = parse_options_header(self._headers.get(b"content-disposition", b""))
        if b"name" not in opts:
            raise invalid("a multipart part has no name in its Content-Disposition header")
        self._name = opts[b"name"].decode("utf-8", "replace")
        if self._name == FILE_FIELD:
            if self.file_seen:
                raise invalid("send exactly one part named 'file'")
            self.file_seen = True
            self._is_file = True
            self.filename = opts.get(b"filename", b"").decode("utf-8", "replace")
        elif len(self.fields) >= MAX_FIELDS:
            raise invalid(f"too many form fields (at most {MAX_FIELDS})")

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        chunk = data[start:end]
        if self._is_file:
            self.size += len(chunk)
            if self.size > self.max_file_bytes:
                raise too_large(self.max_file_bytes)
            self.pending.append(chunk)
        else:
            self._data.extend(chunk)
            if len(self._data) > MAX_FIELD_BYTES:
                raise invalid(f"form field {self._name!r} is longer than {MAX_FIELD_BYTES} bytes")

    def on_part_end(self) -> None:
        if not self._is_file:
            self.fields[self._name] = self._data.decode("utf-8", "replace")


def _write_all(fh: IO[bytes], digest: Any, chunks: list[bytes]) -> None:
    # Hashing and writing in a worker thread: both release the GIL on large buffers, so a
    # large upload leaves the event loop (and the predictions it serves) free.
    for c in chunks:
        digest.update(c)
        fh.write(c)


async def _stream_to(fh: IO[bytes], request: Request, parser: Any, collector: _Collector) -> None:
    try:
        async for chunk in request.stream():
            try:
                parser.write(chunk)
            except FormParserError as exc:
                raise invalid(f"malformed multipart body: {exc}") from exc
            if collector.pending:
                chunks, collector.pending = collector.pending, []
                await anyio.to_thread.run_sync(_write_all, fh, collector.digest, chunks)
    except ClientDisconnect:
        # Not a server error: one line in the log, and nothing kept.
        log.info(
            "client %s closed the connection during an upload (%d bytes received); nothing stored",
            _peer(request),
            collector.size,
        )
        raise ProblemError(
            400, "the client closed the connection before the upload ended", kind="client-disconnected"
        ) from None
    parser.finalize()


def _peer(request: Request) -> str:
    return f"{request.client.host}:{request.client.port}" if request.client else "?"


async def receive_upload(request: Request, tmp_dir: Path, max_file_bytes: int) -> ReceivedUpload:
    """Stream a multipart/form-data request; the caller owns (and must delete) ``result.path``."""
    ctype, params = parse_options_header(request.headers.get("content-type", ""))
    if ctype != b"multipart/form-data":
        raise ProblemError(
            415,
            "send the data set as multipart/form-data with a 'file' part",
            kind="unsupported-media-type",
        )
    if b"boundary" not in params:
        raise invalid("multipart/form-data without a boundary parameter")
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > max_file_bytes + ENVELOPE_ALLOWANCE:
        # Refuse before reading a byte; the streaming check below covers chunked bodies.
        raise too_large(max_file_bytes)

    collector = _Collector(max_file_bytes)
    parser = MultipartParser(params[b"boundary"], cast(Any, collector.callbacks()))
    tmp_dir.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=tmp_dir, prefix="upload-", suffix=".part")
    path = Path(name)
    ok = False
    try:
        with os.fdopen(fd, "wb") as fh:
            await _stream_to(fh, request, parser, collector)
        if not collector.file_seen:
            raise invalid(
                "no file part: send the data set in a multipart part named 'file'",
                errors=[
                    {
                        "loc": ["body", "file"],
                        "field": "body.file",
                        "msg": "Field required",
                        "type": "missing",
                    }
                ],
            )
        ok = True
        return ReceivedUpload(
            fields=collector.fields,
            path=path,
            filename=collector.filename or "",
            size=collector.size,
            sha256=collector.digest.hexdigest(),
        )
    finally:
        if not ok:
            path.unlink(missing_ok=True)
