"""Schema by migrations (matching the ORM), SQLite WAL and busy timeout, atomic files."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text

from app.core.db import (
    alembic_config,
    make_engine,
    make_session_factory,
    run_migrations,
    transaction,
)
from app.core.files import atomic_write
from app.models import Base, Dataset
from app.services.datasets import csr_writer, load_csr


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
        "datasets", "jobs", "job_trace", "models", "idempotency_keys"}


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
        s.add(Dataset(name="d", format="csv", file_name="f", n_samples=1, n_features=1, nnz=1,
                      task="binary", label_kind="numeric", sha256="0", size_bytes=1))
    with factory() as s:
        created = s.get(Dataset, 1).created_at
    assert created.tzinfo == dt.UTC
    assert abs((dt.datetime.now(dt.UTC) - created).total_seconds()) < 60


def test_atomic_write_leaves_old_file_on_failure(tmp_path: Path):
    target = tmp_path / "f.bin"
    atomic_write(target, lambda fh: fh.write(b"old") and None)

    def broken(fh):
        fh.write(b"half")
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError):
        atomic_write(target, broken)
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.bin"]


def test_datasets_round_trip_without_pickle(tmp_path: Path):
    import scipy.sparse as sp

    X = sp.random(20, 7, density=0.3, format="csr", random_state=0)
    for y in (np.arange(20, dtype=float), np.array(["g", "hh"] * 10)):
        atomic_write(tmp_path / "d.npz", csr_writer(X, y))
        X2, y2 = load_csr(tmp_path / "d.npz")  # np.load(allow_pickle=False) inside
        assert (X2 != X).nnz == 0 and np.array_equal(y2, y)
    with pytest.raises(TypeError, match="float or unicode"):
        atomic_write(tmp_path / "o.npz", csr_writer(X, np.array([object()] * 20)))
