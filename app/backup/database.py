"""The SQLite side of a backup: an online snapshot, its schema revisions, and putting a snapshot
in place as a fresh installation's database.

Both directions use SQLite's online backup API, never a file copy: a copy of ``pgs.db`` taken
while the service writes can miss pages still in the WAL or mix two transactions. The backup
API reads every page within one read transaction (WAL readers do not block writers, so the
service goes on), which is one committed state of the whole database.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError
from sqlalchemy.engine.url import make_url

from app.backup.archive import BackupError
from app.db.engine import alembic_config

# How long the snapshot waits for a lock (only a schema change or a checkpoint in truncate mode
# takes one that blocks readers); the service's own busy timeout is 15 s.
BUSY_TIMEOUT_S = 30.0

PG_REFUSAL = (
    "PGS_DATABASE_URL is a PostgreSQL database: this command backs up the SQLite database only. "
    "Back PostgreSQL up with pg_dump and the store with the store's own tools (docs/how-to/backup.md)."
)


def sqlite_path(database_url: str) -> Path:
    """The file of a ``sqlite:///`` URL; BackupError for another database."""
    url = make_url(database_url)
    if url.get_backend_name() != "sqlite":
        raise BackupError(PG_REFUSAL)
    if not url.database or url.database == ":memory:":
        raise BackupError(f"{database_url} is not a database file")
    return Path(url.database)


def snapshot(database: Path, dest: Path) -> None:
    """A consistent copy of the live database ``database`` in ``dest`` (created anew), as one
    self-contained file (rollback journal, not WAL: nothing beside it is needed)."""
    if not database.is_file():
        raise BackupError(f"no database at {database}: is PGS_DATA_DIR / PGS_DATABASE_URL the service's?")
    dest.unlink(missing_ok=True)
    src = sqlite3.connect(database, timeout=BUSY_TIMEOUT_S)
    dst = sqlite3.connect(dest)
    try:
        src.backup(dst)  # pages=-1: every page in one step, so within one read transaction
        dst.execute("PRAGMA journal_mode=DELETE")
        ok = dst.execute("PRAGMA quick_check").fetchone()[0]
        if ok != "ok":
            raise BackupError(f"the snapshot of {database} fails SQLite's quick_check: {ok}")
    finally:
        dst.close()
        src.close()


def schema_revisions(database: Path) -> list[str]:
    """The alembic revisions the database is at (several when migrations branched)."""
    conn = sqlite3.connect(database)
    try:
        return sorted(r[0] for r in conn.execute("SELECT version_num FROM alembic_version"))
    except sqlite3.DatabaseError as exc:
        raise BackupError(f"{database} has no schema revision ({exc}): not a service database") from None
    finally:
        conn.close()


def check_revisions(revisions: list[str]) -> None:
    """Refuse a backup whose schema this service does not know (taken by a newer version): the
    start-up migrations can bring an older schema forward, never a newer one back."""
    scripts = ScriptDirectory.from_config(alembic_config())
    for revision in revisions:
        try:
            known = scripts.get_revision(revision)
        except CommandError:
            known = None
        if known is None:
            raise BackupError(
                f"the backup's schema revision {revision!r} is unknown to this service: it was taken "
                "by a newer version; restore it with that version or a later one"
            )


def tables_with_rows(database: Path) -> list[str]:
    """The tables of ``database`` that hold rows (its schema revision aside): a service that
    started once on an empty data dir has tables, and is still a fresh installation."""
    if not database.exists():
        return []
    conn = sqlite3.connect(database)
    try:
        names = [
            r[0]
            for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            if r[0] != "alembic_version" and not r[0].startswith("sqlite_")
        ]
        return [n for n in names if conn.execute(f'SELECT 1 FROM "{n}" LIMIT 1').fetchone()]
    finally:
        conn.close()


def restore(snapshot_file: Path, database: Path) -> None:
    """Make ``database`` a copy of ``snapshot_file`` through the backup API, which replaces the
    target's every page in one transaction (and goes through its WAL, if it has one)."""
    database.parent.mkdir(parents=True, exist_ok=True)
    src = sqlite3.connect(snapshot_file)
    dst = sqlite3.connect(database, timeout=BUSY_TIMEOUT_S)
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()
