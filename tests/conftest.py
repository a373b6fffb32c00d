"""Shared fixtures: the real data sets of ../shared/data (tests skip when it is absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

# A throwaway PostgreSQL and a Dask cluster, shared by tests/cluster and tests/faults.
from tests.cluster.fixtures import dask_cluster, pg_url, postgres  # noqa: F401

DATA_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def data_dir() -> Path:
    if not DATA_DIR.is_dir():
        pytest.skip(f"real data sets not found at {DATA_DIR}")
    return DATA_DIR
