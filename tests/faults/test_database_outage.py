"""PostgreSQL stopped and started under a running service: 503 problem+json while it is away
(never a 500), and the service recovers by itself, including the job that ran through it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from tests.cluster.harness import Postgres, throwaway_postgres, tiny_svmlight
from tests.helpers import assert_problem, make_settings, wait_for


@pytest.fixture
def own_postgres():
    """A server of this test's own: it is stopped and started."""
    with throwaway_postgres() as pg:
        yield pg


def test_postgres_restart_gives_503_then_recovers(tmp_path: Path, own_postgres: Postgres):
    settings = make_settings(
        tmp_path,
        database_url=own_postgres.url,
        heartbeat_s=0.5,
        lease_s=5,
        sweep_interval_s=0.5,
        db_wait_s=60,
    )
    with TestClient(create_app(settings)) as c:
        ds = c.post("/v1/datasets", files={"file": ("t.svm", tiny_svmlight())}).json()["id"]
        job_id = c.post(
            "/v1/jobs",
            json={
                "dataset_id": ds,
                "time_budget_s": 4,
                "params": {"loss": "logistic", "sigma": 1e-4, "n_iter": 10**9, "random_state": 0},
            },
        ).json()["id"]
        wait_for(c, job_id, lambda j: (j["progress"]["iteration"] or 0) > 0)

        own_postgres.stop("fast")
        down_at = time.monotonic()
        body = {"dataset_id": ds, "params": {"n_iter": 100}}
        for r in (
            c.get("/v1/datasets"),
            c.get(f"/v1/jobs/{job_id}"),
            c.post("/v1/jobs", json=body),
            c.post("/v1/datasets", files={"file": ("t.svm", tiny_svmlight(50))}),
        ):
            problem = assert_problem(r, 503)
            assert problem["type"].endswith("database-unavailable")
            assert r.headers["retry-after"]
        assert_problem(c.get("/readyz"), 503)
        assert c.get("/healthz").status_code == 200
        assert time.monotonic() - down_at < 15, "requests fail fast while the database is down"

        own_postgres.start()
        deadline = time.monotonic() + 30
        while c.get("/v1/datasets").status_code != 200:
            assert time.monotonic() < deadline, "the service did not recover by itself"
            time.sleep(0.2)
        assert c.get("/readyz").status_code == 200
        # The job that was running through the outage ends (its worker retried its writes).
        job = wait_for(c, job_id, timeout=90)
        assert job["status"] == "succeeded", job
        assert job["stop_reason"] == "time_budget"
        again = wait_for(c, c.post("/v1/jobs", json=body).json()["id"], timeout=90)
        assert again["status"] == "succeeded"
