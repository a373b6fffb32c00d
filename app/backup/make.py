"""``python -m app backup DEST``: the database and the files it references, while the service runs.

The order is what makes it consistent: first a snapshot of the database (one committed state,
time T), then a copy of every file that snapshot's rows reference. Files created after T are not
referenced and not copied. Store keys are write-once (app/core/storage), so a key copied after T
holds exactly the bytes it held at T. A referenced file can only be missing when the service
deleted its object after T (rows go before their files): then a newer snapshot is taken and the
files it references that are not copied yet are copied, until one snapshot's files are all
there. The backup is that last snapshot with every file it references, byte for byte.

An unfinished upload's bytes grow in place: they are copied under the upload's lock, so the copy
ends between two PATCH requests (a request that arrives meanwhile answers 409 and the client
resumes), and the restored upload's offset is the size copied.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import logging
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from app.backup import database
from app.backup.archive import DATABASE, STORE_PREFIX, UPLOADS_PREFIX, BackupError, Entry, Manifest, open_sink
from app.backup.references import references
from app.core.config import Settings
from app.core.storage.base import Store
from app.version import VERSION

log = logging.getLogger(__name__)

# Snapshots taken before giving up: each retry means an object was deleted between a snapshot
# and its copy, which takes a delete racing the copy of that very object.
MAX_SNAPSHOTS = 5
# How long to wait for a PATCH that is writing to an upload before copying its bytes anyway
# as none (the restored upload resumes from offset 0).
UPLOAD_LOCK_WAIT_S = 30.0


@dataclass(frozen=True)
class BackupSummary:
    dest: Path
    manifest: Manifest


def backup(settings: Settings, dest: Path, upload_lock_wait_s: float = UPLOAD_LOCK_WAIT_S) -> BackupSummary:
    db = database.sqlite_path(settings.database_url)
    store = settings.store
    sink = open_sink(dest)
    scratch = sink.partial.with_name(sink.partial.name + ".db")
    try:
        copied: dict[str, Entry] = {}
        missing_before: set[str] = set()
        for attempt in range(1, MAX_SNAPSHOTS + 1):
            database.snapshot(db, scratch)
            refs = references(scratch, store)
            missing = set()
            for name in refs.names():
                if name in copied:
                    continue
                try:
                    with _open_member(settings, store, name, upload_lock_wait_s) as src:
                        copied[name] = sink.add(name, src)
                except FileNotFoundError:
                    missing.add(name)
            if not missing or _settled(missing, missing_before):
                break
            log.info(
                "snapshot %d: %d referenced files were deleted since; taking a newer one",
                attempt,
                len(missing),
            )
            missing_before = missing
        else:
            raise BackupError(
                f"after {MAX_SNAPSHOTS} snapshots, files they reference were still being deleted "
                f"(e.g. {sorted(missing)[0]}); retry when the service is less busy"
            )
        for name in set(copied) - set(refs.names()):
            sink.discard(name)  # copied for an earlier snapshot, gone from the last one
        with open(scratch, "rb") as fh:
            db_entry = sink.add(DATABASE, fh)
        manifest = Manifest(
            service_version=VERSION,
            schema_revisions=database.schema_revisions(scratch),
            created_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            snapshots=attempt,
            database=db_entry,
            files=[copied[n] for n in refs.names() if n in copied],
            counts=refs.counts,
        )
        sink.finish(manifest)
    except BaseException:
        sink.abort()
        raise
    finally:
        scratch.unlink(missing_ok=True)
    return BackupSummary(dest, manifest)


def _settled(missing: set[str], missing_before: set[str]) -> bool:
    """Only upload files are missing, the same ones as at the previous snapshot: those uploads
    have no bytes on disk (the service answers offset 0 for them too); the backup holds them so."""
    return all(n.startswith(UPLOADS_PREFIX) for n in missing) and missing <= missing_before


def _open_member(
    settings: Settings, store: Store, name: str, lock_wait_s: float
) -> AbstractContextManager[IO[bytes]]:
    if name.startswith(STORE_PREFIX):
        return store.open(name[len(STORE_PREFIX) :])
    return _locked_upload(settings.uploads_dir / name[len(UPLOADS_PREFIX) :], lock_wait_s)


@contextmanager
def _locked_upload(path: Path, wait_s: float) -> Iterator[IO[bytes]]:
    """The upload's file under a shared lock: a PATCH holds it exclusively while it appends
    (app/services/datasets/resumable.py), so the bytes read end where a request ended."""
    with open(path, "rb") as fh:
        if _lock_shared(fh, wait_s):
            try:
                yield fh
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
            return
    log.warning("upload %s was written to for over %.0f s; backed up without its bytes", path.name, wait_s)
    with open("/dev/null", "rb") as empty:
        yield empty


def _lock_shared(fh: IO[bytes], wait_s: float) -> bool:
    deadline = time.monotonic() + wait_s
    while True:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.1)
