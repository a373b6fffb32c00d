"""``"solver": "auto"`` through POST /v1/jobs and the real worker pool: resolved when the job is
created (job.solver is the chosen solver, job.solver_choice says it was asked for and why), its
params checked against the chosen solver, composed with sigma "auto" (the whole path on the one
solver its smallest sigma calls for), and refused in a study."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from solver.auto import LOST_BY
from tests.helpers import assert_problem, create_job, make_settings, upload, wait_for


@pytest.fixture(scope="module")
def app_client(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Iterator[TestClient]:
    settings = make_settings(tmp_path_factory.mktemp("auto"), workers=1)
    with TestClient(create_app(settings)) as c:
        c.heart = upload(c, data_dir / "heart_scale.svm", "heart_scale.svm").json()["id"]  # type: ignore[attr-defined]
        yield c


def test_auto_is_resolved_at_creation_and_the_job_says_what_and_why(app_client: TestClient):
    c = app_client
    r = create_job(
        c,
        dataset_id=c.heart,  # type: ignore[attr-defined]
        solver="auto",
        test_fraction=0.3,
        params={"sigma": 1e-3, "random_state": 1},
    )
    assert r.status_code == 202, r.text
    created = r.json()
    choice = created["solver_choice"]
    assert created["solver"] == choice["chosen"] == "pgs"
    assert choice["requested"] == "auto"
    # heart_scale: 270 rows, 30% held out; the choice sees the 189 the fit gets (sigma m = 0.189).
    assert "m=189, d=13" in choice["reason"] and "sigma*m=0.189" in choice["reason"]
    assert LOST_BY["sdca"] in choice["reason"]
    job = wait_for(c, created["id"])
    assert job["status"] == "succeeded", job
    assert job["solver_choice"] == choice  # persisted with the job
    model = c.get(f"/v1/models/{job['model_id']}").json()
    assert model["solver"] == "pgs"


def test_the_choice_sees_the_columns_the_fit_keeps(app_client: TestClient):
    r = create_job(
        app_client,
        dataset_id=app_client.heart,  # type: ignore[attr-defined]
        solver="auto",
        params={"sigma": 1e-3},
        preprocessing={"ignore": [0, 1]},
    )
    assert r.status_code == 202, r.text
    # All 270 rows (no test split), 13 stored columns less the 2 ignored.
    assert "m=270, d=11" in r.json()["solver_choice"]["reason"]


def test_a_job_that_names_its_solver_has_no_choice(app_client: TestClient):
    r = create_job(app_client, dataset_id=app_client.heart, solver="sdca", params={"sigma": 1e-3})  # type: ignore[attr-defined]
    assert r.status_code == 202, r.text
    assert r.json()["solver"] == "sdca" and r.json()["solver_choice"] is None


def test_a_param_the_chosen_solver_does_not_take_is_a_422_naming_it(app_client: TestClient):
    r = create_job(app_client, dataset_id=app_client.heart, solver="auto", params={"kernel": "rbf"})  # type: ignore[attr-defined]
    body = assert_problem(r, 422, "body.params.kernel")
    assert body["detail"].startswith('solver "auto" chose pgs: ')


def test_sigma_auto_runs_its_whole_path_on_the_solver_its_smallest_sigma_calls_for(app_client: TestClient):
    c = app_client
    grid = [1e-1, 1e-2, 1e-3]
    r = create_job(
        c,
        dataset_id=c.heart,  # type: ignore[attr-defined]
        solver="auto",
        test_fraction=0.3,
        params={"sigma": "auto", "random_state": 2},
        selection={"grid": grid, "folds": 3, "patience": None},
    )
    assert r.status_code == 202, r.text
    # The choice is made for the grid's smallest sigma: 1e-3 x 189 rows.
    assert "sigma*m=0.189" in r.json()["solver_choice"]["reason"]
    job = wait_for(c, r.json()["id"])
    assert job["status"] == "succeeded", job
    assert job["solver"] == "pgs"
    # Every sigma of the path was fitted by the job's one estimator, which warm-starts each
    # sigma from the last: the path, then the refit at the chosen sigma.
    assert [point["sigma"] for point in job["selection"]["path"]] == grid
    assert job["selection"]["sigma"] in grid


def test_a_study_refuses_auto_naming_the_run(app_client: TestClient):
    c = app_client
    r = c.post(
        "/v1/studies",
        json={
            "name": "auto",
            "dataset_id": c.heart,  # type: ignore[attr-defined]
            "test_fraction": 0.3,
            "runs": [{"solver": "pgs", "params": {}}, {"solver": "auto", "params": {}}],
            "sizes": [90],
            "targets": [0.7],
        },
    )
    body = assert_problem(r, 422, "body.runs.1.solver")
    assert "name one instead" in body["detail"]
