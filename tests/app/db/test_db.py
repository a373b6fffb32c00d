"""app/db/engine.py: the schema by migrations (matching the ORM, keeping existing rows), SQLite's
WAL and busy timeout, datetimes."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text

from app.db.engine import alembic_config, make_engine, make_session_factory, run_migrations, transaction
from app.db.tables import Base, Dataset


def test_migrations_build_the_orm_schema_and_are_idempotent(tmp_path: Path):
    engine = make_engine(f"sqlite:///{tmp_path / 'x.db'}")
    run_migrations(engine)
    run_migrations(engine)  # every start-up runs them
    with engine.connect() as conn:
        ctx = MigrationContext.configure(conn, opts={"compare_type": True})
        assert compare_metadata(ctx, Base.metadata) == []
        applied = set(conn.execute(text("SELECT version_num FROM alembic_version")).scalars())
        assert applied == set(ScriptDirectory.from_config(alembic_config()).get_heads())
    assert set(inspect(engine).get_table_names()) >= {
        "datasets",
        "jobs",
        "job_trace",
        "models",
        "idempotency_keys",
    }


def test_sqlite_pragmas(tmp_path: Path):
    engine = make_engine(f"sqlite:///{tmp_path / 'x.db'}", busy_timeout_s=7.5)
    with engine.connect() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert conn.execute(text("PRAGMA busy_timeout")).scalar() == 7500
        assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1
    with pytest.raises(ValueError, match="sqlite or postgresql"):
        make_engine("mysql://u@h/db")


def test_datetimes_come_back_aware_utc(tmp_path: Path):
    engine = make_engine(f"sqlite:///{tmp_path / 'x.db'}")
    run_migrations(engine)
    factory = make_session_factory(engine)
    with transaction(factory) as s:
        s.add(
            Dataset(
                name="d",
                format="csv",
                file_name="f",
                n_samples=1,
                n_features=1,
                nnz=1,
                task="binary",
                label_kind="numeric",
                sha256="0",
                size_bytes=1,
            )
        )
    with factory() as s:
        created = s.get(Dataset, 1).created_at
    assert created.tzinfo == dt.UTC
    assert abs((dt.datetime.now(dt.UTC) - created).total_seconds()) < 60


def test_migration_keeps_existing_jobs_and_traces(tmp_path: Path):
    """0002 adds columns in place: an existing job keeps its trace (no table rebuild, whose DROP
    would cascade into job_trace)."""
    engine = make_engine(f"sqlite:///{tmp_path / 'old.db'}")
    cfg = alembic_config(engine)
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0001")
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO jobs (id, status, solver, task, split_seed, params, targets, attempts, "
                "cancel_requested, created_at) VALUES (1, 'succeeded', 'pgs', 'binary', 0, '{}', "
                "'[]', 1, 0, '2026-01-01 00:00:00')"
            )
        )
        conn.execute(
            text(
                "INSERT INTO job_trace (job_id, seq, iteration, samples_seen, solver_seconds) "
                "VALUES (1, 0, 0, 0, 0.0), (1, 1, 10, 10, 0.5)"
            )
        )
        conn.execute(
            text(
                "INSERT INTO idempotency_keys (principal, key, request_hash, job_id, created_at) "
                "VALUES ('anonymous', 'k', 'h', 1, '2026-01-01 00:00:00')"
            )
        )
    run_migrations(engine)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM job_trace")).scalar() == 2
        assert conn.execute(text("SELECT study_id, train_size FROM jobs")).one() == (None, None)
        # 0008 rebuilds idempotency_keys (SQLite batch mode): the job's key is kept.
        assert conn.execute(text("SELECT key, job_id, dataset_id, study_id FROM idempotency_keys")).one() == (
            "k",
            1,
            None,
            None,
        )
        applied = set(conn.execute(text("SELECT version_num FROM alembic_version")).scalars())
    # 0004 merged the studies and leases branches: being at the single head (0004 or a later
    # revision) means 0002 was applied.
    heads = set(ScriptDirectory.from_config(cfg).get_heads())
    assert applied == heads and len(heads) == 1


def test_downgrade_of_0005_keeps_jobs_and_traces(tmp_path: Path):
    """0005's columns are dropped in place: a rebuilt jobs table would cascade into job_trace."""
    engine = make_engine(f"sqlite:///{tmp_path / 'down.db'}")
    run_migrations(engine)
    cfg = alembic_config(engine)
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO jobs (id, status, solver, task, split_seed, params, targets, attempts, "
                "cancel_requested, created_at, owner, time_limit_s) VALUES (1, 'succeeded', 'pgs', "
                "'binary', 0, '{}', '[]', 1, 0, '2026-01-01 00:00:00', 'anonymous', 60.0)"
            )
        )
        conn.execute(
            text(
                "INSERT INTO job_trace (job_id, seq, iteration, samples_seen, "
                "solver_seconds) VALUES (1, 0, 0, 0, 0.0)"
            )
        )
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0004_trace_sparsity")
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM job_trace")).scalar() == 1
        assert conn.execute(text("SELECT status FROM jobs")).scalar() == "succeeded"


def test_owners_migration_gives_every_existing_object_the_default_owner(tmp_path: Path):
    """0012: objects from before owners belong to "default" (a bare key's and a keyless server's
    owner), names and aliases keep working in that owner's namespace."""
    engine = make_engine(f"sqlite:///{tmp_path / 'owners.db'}")
    cfg = alembic_config(engine)
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0011_uploads")
    stamp = "'2026-01-01 00:00:00'"
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO datasets (id, name, format, compressed, file_name, n_samples, n_features, "
                "nnz, task, label_kind, index_base, sha256, size_bytes, created_at) VALUES (1, 'heart', "
                f"'svmlight', 0, 'datasets/x', 10, 3, 30, 'binary', 'numeric', 1, 'h', 100, {stamp})"
            )
        )
        conn.execute(
            text(
                "INSERT INTO jobs (id, status, solver, task, split_seed, params, targets, attempts, "
                "cancel_requested, created_at, owner) VALUES (1, 'succeeded', 'pgs', 'binary', 0, '{}', "
                f"'[]', 1, 0, {stamp}, 'key:0123456789abcdef')"
            )
        )
        conn.execute(
            text(
                "INSERT INTO models (id, job_id, solver, task, estimator, params, n_features, "
                "index_base, file_stem, size_bytes, created_at, name, version) VALUES (1, 1, 'pgs', "
                f"'binary', 'PGSClassifier', '{{}}', 3, 1, 'models/x', 10, {stamp}, 'heart', 1)"
            )
        )
        conn.execute(
            text(
                "INSERT INTO model_aliases (name, alias, model_id, updated_at) "
                f"VALUES ('heart', 'prod', 1, {stamp})"
            )
        )
        conn.execute(
            text(
                "INSERT INTO uploads (id, owner, length, filename, metadata_header, state, created_at, "
                f"expires_at) VALUES ('u1', 'key:0123456789abcdef', 5, 'f', '', 'receiving', {stamp}, "
                f"{stamp})"
            )
        )
    run_migrations(engine)
    with engine.connect() as conn:
        for table in ("datasets", "jobs", "models", "uploads"):
            assert conn.execute(text(f"SELECT owner FROM {table}")).scalar() == "default", table
        assert conn.execute(text("SELECT owner, name, alias, model_id FROM model_aliases")).one() == (
            "default",
            "heart",
            "prod",
            1,
        )
