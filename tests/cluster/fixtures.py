"""Fixtures: a throwaway PostgreSQL and a real Dask scheduler with two workers, on 127.0.0.1.

Session-scoped and imported by tests/conftest.py, so tests/cluster and tests/faults share one
server and one Dask cluster (each takes seconds to start). Each test gets a fresh database.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from .harness import DaskCluster, Postgres, postgres_unavailable_reason

_db_numbers = itertools.count(1)


def require_cluster_libs() -> None:
    pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[dev]')")
    pytest.importorskip("distributed", reason="dask.distributed is not installed")


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    require_cluster_libs()
    reason = postgres_unavailable_reason()
    if reason:
        pytest.skip(reason)
    pg = Postgres().init()
    try:
        yield pg
    finally:
        pg.destroy()


@pytest.fixture
def pg_url(postgres: Postgres) -> str:
    """A fresh database per test on the session's server."""
    return postgres.new_database(f"pgs_test_{next(_db_numbers)}")


@pytest.fixture(scope="session")
def dask_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaskCluster]:
    require_cluster_libs()
    cluster = DaskCluster(n_workers=2, log_dir=tmp_path_factory.mktemp("dask")).start()
    try:
        yield cluster
    finally:
        cluster.stop()
