"""``python -m app restore SRC``: a backup into the installation the ``PGS_*`` settings name.

The target must be fresh (no rows in its database, no stored files, no upload bytes) unless
``force``; no server may run on it (the data dir's lock is held throughout). Every file is
checked against the manifest's size and sha256 while it is written, the database last: a
restore that stops on a corrupted member removes the files it wrote and leaves no database,
so a stopped restore never looks like an installation. A backup of an older schema is brought
forward by the migrations that run when the service starts; one of a newer schema is refused.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from app.backup import database
from app.backup.archive import (
    DATABASE,
    STORE_PREFIX,
    UPLOADS_PREFIX,
    BackupError,
    Entry,
    Manifest,
    Source,
    copy_hashing,
    open_source,
)
from app.core.config import Settings
from app.core.dirlock import DataDirBusy, lock_data_dir
from app.core.files import atomic_write, remove_quietly
from app.core.storage.base import Store
from app.core.storage.local import LocalDirStore

log = logging.getLogger(__name__)

# Where a local store keeps its objects (app/core/storage/__init__.py).
STORE_DIRS = ("datasets", "models", "predictions")


@dataclass(frozen=True)
class RestoreSummary:
    manifest: Manifest
    database: Path


def restore(settings: Settings, source_path: Path, force: bool = False) -> RestoreSummary:
    db = database.sqlite_path(settings.database_url)
    source = open_source(source_path)
    try:
        manifest = source.manifest()
        database.check_revisions(manifest.schema_revisions)
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        try:
            lock = lock_data_dir(settings.data_dir)
        except DataDirBusy as exc:
            raise BackupError(f"{exc}; a restore needs the service stopped") from None
        try:
            store = settings.store
            store.ensure()
            if not force:
                _check_fresh(settings, store, db)
            written: list[Entry] = []
            try:
                _restore_files(settings, store, source, manifest.files, force, written)
                _restore_database(settings, source, manifest.database, db)
            except BaseException:
                _remove(settings, store, written)
                raise
        finally:
            lock.close()
    finally:
        source.close()
    return RestoreSummary(manifest, db)


def _check_fresh(settings: Settings, store: Store, db: Path) -> None:
    """A remote store's keys are checked as they are written (write-once: an existing key
    refuses the write); a local one is looked at here, before anything is written."""
    found: list[str] = []
    if tables := database.tables_with_rows(db):
        found.append(f"the database {db} has rows in {', '.join(tables)}")
    dirs = [settings.uploads_dir]
    if isinstance(store, LocalDirStore):
        dirs += [store.root / d for d in STORE_DIRS]
    found += [f"{d} holds files" for d in dirs if _holds_files(d)]
    if found:
        raise BackupError(
            "the target is not a fresh installation: " + "; ".join(found) + ". Restore into an empty "
            "PGS_DATA_DIR (and database), or pass --force to replace the database and the files the "
            "backup holds (other files stay)"
        )


def _holds_files(d: Path) -> bool:
    return d.is_dir() and any(files for _, _, files in os.walk(d))


def _restore_files(
    settings: Settings, store: Store, source: Source, entries: list[Entry], force: bool, written: list[Entry]
) -> None:
    """Each entry into the store or the uploads dir; ``written`` collects those done."""
    for entry in entries:
        with source.open(entry.name) as src:
            write = _verifying(src, entry)
            if entry.name.startswith(STORE_PREFIX):
                key = entry.name[len(STORE_PREFIX) :]
                if force:
                    store.delete(key)
                try:
                    store.write(key, write)
                except FileExistsError:
                    raise BackupError(
                        f"the target store already holds {key}: it is not a fresh installation "
                        "(--force replaces the backup's keys)"
                    ) from None
            else:
                atomic_write(_upload_path(settings, entry), write)
        written.append(entry)


def _verifying(src: IO[bytes], entry: Entry) -> Callable[[IO[bytes]], None]:
    """A write callback that streams ``src`` and fails (so the write leaves nothing) unless the
    bytes are the manifest's."""

    def write(dst: IO[bytes]) -> None:
        size, sha = copy_hashing(src, dst)
        if (size, sha) != (entry.size, entry.sha256):
            raise BackupError(
                f"{entry.name} in the backup is corrupted: {size} bytes with sha256 {sha}, the "
                f"manifest says {entry.size} bytes with sha256 {entry.sha256}; the restore stopped "
                "and removed what it wrote"
            )

    return write


def _upload_path(settings: Settings, entry: Entry) -> Path:
    return settings.uploads_dir / entry.name[len(UPLOADS_PREFIX) :]


def _remove(settings: Settings, store: Store, written: list[Entry]) -> None:
    store.delete(*(e.name[len(STORE_PREFIX) :] for e in written if e.name.startswith(STORE_PREFIX)))
    remove_quietly(*(_upload_path(settings, e) for e in written if e.name.startswith(UPLOADS_PREFIX)))


def _restore_database(settings: Settings, source: Source, entry: Entry, db: Path) -> None:
    """Verified into a scratch file first: the target database changes only from a snapshot
    known whole."""
    scratch = settings.tmp_dir / "restore-database.sqlite"
    try:
        with source.open(DATABASE) as src:
            atomic_write(scratch, _verifying(src, entry))
        database.restore(scratch, db)
    finally:
        scratch.unlink(missing_ok=True)
    log.info("database restored into %s", db)
