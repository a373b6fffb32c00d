"""Resumable uploads (the tus 1.0 protocol's state): create, append, delete, expire.

An upload is a row (owner, declared length, expiry, state) and a file under the uploads dir
that grows as bytes arrive. The file's size is the upload's offset: a PATCH writes straight into
it, so whatever a dropped connection delivered is kept and the next HEAD tells the client where
to resume, and a server restart loses nothing. One writer at a time per upload (an advisory lock
on the file, which also holds across API processes on one host).
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import fcntl
import hashlib
import logging
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import anyio.to_thread
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from app.core.config import Settings
from app.core.errors import ProblemError, conflict
from app.core.files import remove_quietly
from app.db.engine import SessionFactory, transaction
from app.db.tables import Upload, UploadState, utcnow

log = logging.getLogger(__name__)

# tus Upload-Checksum algorithms (the checksum extension); sha1 is the one every client has.
CHECKSUM_ALGORITHMS = ("sha1", "sha256", "md5")
# Bytes handed to a worker thread per write: large enough that the thread hop is cheap.
WRITE_BATCH_BYTES = 4 * 1024 * 1024


def upload_path(settings: Settings, upload_id: str) -> Path:
    return settings.uploads_dir / f"{upload_id}.bin"


def offset_of(settings: Settings, upload: Upload) -> int:
    try:
        return upload_path(settings, upload.id).stat().st_size
    except FileNotFoundError:
        return 0


def reserved_bytes(session: Session, owner: str, excluding: str | None = None) -> int:
    """What the owner's uploads that are not yet data sets hold (their declared lengths)."""
    stmt = select(func.coalesce(func.sum(Upload.length), 0)).where(
        Upload.owner == owner, Upload.state.in_(UploadState.HOLDING)
    )
    if excluding is not None:
        stmt = stmt.where(Upload.id != excluding)
    return int(session.scalar(stmt) or 0)


def check_room(session: Session, settings: Settings, owner: str, length: int) -> None:
    """413 unless one more upload of ``length`` bytes fits the per-upload cap and the quota."""
    if length > settings.max_upload_bytes:
        raise ProblemError(
            413,
            f"the upload of {length} bytes exceeds the limit of "
            f"{settings.max_upload_bytes} bytes (PGS_MAX_UPLOAD_BYTES)",
            kind="payload-too-large",
        )
    held = reserved_bytes(session, owner)
    if held + length > settings.upload_quota_bytes:
        raise ProblemError(
            413,
            f"the upload of {length} bytes does not fit the upload quota: owner {owner!r}'s "
            f"unfinished uploads hold {held} of {settings.upload_quota_bytes} bytes "
            "(PGS_UPLOAD_QUOTA_BYTES); finish or delete some first",
            kind="quota-exceeded",
        )


def create(
    factory: SessionFactory,
    settings: Settings,
    owner: str,
    length: int,
    metadata_header: str,
    source: str | None = None,
    state: str = UploadState.RECEIVING,
) -> Upload:
    """A new upload reserving ``length`` bytes of the owner's quota (413 when over)."""
    metadata = parse_metadata(metadata_header)
    now = utcnow()
    settings.uploads_dir.mkdir(parents=True, exist_ok=True)
    with transaction(factory) as s:
        check_room(s, settings, owner, length)
        upload = Upload(
            id=uuid.uuid4().hex,
            owner=owner,
            length=length,
            filename=(metadata.get("filename") or "")[:255],
            metadata_header=metadata_header,
            source=source,
            state=state,
            created_at=now,
            expires_at=now + dt.timedelta(seconds=settings.upload_expiry_s),
            heartbeat_at=now if state == UploadState.PARSING else None,
        )
        s.add(upload)
    try:
        upload_path(settings, upload.id).touch()
    except OSError:  # a full disk: no row without its file
        remove(factory, settings, upload.id)
        raise
    return upload


def parse_metadata(header: str) -> dict[str, str]:
    """tus Upload-Metadata: comma-separated ``key base64(value)`` pairs (a value may be absent)."""
    result: dict[str, str] = {}
    for pair in filter(None, (p.strip() for p in header.split(","))):
        key, _, value = pair.partition(" ")
        try:
            result[key] = base64.b64decode(value.strip(), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise ProblemError(
                400,
                f"Upload-Metadata: the value of {key!r} is not base64 of UTF-8 text",
                kind="invalid-metadata",
            ) from None
    return result


def metadata_header(values: dict[str, str]) -> str:
    return ",".join(f"{k} {base64.b64encode(v.encode()).decode()}" for k, v in values.items())


def remove(factory: SessionFactory, settings: Settings, upload_id: str) -> None:
    """The row first, then the bytes: a crash in between leaves a file the sweep removes."""
    with transaction(factory) as s:
        s.execute(delete(Upload).where(Upload.id == upload_id))
    remove_quietly(upload_path(settings, upload_id))


def sweep_expired(factory: SessionFactory, settings: Settings) -> int:
    """Delete uploads past their expiry (those being parsed run to the end first) and files no
    row owns (a crash between removing a row and its file); returns how many uploads."""
    with factory() as s:
        expired = s.scalars(
            select(Upload.id).where(Upload.expires_at < utcnow(), Upload.state != UploadState.PARSING)
        ).all()
    for upload_id in expired:
        log.info("upload %s expired: deleted", upload_id)
        remove(factory, settings, upload_id)
    _remove_orphan_files(factory, settings)
    return len(expired)


# Bound parameters per query: SQLite builds before 3.32 allow 999.
_IDS_PER_QUERY = 500


def _remove_orphan_files(factory: SessionFactory, settings: Settings) -> None:
    """The files of the uploads dir whose row does not exist. The rows are read after the
    directory: :func:`create` commits a row before it creates the file, so a file the scan saw
    has its row by then (reading the rows first lost uploads created between the two reads)."""
    if not settings.uploads_dir.is_dir():
        return
    files = {
        entry.name[:-4]: Path(entry.path)
        for entry in os.scandir(settings.uploads_dir)
        if entry.name.endswith(".bin")
    }
    if not files:
        return
    ids, known = list(files), set[str]()
    with factory() as s:
        for start in range(0, len(ids), _IDS_PER_QUERY):
            chunk = ids[start : start + _IDS_PER_QUERY]
            known.update(s.scalars(select(Upload.id).where(Upload.id.in_(chunk))).all())
    for upload_id, path in files.items():
        if upload_id not in known:
            remove_quietly(path)


# -- appending (a tus PATCH) ---------------------------------------------------------------------


@contextmanager
def exclusive(path: Path) -> Iterator[IO[bytes]]:
    """The upload's file for writing at its end, or 409 while another request writes to it."""
    try:
        # Unbuffered: a write that fails leaves no buffered bytes behind to land after the rewind.
        fh = open(path, "r+b", buffering=0)  # noqa: SIM115 (closed below, after the lock)
    except FileNotFoundError:
        raise ProblemError(
            410, "the upload's bytes are gone (it expired or was deleted)", kind="gone"
        ) from None
    try:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise conflict(
                "another request is writing to this upload; HEAD it for the offset "
                "and resume when that request has ended"
            ) from None
        fh.seek(0, os.SEEK_END)
        yield fh
    finally:
        fh.close()


class Checksum:
    """The tus checksum extension: the PATCH body's digest must match Upload-Checksum."""

    def __init__(self, header: str) -> None:
        algorithm, _, value = header.strip().partition(" ")
        if algorithm not in CHECKSUM_ALGORITHMS:
            raise ProblemError(
                400,
                f"Upload-Checksum algorithm {algorithm!r} is not supported; "
                f"use one of {', '.join(CHECKSUM_ALGORITHMS)}",
                kind="unsupported-checksum",
            )
        try:
            self.expected = base64.b64decode(value.strip(), validate=True)
        except binascii.Error:
            raise ProblemError(
                400, "Upload-Checksum: the digest is not base64", kind="invalid-checksum"
            ) from None
        self.algorithm = algorithm
        self.digest = hashlib.new(algorithm)

    def matches(self) -> bool:
        return self.digest.digest() == self.expected


def _write(fh: IO[bytes], chunks: list[bytes], checksum: Checksum | None) -> None:
    for c in chunks:
        if checksum is not None:
            checksum.digest.update(c)
        view = memoryview(c)
        while view:  # an unbuffered write may take part of the bytes (the disk filling up)
            view = view[fh.write(view) or 0 :]


async def _copy(fh: IO[bytes], body: AsyncIterator[bytes], room: int, checksum: Checksum | None) -> bool:
    """Write ``body`` at the file's end, up to ``room`` bytes; True when it went past ``room``.

    Bytes are written as they come (a batch per thread hop), so a body that ends early (the
    client went away, a timeout) leaves everything before the break on disk."""
    pending: list[bytes] = []
    size = written = 0
    over = False
    try:
        async for chunk in body:
            if written + size + len(chunk) > room:
                chunk, over = chunk[: room - written - size], True
            pending.append(chunk)
            size += len(chunk)
            if size >= WRITE_BATCH_BYTES or over:
                batch, pending, written, size = pending, [], written + size, 0
                await anyio.to_thread.run_sync(_write, fh, batch, checksum)
            if over:
                break
    finally:
        if pending:
            await anyio.to_thread.run_sync(_write, fh, pending, checksum)
    return over


def _rewind(fh: IO[bytes], offset: int) -> None:
    fh.truncate(offset)
    fh.seek(offset)


async def append(fh: IO[bytes], body: AsyncIterator[bytes], room: int, checksum: Checksum | None) -> None:
    """Write ``body`` at the file's end (opened by :func:`exclusive`), up to ``room`` bytes.

    A body that ends early keeps what arrived (the client resumes from the next HEAD). More
    than ``room`` is a 413 after the bytes that fit. With a checksum only a whole, matching body
    is kept: a mismatch is a 460, and a broken body cannot be checked, so it is dropped too. A
    write that fails (a full disk) keeps nothing of this body: the offset stays where it was,
    and the space it took is free again.
    """
    start = fh.tell()
    try:
        over = await _copy(fh, body, room, checksum)
    except OSError:
        _rewind(fh, start)
        raise
    except BaseException:
        if checksum is not None:
            _rewind(fh, start)
        await anyio.to_thread.run_sync(os.fsync, fh.fileno())
        raise
    if checksum is not None and (over or not checksum.matches()):
        _rewind(fh, start)
    await anyio.to_thread.run_sync(os.fsync, fh.fileno())
    if checksum is not None and not checksum.matches():
        raise ProblemError(
            460,
            f"the body's {checksum.algorithm} digest does not match Upload-Checksum; nothing of it was kept",
            title="Checksum Mismatch",
            kind="checksum-mismatch",
        )
    if over:
        raise ProblemError(
            413,
            "the body goes past the upload's length; the bytes up to it were kept",
            kind="payload-too-large",
        )


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(WRITE_BATCH_BYTES):
            digest.update(block)
    return digest.hexdigest()


def describe(settings: Settings, upload: Upload) -> dict[str, Any]:
    """The upload as the API shows it (UploadRead)."""
    return {
        "id": upload.id,
        "state": upload.state,
        "length": upload.length,
        "offset": offset_of(settings, upload) if upload.state == UploadState.RECEIVING else upload.length,
        "filename": upload.filename,
        "source": upload.source,
        "created_at": upload.created_at,
        "expires_at": upload.expires_at,
        "dataset_id": upload.dataset_id,
        "error": upload.error,
    }
