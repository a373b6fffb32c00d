"""Engines (SQLite in WAL mode on one host, PostgreSQL for several), sessions, migrations, and
what the service does while the database is unreachable (503, retries)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from alembic import command
from alembic.config import Config
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine.url import make_url
from sqlalchemy.exc import DataError, DBAPIError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from sqlalchemy.orm import Session, sessionmaker

from app.core.errors import problem_response

log = logging.getLogger(__name__)

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
# Any constant: serializes the migrations of API processes that start at the same moment.
MIGRATION_LOCK_ID = 0x5067_7300
# How long a new PostgreSQL connection may take; then the request fails fast with a 503.
PG_CONNECT_TIMEOUT_S = 5
RETRY_AFTER_S = 2

T = TypeVar("T")
# What every part that opens its own sessions holds (the API's dependencies, the background
# services, the worker processes).
SessionFactory = sessionmaker[Session]


def make_engine(database_url: str, busy_timeout_s: float = 15.0) -> Engine:
    """An engine for a ``sqlite:`` or ``postgresql+psycopg:`` URL."""
    url = make_url(database_url)
    backend = url.get_backend_name()
    if backend == "sqlite":
        return _sqlite_engine(database_url, busy_timeout_s)
    if backend == "postgresql":
        return _postgres_engine(database_url, busy_timeout_s)
    raise ValueError(f"PGS_DATABASE_URL must be a sqlite or postgresql URL, got {backend!r}")


def _sqlite_engine(database_url: str, busy_timeout_s: float) -> Engine:
    """An engine whose connections use WAL, a busy timeout and foreign keys.

    Every transaction starts with ``BEGIN IMMEDIATE``: the sqlite3 driver would otherwise start
    a deferred transaction that takes the write lock only at its first write, and a transaction
    that read first and then writes while a worker process holds the lock fails at once with
    "database is locked" instead of waiting out the busy timeout. Transactions here are short.
    """
    url = make_url(database_url)
    if url.database and url.database != ":memory:":
        Path(url.database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(
        url,
        connect_args={"timeout": busy_timeout_s, "check_same_thread": False},
    )
    busy_ms = int(busy_timeout_s * 1000)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take transaction control away from the driver (see the SQLAlchemy SQLite dialect docs).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={busy_ms}")
        cursor.execute("PRAGMA foreign_keys=ON")
        # With WAL, NORMAL is durable against application crashes; only power loss can drop the
        # last transactions, never corrupt the file.
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def _postgres_engine(database_url: str, lock_timeout_s: float) -> Engine:
    """PostgreSQL through psycopg 3, READ COMMITTED (its default).

    Concurrency comes from row locks, not from a database-wide write lock: job claims are
    conditional updates (services/jobs/state.py) and the lease sweeps take rows with ``FOR UPDATE SKIP
    LOCKED`` (services/jobs/leases.py). ``pool_pre_ping`` replaces connections that died with a
    database restart, so the service recovers by itself; while the database is down, requests
    get a 503.
    """
    url = make_url(database_url)
    if url.drivername == "postgresql":
        url = url.set(drivername="postgresql+psycopg")
    return create_engine(
        url,
        pool_pre_ping=True,
        pool_size=5,
        max_overflow=10,
        # A request that cannot get a connection fails (503) instead of queueing for 30 s.
        pool_timeout=10,
        connect_args={
            "connect_timeout": PG_CONNECT_TIMEOUT_S,
            "application_name": "pgs-service",
            # A blocked lock wait ends as an error, like SQLite's busy timeout.
            "options": f"-c lock_timeout={int(lock_timeout_s * 1000)}",
        },
    )


def is_postgres(bind: Engine | Session | Any) -> bool:
    engine = bind.get_bind() if isinstance(bind, Session) else bind
    return bool(engine.dialect.name == "postgresql")


def make_session_factory(engine: Engine) -> SessionFactory:
    # expire_on_commit=False: handlers return ORM objects after commit without a second query.
    return sessionmaker(engine, expire_on_commit=False)


@contextmanager
def transaction(factory: SessionFactory) -> Iterator[Session]:
    """One short transaction: commit on success, roll back on error."""
    with factory() as session, session.begin():
        yield session


# -- the database being away -------------------------------------------------------------------


def is_unavailable(exc: BaseException) -> bool:
    """True for errors that mean "the database cannot be reached or is busy", not bad SQL.

    OperationalError covers a refused or dropped connection (PostgreSQL restarting, network) and
    SQLite's "database is locked"; a connection invalidated mid-statement and an exhausted pool
    are the same condition.
    """
    if isinstance(exc, (OperationalError, InterfaceError, PoolTimeoutError)):
        return True
    return isinstance(exc, DBAPIError) and bool(exc.connection_invalidated)


def retry_db(fn: Callable[[], T], timeout_s: float, what: str = "database call") -> T:
    """Call ``fn`` until it does not fail with :func:`is_unavailable`, for up to ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    pause = 0.2
    while True:
        try:
            return fn()
        except Exception as exc:
            if not is_unavailable(exc) or time.monotonic() + pause > deadline:
                raise
            log.warning("%s: database unavailable (%s); retrying in %.1f s", what, type(exc).__name__, pause)
            time.sleep(pause)
            pause = min(pause * 2, 2.0)


# SQLite's "database or disk is full" and PostgreSQL's SQLSTATE disk_full.
SQLITE_FULL = 13
PG_DISK_FULL = "53100"


def is_disk_full(exc: BaseException) -> bool:
    """True when the database could not write because its disk is full: not an outage that
    passes by itself, but the 507 a full store gives too."""
    orig = getattr(exc, "orig", None)
    sqlite_code, pg_state = getattr(orig, "sqlite_errorcode", None), getattr(orig, "sqlstate", None)
    return sqlite_code == SQLITE_FULL or pg_state == PG_DISK_FULL


async def _unavailable_handler(request: Request, exc: Exception) -> JSONResponse:
    if is_disk_full(exc):
        log.error("database disk full on %s %s: %s", request.method, request.url.path, exc)
        return problem_response(
            request,
            507,
            "the database's disk is full; nothing was stored. Deleting uploads, data sets or "
            "models frees space (a DELETE still works), then retry",
            kind="insufficient-storage",
        )
    log.warning(
        "database unavailable on %s %s: %s",
        request.method,
        request.url.path,
        str(exc).splitlines()[0] if str(exc) else type(exc).__name__,
    )
    return problem_response(
        request,
        503,
        "the database is unavailable; retry shortly",
        kind="database-unavailable",
        headers={"Retry-After": str(RETRY_AFTER_S)},
    )


def install_db_error_handlers(app: FastAPI) -> None:
    """503 problem+json, not 500, when the database is down or busy (see is_unavailable).

    Starlette picks the handler of the nearest class in the exception's MRO, so these win over
    the catch-all 500 handler; a DBAPIError that is not an outage still answers 500.
    """
    for cls in (OperationalError, InterfaceError, PoolTimeoutError):
        app.add_exception_handler(cls, _unavailable_handler)

    async def _dbapi_handler(request: Request, exc: Exception) -> JSONResponse:
        if is_unavailable(exc):
            return await _unavailable_handler(request, exc)
        log.error("database error on %s %s", request.method, request.url.path, exc_info=exc)
        return problem_response(request, 500, "internal error; see the server log", kind="internal")

    app.add_exception_handler(DBAPIError, _dbapi_handler)

    async def _out_of_range(request: Request, exc: Exception) -> JSONResponse:
        # A number from the request that the database cannot hold: an id or cursor beyond 63
        # bits (SQLite raises OverflowError while binding it, PostgreSQL a DataError).
        return problem_response(
            request, 422, f"a number in the request is out of range: {exc}", kind="validation-error"
        )

    app.add_exception_handler(OverflowError, _out_of_range)
    app.add_exception_handler(DataError, _out_of_range)


# -- migrations --------------------------------------------------------------------------------


def alembic_config(engine: Engine | None = None) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    if engine is not None:
        cfg.set_main_option("sqlalchemy.url", engine.url.render_as_string(hide_password=False))
    return cfg


def run_migrations(engine: Engine, wait_s: float = 0.0) -> None:
    """Bring the schema to the newest revision (idempotent; run at every start-up).

    ``heads``, not ``head``: migrations written side by side on branches from the same parent
    all apply. On PostgreSQL an advisory lock serializes API processes that start together (the
    DDL is transactional, so the second one finds the schema done). ``wait_s``: how long to wait
    for a database that is still starting.
    """
    cfg = alembic_config(engine)

    def upgrade() -> None:
        with engine.begin() as connection:
            if engine.dialect.name == "postgresql":
                connection.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": MIGRATION_LOCK_ID})
            cfg.attributes["connection"] = connection
            command.upgrade(cfg, "heads")

    retry_db(upgrade, wait_s, "migrations")
