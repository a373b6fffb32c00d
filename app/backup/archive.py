"""A backup's container: a directory or an uncompressed tar of the same members, its manifest,
and streamed copies that hash what they copy.

Members: ``database.sqlite`` (the snapshot), ``store/<key>`` (store objects), ``uploads/<id>.bin``
(unfinished uploads' bytes) and ``manifest.json``, written last. The manifest lists every member
with its size and sha256; a member it does not list is not part of the backup (a tar may hold
copies a later snapshot no longer referenced, see app/backup/make.py) and is never read.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import tarfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

from app.core.files import fsync_dir
from app.core.storage.base import check_key

FORMAT = "pgs-backup/1"
MANIFEST = "manifest.json"
DATABASE = "database.sqlite"
STORE_PREFIX = "store/"
UPLOADS_PREFIX = "uploads/"
_UPLOAD_NAME = re.compile(r"^uploads/[0-9a-f]{32}\.bin$")
COPY_BLOCK = 1024 * 1024


class BackupError(RuntimeError):
    """The backup or the restore cannot go on; the message says why and what to do."""


def check_member(name: str) -> str:
    """A member name a backup may hold: the database, a store key, an upload's bytes. Anything
    else (``..``, an absolute path) is refused before it can name a file outside the target."""
    if name == DATABASE or _UPLOAD_NAME.match(name):
        return name
    if name.startswith(STORE_PREFIX):
        check_key(name[len(STORE_PREFIX) :])
        return name
    raise BackupError(f"the manifest names {name!r}, which is not a member a backup can hold")


@dataclass(frozen=True)
class Entry:
    name: str
    size: int
    sha256: str


@dataclass
class Manifest:
    service_version: str
    schema_revisions: list[str]
    created_at: str
    # How many database snapshots it took until every file the last one references was copied.
    snapshots: int
    database: Entry
    files: list[Entry]
    counts: dict[str, int] = field(default_factory=dict)
    format: str = FORMAT

    def to_json(self) -> bytes:
        return json.dumps(asdict(self), indent=1, sort_keys=True).encode() + b"\n"

    @classmethod
    def from_json(cls, raw: bytes) -> Manifest:
        try:
            doc: dict[str, Any] = json.loads(raw)
            if doc.get("format") != FORMAT:
                raise BackupError(f"not a {FORMAT} backup: its manifest's format is {doc.get('format')!r}")
            return cls(
                service_version=str(doc["service_version"]),
                schema_revisions=[str(r) for r in doc["schema_revisions"]],
                created_at=str(doc["created_at"]),
                snapshots=int(doc["snapshots"]),
                database=_entry(doc["database"]),
                files=[_entry(e) for e in doc["files"]],
                counts={str(k): int(v) for k, v in doc.get("counts", {}).items()},
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise BackupError(f"the backup's manifest is malformed: {exc}") from None


def _entry(doc: dict[str, Any]) -> Entry:
    return Entry(name=check_member(str(doc["name"])), size=int(doc["size"]), sha256=str(doc["sha256"]))


def copy_hashing(src: IO[bytes], dst: IO[bytes]) -> tuple[int, str]:
    """Stream ``src`` into ``dst`` a block at a time; returns the bytes copied and their sha256."""
    digest, size = hashlib.sha256(), 0
    while block := src.read(COPY_BLOCK):
        digest.update(block)
        dst.write(block)
        size += len(block)
    return size, digest.hexdigest()


class _HashingReader:
    """A file read through: what tarfile streams into the archive is hashed on the way."""

    def __init__(self, src: IO[bytes]) -> None:
        self.src, self.digest, self.size = src, hashlib.sha256(), 0

    def read(self, n: int = -1) -> bytes:
        block = self.src.read(n)
        self.digest.update(block)
        self.size += len(block)
        return block


def _size_of(src: IO[bytes]) -> int:
    return os.fstat(src.fileno()).st_size


# -- writing ---------------------------------------------------------------------------------


class Sink:
    """Where a backup is written: ``<dest>.partial`` until :meth:`finish` renames it to ``dest``,
    so a backup that stopped half-way never looks like one."""

    def __init__(self, dest: Path) -> None:
        self.dest = dest
        self.partial = dest.with_name(dest.name + ".partial")
        if dest.exists():
            raise BackupError(f"{dest} exists; give the backup a new name")
        if self.partial.exists():
            raise BackupError(f"{self.partial} exists (a backup that stopped); remove it first")
        dest.parent.mkdir(parents=True, exist_ok=True)

    def add(self, name: str, src: IO[bytes], size: int | None = None) -> Entry:
        """Copy ``src`` (``size`` bytes, or to its end) in as member ``name``."""
        raise NotImplementedError

    def discard(self, name: str) -> None:
        """A member copied earlier that the final snapshot does not reference."""
        raise NotImplementedError

    def finish(self, manifest: Manifest) -> None:
        raise NotImplementedError

    def abort(self) -> None:
        raise NotImplementedError


class DirectorySink(Sink):
    def __init__(self, dest: Path) -> None:
        super().__init__(dest)
        self.partial.mkdir(parents=True)

    def add(self, name: str, src: IO[bytes], size: int | None = None) -> Entry:
        path = self.partial / name
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as dst:
            copied, sha = copy_hashing(src, dst)
            dst.flush()
            os.fsync(dst.fileno())
        return Entry(name, copied, sha)

    def discard(self, name: str) -> None:
        path = self.partial / name
        path.unlink(missing_ok=True)
        # A data set's directory goes with its last file, as in the store.
        for parent in path.parents:
            if parent == self.partial:
                break
            with contextlib.suppress(OSError):  # not empty
                parent.rmdir()

    def finish(self, manifest: Manifest) -> None:
        path = self.partial / MANIFEST
        path.write_bytes(manifest.to_json())
        with open(path, "rb") as fh:
            os.fsync(fh.fileno())
        for dirpath, _dirs, _files in os.walk(self.partial):
            fsync_dir(Path(dirpath))
        os.rename(self.partial, self.dest)
        fsync_dir(self.dest.parent)

    def abort(self) -> None:
        shutil.rmtree(self.partial, ignore_errors=True)


class TarSink(Sink):
    """An uncompressed tar written front to back (no member is ever read back into memory)."""

    def __init__(self, dest: Path) -> None:
        super().__init__(dest)
        self.tar = tarfile.open(self.partial, "w", format=tarfile.PAX_FORMAT)  # noqa: SIM115

    def add(self, name: str, src: IO[bytes], size: int | None = None) -> Entry:
        info = tarfile.TarInfo(name)
        info.size = _size_of(src) if size is None else size
        info.mode = 0o644
        reader = _HashingReader(src)
        self.tar.addfile(info, reader)  # duck-typed: read() is all it uses
        if reader.size != info.size:
            raise BackupError(f"{name} changed size while it was copied ({info.size} -> {reader.size})")
        return Entry(name, reader.size, reader.digest.hexdigest())

    def discard(self, name: str) -> None:
        pass  # a tar cannot drop a member; the manifest does not list it, restore never reads it

    def finish(self, manifest: Manifest) -> None:
        body = manifest.to_json()
        info = tarfile.TarInfo(MANIFEST)
        info.size, info.mode = len(body), 0o644
        self.tar.addfile(info, _BytesReader(body))
        self.tar.close()
        with open(self.partial, "rb") as fh:
            os.fsync(fh.fileno())
        os.rename(self.partial, self.dest)
        fsync_dir(self.dest.parent)

    def abort(self) -> None:
        with contextlib.suppress(Exception):
            self.tar.close()
        self.partial.unlink(missing_ok=True)


class _BytesReader:
    def __init__(self, body: bytes) -> None:
        self.body, self.at = body, 0

    def read(self, n: int = -1) -> bytes:
        end = len(self.body) if n < 0 else self.at + n
        block, self.at = self.body[self.at : end], min(end, len(self.body))
        return block


def open_sink(dest: Path) -> Sink:
    """A tar for a name ending in ``.tar``, a directory otherwise."""
    return TarSink(dest) if dest.name.endswith(".tar") else DirectorySink(dest)


# -- reading ---------------------------------------------------------------------------------


class Source:
    """A finished backup, read member by member."""

    def open(self, name: str) -> contextlib.AbstractContextManager[IO[bytes]]:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def manifest(self) -> Manifest:
        try:
            with self.open(MANIFEST) as fh:
                return Manifest.from_json(fh.read())
        except (FileNotFoundError, KeyError):
            raise BackupError("the backup has no manifest.json: it is incomplete or not a backup") from None


class DirectorySource(Source):
    def __init__(self, root: Path) -> None:
        self.root = root

    def open(self, name: str) -> contextlib.AbstractContextManager[IO[bytes]]:
        return open(self.root / (name if name == MANIFEST else check_member(name)), "rb")


class TarSource(Source):
    def __init__(self, path: Path) -> None:
        try:
            self.tar = tarfile.open(path, "r:")  # noqa: SIM115 - closed by close()
        except tarfile.TarError as exc:
            raise BackupError(f"{path} is not a readable tar: {exc}") from None

    @contextlib.contextmanager
    def _member(self, name: str) -> Iterator[IO[bytes]]:
        try:
            member = self.tar.getmember(name)
        except KeyError:
            raise FileNotFoundError(name) from None
        fh = self.tar.extractfile(member) if member.isfile() else None
        if fh is None:
            raise BackupError(f"the tar member {name!r} is not a regular file")
        with fh:
            yield fh

    def open(self, name: str) -> contextlib.AbstractContextManager[IO[bytes]]:
        return self._member(name if name == MANIFEST else check_member(name))

    def close(self) -> None:
        self.tar.close()


def open_source(path: Path) -> Source:
    if path.is_dir():
        return DirectorySource(path)
    if path.is_file():
        return TarSource(path)
    raise BackupError(f"no backup at {path}")
