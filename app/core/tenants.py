"""Who calls: API keys, the owner each belongs to and the role it has.

A key is configured as ``owner:role:key`` in ``PGS_API_KEYS`` (comma-separated) or one per line
in ``PGS_API_KEYS_FILE``; a bare key (no colon) belongs to the owner ``default`` as an admin, so a
deployment that predates owners keeps working unchanged. The roles:

- ``admin`` sees and manages every owner's objects;
- ``member`` sees and manages its own owner's objects only;
- ``reader`` reads its own owner's objects, and predicts with its models.

Every object (data set, upload, job, model, alias, study, batch prediction) belongs to one owner;
another owner's object does not exist for a caller (404, and absent from lists). Without keys
(loopback only) every caller is the admin of ``default``.

The keys file is read again when it changes (at most once a second), so a key rotates without a
restart: add the new key under the same owner, move the clients over, remove the old one.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

log = logging.getLogger(__name__)

Role = Literal["admin", "member", "reader"]
ROLES: tuple[Role, ...] = ("admin", "member", "reader")
DEFAULT_OWNER = "default"
OWNER_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
# How often a changed keys file is noticed.
RELOAD_INTERVAL_S = 1.0


def key_id_of(key: str) -> str:
    """A stable, non-secret name for a key (idempotency keys and the audit log name it)."""
    return "key:" + hashlib.sha256(key.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Caller:
    owner: str
    role: Role
    # The key's non-secret name, or "anonymous" on a server without keys.
    key_id: str

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    def sees(self, owner: str | None) -> bool:
        """Whether an object of ``owner`` exists for this caller."""
        return self.is_admin or owner == self.owner


ANONYMOUS = Caller(owner=DEFAULT_OWNER, role="admin", key_id="anonymous")


@dataclass(frozen=True)
class KeyEntry:
    key: bytes
    caller: Caller


class KeyConfigError(ValueError):
    """A malformed key entry (the message names it by position, never by the key itself)."""


def parse_entries(text: str, separator: str, source: str) -> list[KeyEntry]:
    """The keys of ``text``: entries split by ``separator``, blank ones and ``#`` comments
    skipped (in a file)."""
    entries = []
    for number, raw in enumerate(text.split(separator), start=1):
        entry = raw.split("#", 1)[0].strip() if separator == "\n" else raw.strip()
        if entry:
            entries.append(_entry(entry, f"{source} entry {number}"))
    return entries


def _entry(entry: str, where: str) -> KeyEntry:
    if ":" not in entry:
        return KeyEntry(entry.encode(), Caller(DEFAULT_OWNER, "admin", key_id_of(entry)))
    owner, role, key = (entry.split(":", 2) + ["", ""])[:3]
    if not OWNER_PATTERN.match(owner):
        raise KeyConfigError(
            f"{where}: the owner must match {OWNER_PATTERN.pattern} (lower case), as in owner:role:key"
        )
    if role not in ROLES:
        raise KeyConfigError(f"{where}: the role must be one of {', '.join(ROLES)}, as in owner:role:key")
    if not key.strip():
        raise KeyConfigError(f"{where}: the key is empty, as in owner:role:key")
    return KeyEntry(key.encode(), Caller(owner, role, key_id_of(key)))


class KeyRing:
    """The configured keys: those of PGS_API_KEYS, and those of PGS_API_KEYS_FILE as the file is
    now. A file that becomes unreadable or malformed keeps the last good keys (and logs why)."""

    def __init__(self, inline: str, file: Path | None) -> None:
        self._inline = parse_entries(inline, ",", "PGS_API_KEYS")
        self._file = file
        self._file_entries: list[KeyEntry] = []
        self._stamp: tuple[float, int] | None = None
        self._checked = 0.0
        self._lock = threading.Lock()
        if file is not None:
            self._file_entries = parse_entries(file.read_text(), "\n", str(file))
            self._stamp = _stamp(file)

    @property
    def enabled(self) -> bool:
        """Whether callers must present a key (a keys file turns keys on even while empty)."""
        return bool(self._inline) or self._file is not None

    def caller_for(self, given: str) -> Caller | None:
        """The caller a presented key is, or None. Every key is compared in constant time, so
        timing does not reveal a near match."""
        self._reload_if_changed()
        token = given.encode()
        found = None
        for entry in [*self._inline, *self._file_entries]:
            if hmac.compare_digest(token, entry.key) and found is None:
                found = entry.caller
        return found

    def _reload_if_changed(self) -> None:
        if self._file is None:
            return
        now = time.monotonic()
        with self._lock:
            if now - self._checked < RELOAD_INTERVAL_S:
                return
            self._checked = now
            try:
                stamp = _stamp(self._file)
                if stamp == self._stamp:
                    return
                self._file_entries = parse_entries(self._file.read_text(), "\n", str(self._file))
                self._stamp = stamp
                log.info("API keys reloaded from %s: %d keys", self._file, len(self._file_entries))
            except (OSError, KeyConfigError) as exc:
                log.error("API keys file %s not reloaded, the previous keys stay: %s", self._file, exc)


def _stamp(path: Path) -> tuple[float, int]:
    st = path.stat()
    return st.st_mtime, st.st_size
