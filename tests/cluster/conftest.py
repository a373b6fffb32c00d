"""Fixtures of the cluster tests: a throwaway PostgreSQL and a real Dask scheduler with two
workers, on 127.0.0.1.

Session-scoped, so the tests here share one server and one Dask cluster (each takes seconds to
start), and started only when a test here asks for them. Each test gets a fresh database.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from .harness import DaskCluster, Postgres, throwaway_postgres

_db_numbers = itertools.count(1)


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    with throwaway_postgres() as pg:
        yield pg


@pytest.fixture
def pg_url(postgres: Postgres) -> str:
    """A fresh database per test on the session's server."""
    return postgres.new_database(f"pgs_test_{next(_db_numbers)}")


@pytest.fixture(scope="session")
def dask_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaskCluster]:
    pytest.importorskip("distributed", reason="dask.distributed is not installed")
    cluster = DaskCluster(n_workers=2, log_dir=tmp_path_factory.mktemp("dask")).start()
    try:
        yield cluster
    finally:
        cluster.stop()
