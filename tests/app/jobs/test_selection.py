"""``params.sigma: "auto"`` through /v1/jobs (app/services/jobs/selection.py): the ``selection``
options checked before the job queues (each bad one a 422 naming its field), the path and the
chosen sigma in the job's answer, the path's figure, and a path stopped by the job's time budget
keeping the best sigma of its complete points."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from tests.helpers import assert_problem, create_job, make_settings, upload, wait_for

AUTO = {"loss": "logistic", "sigma": "auto", "random_state": 3}


@pytest.fixture(scope="module")
def app_client(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Iterator[TestClient]:
    settings = make_settings(tmp_path_factory.mktemp("selection"), workers=1)
    with TestClient(create_app(settings)) as c:
        c.ids = {  # type: ignore[attr-defined]
            name: upload(c, data_dir / f, f).json()["id"]
            for name, f in [("heart", "heart_scale.svm"), ("abalone", "abalone.svm")]
        }
        yield c


def _ids(c: TestClient) -> dict[str, int]:
    return c.ids  # type: ignore[attr-defined, no-any-return]


@pytest.mark.parametrize(
    ("params", "selection", "field"),
    [
        (AUTO, {"grid": [1e-2, 0.0]}, "body.selection.grid.1"),
        (AUTO, {"grid": [-1e-3]}, "body.selection.grid.0"),
        (AUTO, {"grid": []}, "body.selection.grid"),
        (AUTO, {"grid": [1e-2], "n_sigmas": 4}, "body.selection.n_sigmas"),
        (AUTO, {"sigma_min": 1e-2, "sigma_max": 1e-3}, "body.selection.sigma_min"),
        (AUTO, {"metric": "rmse"}, "body.selection.metric"),
        (AUTO, {"metric": "auc"}, "body.selection.metric"),
        (AUTO, {"folds": 1}, "body.selection.folds"),
        # heart_scale has 270 rows of 2 classes: 150 folds cannot all hold the smaller class.
        (AUTO, {"folds": 150}, "body.selection.folds"),
        (AUTO, {"validation_fraction": 1.0}, "body.selection.validation_fraction"),
        (AUTO, {"patience": 0}, "body.selection.patience"),
        (AUTO, {"splits": 3}, "body.selection.splits"),
        ({**AUTO, "sigma": 1e-3}, {"folds": 3}, "body.selection"),
        ({**AUTO, "folds": 3}, None, "body.params.folds"),
        ({**AUTO, "sigma_grid": [1e-3]}, None, "body.params.sigma_grid"),
    ],
)
def test_bad_selection_is_a_422_naming_its_field(
    app_client: TestClient, params: dict[str, Any], selection: dict[str, Any] | None, field: str
):
    body: dict[str, Any] = {"dataset_id": _ids(app_client)["heart"], "params": params}
    if selection is not None:
        body["selection"] = selection
    assert_problem(create_job(app_client, **body), 422, field)


def test_a_non_finite_grid_value_is_a_422(app_client: TestClient):
    # Python's JSON parser reads Infinity; the API must still refuse it as a sigma.
    body = '{"dataset_id": %d, "params": {"sigma": "auto"}, "selection": {"grid": [1.0, Infinity]}}'
    r = app_client.post(
        "/v1/jobs", content=body % _ids(app_client)["heart"], headers={"content-type": "application/json"}
    )
    assert_problem(r, 422, "body.selection.grid.1")


def test_a_regression_metric_on_a_classifier_names_the_task(app_client: TestClient):
    body = {"dataset_id": _ids(app_client)["abalone"], "params": {"loss": "squared", "sigma": "auto"}}
    problem = assert_problem(create_job(app_client, **body, selection={"metric": "accuracy"}), 422)
    assert "regression" in problem["errors"][0]["msg"]


def test_a_job_with_selection_records_its_path_and_chosen_sigma(app_client: TestClient):
    c = app_client
    selection = {"folds": 3, "n_sigmas": 5, "patience": 2}
    r = create_job(c, dataset_id=_ids(c)["heart"], test_fraction=0.25, params=AUTO, selection=selection)
    assert r.status_code == 202, r.text
    assert r.json()["selection_options"] == {
        "folds": 3,
        "validation_fraction": 0.2,
        "grid": None,
        "n_sigmas": 5,
        "sigma_min": None,
        "sigma_max": None,
        "patience": 2,
        "metric": "auto",
    }
    assert r.json()["selection"] is None  # until it has run
    job = wait_for(c, r.json()["id"])
    assert job["status"] == "succeeded", job
    chosen = job["selection"]
    assert chosen == job["metrics"]["selection"] and chosen["sigma"] == job["metrics"]["sigma"]
    assert chosen["splits"] == "3-fold" and chosen["metric"] == "accuracy"
    assert chosen["stop_reason"] in ("completed", "patience")
    sigmas = [point["sigma"] for point in chosen["path"]]
    assert sigmas == sorted(sigmas, reverse=True) and 1 <= len(sigmas) <= 5
    best = max(point["mean"] for point in chosen["path"])
    assert next(p for p in chosen["path"] if p["sigma"] == chosen["sigma"])["mean"] == best
    assert all(len(p["scores"]) == 3 and p["std"] is not None and p["seconds"] > 0 for p in chosen["path"])
    model = c.get(f"/v1/models/{job['model_id']}").json()
    assert model["params"]["sigma"] == "auto" and model["metrics"]["sigma"] == chosen["sigma"]

    svg = c.get(f"/v1/jobs/{job['id']}/plot", params={"kind": "path"})
    assert svg.status_code == 200 and svg.headers["content-type"].startswith("image/svg+xml")
    assert all(f'id="{gid}"' in svg.text for gid in ("path-score", "path-band", "path-chosen"))
    png = c.get(f"/v1/jobs/{job['id']}/plot", params={"kind": "path", "format": "png"})
    assert png.status_code == 200 and png.content.startswith(b"\x89PNG")


def test_the_default_selection_and_a_given_grid(app_client: TestClient):
    c = app_client
    grid = [1e-1, 1e-2, 1e-3]
    selection = {"grid": grid, "folds": "validation"}
    r = create_job(c, dataset_id=_ids(c)["heart"], params=AUTO, selection=selection)
    job = wait_for(c, r.json()["id"])
    assert job["status"] == "succeeded", job
    assert job["selection"]["splits"] == "validation" and job["selection"]["sigma"] in grid
    # Unseeded params: the splits (and the solver) get a drawn seed, recorded in the params.
    defaults = create_job(c, dataset_id=_ids(c)["heart"], params={"sigma": "auto"}, split_seed=5).json()
    assert defaults["selection_options"]["folds"] == "auto" and defaults["selection_options"]["patience"] == 3
    assert defaults["params"].keys() == {"sigma", "random_state"}
    assert isinstance(defaults["params"]["random_state"], int)
    c.post(f"/v1/jobs/{defaults['id']}/cancel")


def test_a_job_with_a_numeric_sigma_has_no_path_figure(app_client: TestClient):
    c = app_client
    body = {"dataset_id": _ids(c)["heart"], "params": {"loss": "logistic", "sigma": 1e-3, "n_iter": 2000}}
    job = wait_for(c, create_job(c, **body).json()["id"])
    assert job["selection"] is None and job["selection_options"] is None
    assert_problem(c.get(f"/v1/jobs/{job['id']}/plot", params={"kind": "path"}), 409)
    assert c.get(f"/v1/jobs/{job['id']}/plot").status_code == 200  # its trace


def test_a_path_out_of_time_keeps_the_best_sigma_of_its_complete_points(app_client: TestClient):
    c = app_client
    # The longest grid walked to its end (patience null) cannot finish in the budget: 3,000 fits of
    # 500,000 iterations, 0.06 s each on heart here. Its first point (3 of them) ends well inside
    # it, even on a loaded machine: the budget counts from the claim, data and kernels loaded.
    grid = [10.0 ** (-k / 100) for k in range(1000)]
    params = {**AUTO, "n_iter": 500_000}
    selection = {"grid": grid, "folds": 3, "patience": None}
    body = {"dataset_id": _ids(c)["heart"], "test_fraction": 0.25, "params": params, "selection": selection}
    job = wait_for(c, create_job(c, **body, time_budget_s=8.0).json()["id"])
    assert job["stop_reason"] == "time_budget" and job["model_id"] is not None, job
    chosen = job["selection"]
    assert chosen["stop_reason"] == "stopped" and 1 <= len(chosen["path"]) < len(grid)
    best = max(point["mean"] for point in chosen["path"])
    assert next(p for p in chosen["path"] if p["sigma"] == chosen["sigma"])["mean"] == best
    assert job["metrics"]["test_accuracy"] is not None


def test_a_cancelled_path_keeps_a_partial_model_at_its_best_sigma(app_client: TestClient):
    c = app_client
    # 1,200 fits of 500,000 iterations (0.06 s each here): far from done when the cancel comes,
    # its first point (3 fits) long done.
    selection = {"grid": [10.0 ** (-k / 20) for k in range(400)], "folds": 3, "patience": None}
    body = {"dataset_id": _ids(c)["heart"], "test_fraction": 0.25, "params": {**AUTO, "n_iter": 500_000}}
    job_id = create_job(c, **body, selection=selection).json()["id"]
    wait_for(c, job_id, lambda j: j["progress"]["iteration"] is not None)  # the path is fitting
    time.sleep(2.0)
    # The progress says it counts the path's fits, and carries the path's own rate on.
    progress = c.get(f"/v1/jobs/{job_id}").json()["progress"]
    assert progress["phase"] == "select_sigma" and progress["n_iter"] == 3 * len(selection["grid"])
    assert progress["eta_s"] is not None and progress["eta_s"] > 0
    assert c.post(f"/v1/jobs/{job_id}/cancel").status_code == 202
    job = wait_for(c, job_id)
    assert job["status"] == "cancelled" and job["model_id"] is not None, job
    chosen = job["selection"]
    assert chosen["stop_reason"] == "stopped" and 1 <= len(chosen["path"]) < len(selection["grid"])
    assert chosen["sigma"] == max(chosen["path"], key=lambda point: point["mean"])["sigma"]
