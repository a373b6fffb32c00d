"""Alembic environment: uses the connection handed over by app.db.engine.run_migrations."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from app.db.engine import make_engine
from app.db.tables import Base

target_metadata = Base.metadata


def _run(connection: Connection) -> None:
    # render_as_batch: SQLite cannot ALTER most things, so later migrations rebuild tables.
    context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = make_engine(context.config.get_main_option("sqlalchemy.url") or "")
    with engine.begin() as conn:
        _run(conn)
    engine.dispose()


if context.is_offline_mode():
    raise SystemExit("offline (SQL script) migrations are not supported; run them against a database")
run_migrations_online()
