"""The compose file's cluster profile, checked without a Docker engine (none exists here): the
services, the shared store at one path, and a default profile that is still one container."""

from __future__ import annotations

import pytest

from .harness import REPO

yaml = pytest.importorskip("yaml", reason="PyYAML (a dependency of dask) is not installed")


def test_cluster_profile():
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    services = compose["services"]
    assert "profiles" not in services["pgs"], "the default profile: one container, SQLite"
    cluster = {name for name, s in services.items() if "cluster" in s.get("profiles", [])}
    assert cluster == {"postgres", "dask-scheduler", "dask-worker", "api"}
    api, worker = services["api"], services["dask-worker"]
    assert api["environment"]["PGS_EXECUTOR"] == "dask://dask-scheduler:8786"
    assert api["environment"]["PGS_DATABASE_URL"].startswith("postgresql://")
    assert "tcp://dask-scheduler:8786" in worker["command"]
    # Workers and the API see the store at the same path (the job carries absolute paths).
    data_dir = api["environment"]["PGS_DATA_DIR"]
    assert f"pgs-shared:{data_dir}" in api["volumes"] and f"pgs-shared:{data_dir}" in worker["volumes"]
    # --scale needs services without fixed names or single host ports.
    assert "container_name" not in worker and "ports" not in worker
    assert "ports" not in services["dask-scheduler"], "the Dask port stays private (pickle)"
    assert "/readyz" in " ".join(api["healthcheck"]["test"])
    assert api["depends_on"]["postgres"]["condition"] == "service_healthy"
