"""``params.early_stopping`` through /v1/jobs: each bad value a 422 naming its field and the rule,
the job's stop_reason "no_improvement" with its trace and time-to-target as without it, the
validation split seeded by the job's params.random_state, and the data that would have to stream refused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from tests.helpers import assert_problem, create_job, make_settings, upload, wait_for

EARLY = {"sigma": 1e-3, "early_stopping": True, "random_state": 0}


@pytest.fixture(scope="module")
def app_client(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Iterator[TestClient]:
    settings = make_settings(tmp_path_factory.mktemp("early_stopping"), workers=1)
    with TestClient(create_app(settings)) as c:
        c.ids = {  # type: ignore[attr-defined]
            name: upload(c, data_dir / f, f).json()["id"]
            for name, f in [("a9a", "a9a.train.svm"), ("abalone", "abalone.svm")]
        }
        yield c


def _ids(c: TestClient) -> dict[str, int]:
    return c.ids  # type: ignore[attr-defined, no-any-return]


@pytest.mark.parametrize(
    ("solver", "params", "field", "rule"),
    [
        (
            "lbfgs",
            {"early_stopping": True},
            "early_stopping",
            "lbfgs is deterministic and stops by its own tol",
        ),
        ("gd", {"early_stopping": True}, "early_stopping", "gd takes deterministic full-gradient steps"),
        ("gcd", {"early_stopping": True}, "early_stopping", "gcd picks its coordinates deterministically"),
        ("pgs", {**EARLY, "validation_fraction": 0.0}, "validation_fraction", "float in (0, 1)"),
        ("pgs", {**EARLY, "validation_fraction": 1.0}, "validation_fraction", "float in (0, 1)"),
        ("pgs", {**EARLY, "n_iter_no_change": 0}, "n_iter_no_change", "int in [1, inf)"),
        ("pgs", {**EARLY, "tol": -0.001}, "tol", "float in [0, inf)"),
        # With sigma "auto" one split serves both: the selection's.
        ("pgs", {**EARLY, "sigma": "auto", "validation_fraction": 0.3}, "validation_fraction", "selection."),
    ],
)
def test_a_bad_early_stopping_value_is_a_422_naming_the_field_and_rule(
    app_client: TestClient, solver: str, params: dict[str, Any], field: str, rule: str
):
    body = {"dataset_id": _ids(app_client)["a9a"], "solver": solver, "params": params}
    problem = assert_problem(create_job(app_client, **body), 422, f"body.params.{field}")
    assert rule in problem["errors"][0]["msg"]


def test_a_job_stops_when_its_validation_score_stops_improving(app_client: TestClient):
    c = app_client
    r = create_job(
        c,
        dataset_id=_ids(c)["a9a"],
        test_fraction=0.2,
        targets=[0.8],
        params={"sigma": 1e-4, "early_stopping": True, "validation_fraction": 0.25},
        split_seed=7,
    )
    assert r.status_code == 202, r.text
    # Unseeded params: the validation split (and the solver) get a drawn seed, recorded.
    assert isinstance(r.json()["params"]["random_state"], int)
    job = wait_for(c, r.json()["id"])
    assert job["status"] == "succeeded", job
    assert job["stop_reason"] == "no_improvement"
    metrics = job["metrics"]
    assert metrics["test_accuracy"] > 0.83  # a9a's logistic models reach 0.85
    assert metrics["time_to_target"]["0.8"] is not None  # the trace's time-to-target, as without it
    points = c.get(f"/v1/jobs/{job['id']}/trace").json()["points"]
    assert len(points) > 3 and all(p["test_score"] is not None for p in points)
    # No n_iter: fewer iterations than the cap of 20 times the default 5 epochs.
    assert 0 < job["progress"]["iteration"] < 100 * 26049

    again = create_job(
        c,
        dataset_id=_ids(c)["a9a"],
        test_fraction=0.2,
        params=job["params"],  # with the seed the service drew and recorded
        split_seed=7,
    )
    repeated = wait_for(c, again.json()["id"])
    assert repeated["progress"]["iteration"] == job["progress"]["iteration"]  # one seed, one split


def test_a_regression_job_stops_on_its_validation_rmse(app_client: TestClient):
    c = app_client
    params = {"loss": "squared", "sigma": 1e-3, "early_stopping": True, "random_state": 1}
    job = wait_for(
        c, create_job(c, dataset_id=_ids(c)["abalone"], test_fraction=0.2, params=params).json()["id"]
    )
    assert job["status"] == "succeeded", job
    assert job["stop_reason"] in ("no_improvement", "completed")
    assert job["metrics"]["test_rmse"] < 3.0


def test_data_that_would_stream_is_refused(tmp_path: Path, data_dir: Path):
    # A worker memory budget below a9a's size: a pgs job would train from its shards, which early
    # stopping cannot split.
    settings = make_settings(tmp_path, workers=1, worker_memory_bytes=1_000_000)
    with TestClient(create_app(settings)) as c:
        dataset = upload(c, data_dir / "a9a.train.svm", "a9a.train.svm").json()["id"]
        problem = assert_problem(create_job(c, dataset_id=dataset, params=EARLY), 422, "body.solver")
        assert "early stopping" in problem["detail"]
        # Without early stopping the same job streams.
        assert create_job(c, dataset_id=dataset, params={"sigma": 1e-3}).status_code == 202
