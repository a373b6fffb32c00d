"""A finished upload or an import becomes a data set: fetch (a URL), checksum, parse, record.

This runs off the request (a multi-GiB file takes minutes to parse): the finish or import
request marks the upload "parsing" and answers 202; the upload service (app/background/
upload_service.py) runs :func:`fetch` (a URL import) and then :func:`run` in a thread, refreshes
the heartbeat of what it runs, and takes over a parse whose process died (its heartbeat older
than ``lease_s``).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import delete, select, update

from app.core.config import Settings
from app.core.errors import ProblemError, conflict
from app.core.files import remove_quietly
from app.core.storage.base import STORAGE_ERRNOS
from app.db.engine import SessionFactory, transaction
from app.db.tables import Dataset, Upload, UploadState, utcnow
from app.services.datasets import download, imports, resumable, shards
from app.services.datasets.create import DatasetOptions, store_dataset

log = logging.getLogger(__name__)

T = TypeVar("T")


def start(factory: SessionFactory, settings: Settings, upload: Upload, options: DatasetOptions) -> None:
    """Mark a received (or failed) upload "parsing" with these options; 409 unless complete."""
    if upload.state not in (UploadState.RECEIVING, UploadState.FAILED):
        raise conflict(f"the upload is {upload.state}; only a received upload can be finished")
    if upload.source is not None and upload.state == UploadState.FAILED:
        raise conflict("a failed import keeps no bytes: import the source again")
    if upload.source is None and not resumable.upload_path(settings, upload.id).exists():
        raise ProblemError(410, "the upload's bytes are gone: create the upload again", kind="gone")
    offset = resumable.offset_of(settings, upload)
    if upload.source is None and offset != upload.length:
        raise conflict(
            f"the upload has {offset} of its {upload.length} bytes; send the rest "
            "first (HEAD it for the offset)"
        )
    with transaction(factory) as s:
        changed = s.execute(
            update(Upload)
            .where(Upload.id == upload.id, Upload.state == upload.state)
            .values(
                state=UploadState.PARSING,
                options=options.model_dump(exclude_none=True),
                error=None,
                heartbeat_at=utcnow(),
            )
        ).rowcount  # type: ignore[attr-defined]
    if not changed:
        raise conflict("the upload changed meanwhile (finished by another request?)")


def parsing(factory: SessionFactory, upload_id: str) -> Upload | None:
    """The upload (detached) if it is still to be turned into a data set."""
    with factory() as s:
        upload = s.get(Upload, upload_id)
        if upload is None or upload.state != UploadState.PARSING:
            return None
        s.expunge(upload)
        return upload


def needs_download(upload: Upload) -> bool:
    return upload.source is not None and imports.is_url(upload.source)


def fetch(factory: SessionFactory, settings: Settings, upload: Upload) -> bool:
    """Download a URL import's bytes into the upload's file; False when that failed (recorded)."""
    source, target = upload.source or "", resumable.upload_path(settings, upload.id)

    def step() -> int:
        url = imports.check_source(settings, source)  # the roots may have changed
        return download.download(settings, url, target, upload.length)

    return _attempt(factory, settings, upload, step) is not None


def run(factory: SessionFactory, settings: Settings, upload: Upload) -> None:
    """Turn the upload (a URL import's bytes fetched already) into a data set, or record why not
    (state "failed", error)."""
    stored = _attempt(factory, settings, upload, lambda: _store(factory, settings, upload))
    if stored is None:
        return
    dataset, size = stored
    with transaction(factory) as s:
        kept = s.execute(
            update(Upload)
            .where(Upload.id == upload.id, Upload.state == UploadState.PARSING)
            .values(state=UploadState.DONE, dataset_id=dataset.id, length=size, heartbeat_at=None)
        ).rowcount  # type: ignore[attr-defined]
        if not kept:  # the upload was deleted while it was parsed: nobody wants the data set
            s.execute(delete(Dataset).where(Dataset.id == dataset.id))
    # The data set has its own copy now; the row stays (with its dataset_id) until it expires.
    remove_quietly(resumable.upload_path(settings, upload.id))
    if not kept:
        shards.delete_dataset(settings.store, dataset.file_name)
        log.info("upload %s was deleted while it was parsed: its data set is discarded", upload.id)
        return
    log.info("upload %s: data set %d (%d bytes)", upload.id, dataset.id, size)


def _store(factory: SessionFactory, settings: Settings, upload: Upload) -> tuple[Dataset, int]:
    path, size = _bytes_of(settings, upload)
    sha256 = resumable.sha256_of(path)
    options = DatasetOptions.model_validate(upload.options or {})
    return store_dataset(factory, settings, path, options, upload.filename, sha256, size, upload.owner), size


def _attempt(factory: SessionFactory, settings: Settings, upload: Upload, step: Callable[[], T]) -> T | None:
    """``step()``, or None when it failed: then the upload is failed with the reason."""
    try:
        return step()
    except ProblemError as exc:
        _fail(factory, settings, upload, exc.status, exc.detail)
    except OSError as exc:
        # Failed, never retried: a parse retried on an error that stays (a file gone) would
        # keep the upload "parsing" for good.
        if exc.errno in STORAGE_ERRNOS:
            _fail(factory, settings, upload, 507, f"the server cannot store the data set ({exc})")
        elif isinstance(exc, FileNotFoundError):
            _fail(factory, settings, upload, 410, f"the bytes to parse are gone ({exc.filename})")
        else:
            log.exception("upload %s: failed", upload.id)
            _fail(factory, settings, upload, 500, f"the bytes could not be read ({exc.strerror})")
    except Exception:
        log.exception("upload %s: failed", upload.id)
        _fail(factory, settings, upload, 500, "internal error; see the server log")
    return None


def _bytes_of(settings: Settings, upload: Upload) -> tuple[Path, int]:
    """The file to parse and its size: an imported path as it is, else the upload's file."""
    if upload.source is None or imports.is_url(upload.source):
        target = resumable.upload_path(settings, upload.id)
        return target, target.stat().st_size
    path = Path(imports.check_source(settings, upload.source))  # the roots may have changed
    return path, path.stat().st_size


def _fail(factory: SessionFactory, settings: Settings, upload: Upload, status: int, detail: str) -> None:
    """Record why. An upload keeps its bytes (it can be finished again with other options); an
    import keeps none and reserves nothing (it is retried by importing again)."""
    log.info("upload %s: failed (%d) %s", upload.id, status, detail)
    values: dict[str, Any] = {
        "state": UploadState.FAILED,
        "heartbeat_at": None,
        "error": {"status": status, "detail": detail},
    }
    if upload.source is not None:
        values["length"] = 0
        remove_quietly(resumable.upload_path(settings, upload.id))
    with transaction(factory) as s:  # nothing when the upload was deleted meanwhile
        s.execute(
            update(Upload).where(Upload.id == upload.id, Upload.state == UploadState.PARSING).values(**values)
        )


def refresh(factory: SessionFactory, upload_ids: set[str]) -> None:
    with transaction(factory) as s:
        s.execute(
            update(Upload)
            .where(Upload.id.in_(upload_ids), Upload.state == UploadState.PARSING)
            .values(heartbeat_at=utcnow())
        )


def claim_stale(factory: SessionFactory, lease_s: float) -> list[str]:
    """Parses no live process runs (heartbeat older than ``lease_s``), now this process's."""
    cutoff = utcnow() - dt.timedelta(seconds=lease_s)
    claimed = []
    with factory() as s:
        stale = s.scalars(
            select(Upload.id).where(Upload.state == UploadState.PARSING, Upload.heartbeat_at < cutoff)
        ).all()
    for upload_id in stale:
        with transaction(factory) as s:
            # Conditional: of several processes sweeping at once, one wins.
            won = s.execute(
                update(Upload)
                .where(
                    Upload.id == upload_id, Upload.state == UploadState.PARSING, Upload.heartbeat_at < cutoff
                )
                .values(heartbeat_at=utcnow())
            ).rowcount  # type: ignore[attr-defined]
        if won:
            claimed.append(upload_id)
    return claimed
