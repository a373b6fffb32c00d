"""``"solver": "sdca"`` through POST /v1/jobs and the real worker pool: it reaches the model L-BFGS
reaches for the same objective, its trace carries the duality gap that stopped it, and values its
parameters do not allow are a 422 naming the parameter before anything is queued."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from tests.helpers import assert_problem, create_job, make_settings, upload, wait_for

# The same objective for both solvers, and the same seed, so the same test rows.
SIGMA = 1e-3


@pytest.fixture(scope="module")
def app_client(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Iterator[TestClient]:
    settings = make_settings(tmp_path_factory.mktemp("sdca"), workers=1)
    with TestClient(create_app(settings)) as c:
        c.heart = upload(c, data_dir / "heart_scale.svm", "heart_scale.svm").json()["id"]  # type: ignore[attr-defined]
        yield c


def _run(c: TestClient, solver: str, params: dict[str, Any]) -> dict[str, Any]:
    body = {"loss": "logistic", "sigma": SIGMA, "random_state": 5, **params}
    r = create_job(c, dataset_id=c.heart, solver=solver, test_fraction=0.3, params=body)  # type: ignore[attr-defined]
    assert r.status_code == 202, r.text
    job = wait_for(c, r.json()["id"])
    assert job["status"] == "succeeded", job
    return job


def _weights(c: TestClient, job: dict[str, Any]) -> np.ndarray:
    arrays = c.get(f"/v1/models/{job['model_id']}/export", params={"format": "json"}).json()["arrays"]
    return np.append(arrays["coef"]["data"], arrays["intercept"]["data"])


@pytest.mark.parametrize("loss", ["logistic", "squared_hinge"])
def test_an_sdca_job_reaches_the_lbfgs_model_and_its_accuracy(app_client: TestClient, loss: str):
    c = app_client
    # L-BFGS's constant feature is 1; sdca's is the values' RMS unless told.
    sdca = _run(c, "sdca", {"loss": loss, "tol": 1e-10, "n_iter": 20_000, "intercept_scaling": 1})
    lbfgs = _run(c, "lbfgs", {"loss": loss, "tol": 1e-12, "n_iter": 5000})
    assert sdca["stop_reason"] == "converged"
    assert sdca["metrics"]["test_accuracy"] == pytest.approx(lbfgs["metrics"]["test_accuracy"], abs=1e-12)
    # SDCA's gap is at most 1e-10 P(0): sigma-strong convexity puts its weights within
    # sqrt(2 gap / sigma) ~ 4e-4 of the optimum at worst; they are far nearer to L-BFGS's.
    np.testing.assert_allclose(_weights(c, sdca), _weights(c, lbfgs), atol=1e-4)


def test_the_trace_gives_the_duality_gap_that_stopped_the_run(app_client: TestClient):
    c = app_client
    job = _run(c, "sdca", {"tol": 1e-6})
    points = c.get(f"/v1/jobs/{job['id']}/trace").json()["points"]
    gaps = [p["duality_gap"] for p in points]
    assert gaps[0] is None  # no dual point before the first epoch
    assert all(gap is not None and gap >= 0.0 for gap in gaps[1:])
    assert gaps[-1] <= 1e-6 * np.log(2.0)  # tol times P(0), log 2 for the logistic loss
    assert gaps[-1] < gaps[1]
    for point in points[1:]:  # weak duality: objective - gap is a dual value, below the optimum
        assert point["objective"] - point["duality_gap"] <= points[-1]["objective"] + 1e-12
    # A solver without a dual point leaves the column empty.
    lbfgs = _run(c, "lbfgs", {})
    assert {p["duality_gap"] for p in c.get(f"/v1/jobs/{lbfgs['id']}/trace").json()["points"]} == {None}


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"tol": -1e-3}, "tol"),
        ({"n_iter": 0}, "n_iter"),
        ({"loss": "smooth_hinge"}, "loss"),
        ({"p": 1.5}, "p"),
        ({"early_stopping": True}, "early_stopping"),
        ({"intercept_scaling": 0}, "intercept_scaling"),
    ],
    ids=[
        "negative tol",
        "no epochs",
        "a loss without an sdca step",
        "p below 2",
        "early stopping",
        "a constant feature of 0",
    ],
)
def test_values_sdca_does_not_take_are_a_422_naming_them(
    app_client: TestClient, params: dict[str, Any], field: str
):
    c = app_client
    r = create_job(c, dataset_id=c.heart, solver="sdca", params=params)  # type: ignore[attr-defined]
    assert_problem(r, 422, f"body.params.{field}")
