"""Repeatable by default (app/services/jobs/selection.py, seeded_params): a job whose params leave
out ``random_state`` gets one drawn at request time and recorded in its params, so sending those
params back repeats the run exactly: the solver's draws, sigma "auto"'s folds and early
stopping's validation split. A solver with no draws of its own records the seed too."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from tests.helpers import create_job, make_settings, upload, wait_for


@pytest.fixture(scope="module")
def app_client(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Iterator[TestClient]:
    settings = make_settings(tmp_path_factory.mktemp("random_state"), workers=1)
    with TestClient(create_app(settings)) as c:
        c.heart = upload(c, data_dir / "heart_scale.svm", "heart_scale.svm").json()["id"]  # type: ignore[attr-defined]
        yield c


def _run(c: TestClient, **body: Any) -> dict[str, Any]:
    r = create_job(c, dataset_id=c.heart, test_fraction=0.3, **body)  # type: ignore[attr-defined]
    assert r.status_code == 202, r.text
    job = wait_for(c, r.json()["id"])
    assert job["status"] == "succeeded", job
    return job


def _chosen(job: dict[str, Any]) -> Any:
    """What sigma "auto" chose and each point's scores (not its seconds); None without it."""
    selection = job.get("selection")
    if selection is None:
        return None
    return selection["sigma"], [(p["sigma"], p["mean"], p["std"]) for p in selection["path"]]


def _weights(c: TestClient, job: dict[str, Any]) -> dict[str, Any]:
    exported = c.get(f"/v1/models/{job['model_id']}/export", params={"format": "json"})
    assert exported.status_code == 200, exported.text
    return exported.json()["arrays"]  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    "params",
    [
        {"loss": "logistic", "sigma": 1e-2, "n_iter": 3000},
        {"loss": "logistic", "sigma": "auto"},
        {"loss": "logistic", "sigma": 1e-2, "early_stopping": True},
    ],
    ids=["minibatch draws", "sigma auto folds", "early stopping split"],
)
def test_an_unseeded_job_records_the_seed_that_repeats_it(app_client: TestClient, params: dict[str, Any]):
    c = app_client
    first = _run(c, params=params)
    seed = first["params"]["random_state"]
    assert isinstance(seed, int) and 0 <= seed < 2**32
    assert first["params"] == {**params, "random_state": seed}
    # The recorded params, sent back: the same model and the same scores, to the last bit.
    again = _run(c, params=first["params"])
    assert again["params"] == first["params"]
    assert again["metrics"]["test_accuracy"] == first["metrics"]["test_accuracy"]
    assert _chosen(again) == _chosen(first)
    assert _weights(c, again) == _weights(c, first)


def test_two_unseeded_jobs_draw_their_own_seeds(app_client: TestClient):
    c = app_client
    params = {"loss": "logistic", "sigma": 1e-2, "n_iter": 10}
    seeds = {
        create_job(c, dataset_id=c.heart, params=params).json()["params"]["random_state"]  # type: ignore[attr-defined]
        for _ in range(3)
    }
    # Three draws from 2**32 values: equal ones would mean a fixed default, not a draw.
    assert len(seeds) == 3


def test_a_given_seed_is_kept_and_a_deterministic_solver_records_one_too(app_client: TestClient):
    c = app_client
    given = create_job(c, dataset_id=c.heart, params={"sigma": 1e-2, "n_iter": 10, "random_state": 11})  # type: ignore[attr-defined]
    assert given.json()["params"]["random_state"] == 11
    lbfgs = _run(c, solver="lbfgs", params={"sigma": 1e-2})
    assert isinstance(lbfgs["params"]["random_state"], int)
