"""``init_model`` through /v1/jobs (app/services/jobs/warm_start.py, app/training/starting_point.py):
a model refreshed on new rows from a stored one (by id or name@alias) through the real app, SQLite
and worker pool; the lineage in the job's and the model's answers; the init model's fitted
preprocessing reused; a warm L-BFGS fit reaching the cold fit's optimum in fewer iterations; and
each bad init_model a 422 naming the field."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from tests.helpers import assert_problem, create_job, make_settings, wait_for

KEYS = {"a": "team-a:member:key-warm-a", "b": "team-b:member:key-warm-b"}
A = {"Authorization": "Bearer key-warm-a"}
B = {"Authorization": "Bearer key-warm-b"}
LOGISTIC = {"loss": "logistic", "sigma": 1e-3, "random_state": 0}


def _rows(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Iterator[dict[str, Any]]:
    """team-a's data sets (heart_scale's first 170 rows, its other 100, the same rows with other
    labels or more features, abalone) and a PGS model of the first rows, named heart@prod."""
    settings = make_settings(tmp_path_factory.mktemp("warm"), api_keys=",".join(KEYS.values()))
    heart = _rows(data_dir / "heart_scale.svm")
    relabelled = [b"2" + line[2:] if line.startswith(b"-1") else line for line in heart[170:]]
    with TestClient(create_app(settings)) as c:

        def upload(name: str, content: bytes, **fields: str) -> int:
            r = c.post("/v1/datasets", headers=A, files={"file": (name, content)}, data=fields)
            assert r.status_code == 201, r.text
            return int(r.json()["id"])

        ids = {
            "old": upload("old.svm", b"".join(heart[:170])),
            "new": upload("new.svm", b"".join(heart[170:])),
            "relabelled": upload("relabelled.svm", b"".join(relabelled)),
            "wider": upload("wider.svm", b"".join(heart[170:]), n_features="20"),
            "abalone": upload("abalone.svm", (data_dir / "abalone.svm").read_bytes()),
        }
        c.headers.update(A)
        job = _run(c, dataset_id=ids["old"], params=LOGISTIC, model_name="heart")
        model_id = job["model_id"]
        assert c.put("/v1/aliases/heart@prod", json={"model_id": model_id}).status_code == 200
        yield {"client": c, "ids": ids, "model_id": model_id}


def _run(c: TestClient, **body: Any) -> dict[str, Any]:
    r = create_job(c, **body)
    assert r.status_code == 202, r.text
    job = wait_for(c, r.json()["id"])
    assert job["status"] == "succeeded", job
    return job


def _arrays(c: TestClient, model_id: int) -> dict[str, np.ndarray]:
    """The model's arrays, from its JSON export."""
    r = c.get(f"/v1/models/{model_id}/export", params={"format": "json"})
    assert r.status_code == 200, r.text
    encoded = json.loads(r.content)["arrays"]
    return {name: np.asarray(a["data"]).reshape(a["shape"]) for name, a in encoded.items()}


def test_a_model_refreshed_by_alias_starts_from_it_and_says_so(world):
    c, ids, start = world["client"], world["ids"], world["model_id"]
    job = _run(c, dataset_id=ids["new"], params=LOGISTIC, init_model="heart@prod", test_fraction=0.3)
    assert job["init_model_id"] == start
    model = c.get(f"/v1/models/{job['model_id']}").json()
    assert model["init_model_id"] == start
    # A warm-started PGS fit runs one epoch of its 70 training rows by default, not five.
    assert job["progress"]["iteration"] == 70
    assert job["metrics"]["test_accuracy"] > 0.7
    # The refresh reused the start's fitted preprocessing (max-abs scales of the OLD rows).
    scales = [_arrays(c, m)["preprocessing.scale.max_abs_.values"] for m in (start, job["model_id"])]
    np.testing.assert_array_equal(scales[0], scales[1])
    cold = _run(c, dataset_id=ids["new"], params=LOGISTIC, test_fraction=0.3)
    assert cold["init_model_id"] is None
    assert c.get(f"/v1/models/{cold['model_id']}").json()["init_model_id"] is None


def test_a_warm_lbfgs_fit_reaches_the_cold_optimum(world):
    """From another data set's model the fit ends at the cold fit's optimum (the start changes
    the path, not the result); from that optimum itself it stops at once."""
    c, ids = world["client"], world["ids"]
    params = {"loss": "logistic", "sigma": 1e-2, "tol": 1e-10}
    raw = {"solver": "lbfgs", "dataset_id": ids["new"], "params": params, "preprocessing": None}
    start = _run(c, **{**raw, "dataset_id": ids["old"]})
    cold = _run(c, **raw)
    warm = _run(c, **raw, init_model=start["model_id"])
    again = _run(c, **raw, init_model=cold["model_id"])
    coefs = [_arrays(c, j["model_id"])["coef"] for j in (cold, warm, again)]
    np.testing.assert_allclose(coefs[1], coefs[0], atol=1e-3)  # to the solver's tolerance
    np.testing.assert_allclose(coefs[2], coefs[0], atol=1e-4)
    assert again["progress"]["iteration"] <= 2 < cold["progress"]["iteration"]


def test_every_warm_starting_solver_refreshes_through_the_api(world):
    c, ids = world["client"], world["ids"]
    for solver in ("sgd", "scd", "smidas"):
        job = _run(c, solver=solver, dataset_id=ids["new"], params=LOGISTIC, init_model=world["model_id"])
        assert job["init_model_id"] == world["model_id"], solver


@pytest.mark.parametrize(
    ("who", "body", "says"),
    [
        ("a", {"init_model": 99_999}, "model 99999 does not exist"),
        ("a", {"init_model": "heart@nope"}, "model alias heart@nope does not exist"),
        ("a", {"init_model": "heart@"}, "neither a model id nor name@alias"),
        # Another owner's model and alias do not exist for team-b.
        ("b", {"init_model": "MODEL"}, "does not exist"),
        ("b", {"init_model": "heart@prod"}, "model alias heart@prod does not exist"),
        ("a", {"dataset": "wider"}, "has 13 features; dataset"),
        ("a", {"dataset": "relabelled"}, "classes"),
        (
            "a",
            {"dataset": "abalone", "params": {"loss": "squared", "sigma": 1e-3}},
            "is a binary model; the job is regression",
        ),
        ("a", {"params": {**LOGISTIC, "loss": "hinge"}}, "has loss='logistic'; the job's is 'hinge'"),
        ("a", {"params": {**LOGISTIC, "fit_intercept": False}}, "fit_intercept"),
        ("a", {"solver": "kernel_pgs"}, "kernel_pgs cannot start from weights"),
        ("a", {"preprocessing": {"scaling": "none"}}, "preprocessing"),
        ("a", {"preprocessing": None}, "preprocessing"),
    ],
)
def test_a_bad_init_model_is_a_422_naming_it(world, who, body, says):
    c, ids = world["client"], world["ids"]
    dataset = ids[body.pop("dataset", "new")]
    request = {"dataset_id": dataset, "params": LOGISTIC, "init_model": world["model_id"]}
    request |= body
    if request["init_model"] == "MODEL":
        request["init_model"] = str(world["model_id"])
    if who == "b":  # team-b's own data set, so that only the model is another owner's
        r = c.post("/v1/datasets", headers=B, files={"file": ("b.svm", b"1 1:1\n-1 1:-1\n")})
        request["dataset_id"] = r.json()["id"]
    problem = assert_problem(create_job(c, headers=A if who == "a" else B, **request), 422, "body.init_model")
    assert says in problem["detail"], problem["detail"]


def test_a_deleted_init_model_no_longer_exists(world):
    c, ids = world["client"], world["ids"]
    doomed = _run(c, dataset_id=ids["old"], params=LOGISTIC)["model_id"]
    assert c.delete(f"/v1/models/{doomed}").status_code == 204
    problem = assert_problem(create_job(c, dataset_id=ids["new"], params=LOGISTIC, init_model=doomed), 422)
    assert f"model {doomed} does not exist" in problem["detail"]


def test_a_job_whose_init_model_is_deleted_while_it_waits_fails_and_says_why(world):
    """The one worker is busy with a long job while the refresh waits; its start is deleted
    meanwhile: the refresh fails naming it, rather than training from zero."""
    c, ids = world["client"], world["ids"]
    doomed = _run(c, dataset_id=ids["old"], params=LOGISTIC)["model_id"]
    busy = create_job(c, dataset_id=ids["old"], params={**LOGISTIC, "n_iter": 200_000_000}).json()
    wait_for(c, busy["id"], lambda j: j["status"] == "running")
    waiting = create_job(c, dataset_id=ids["new"], params=LOGISTIC, init_model=doomed).json()
    assert c.delete(f"/v1/models/{doomed}").status_code == 204
    assert c.post(f"/v1/jobs/{busy['id']}/cancel").status_code in (200, 202)
    failed = wait_for(c, waiting["id"])
    assert failed["status"] == "failed" and failed["model_id"] is None
    assert f"model {doomed} (init_model) was deleted before the job ran" in failed["error"]


def test_a_refresh_that_streams_from_shards_starts_from_the_model_too(tmp_path: Path, data_dir: Path):
    """Data over PGS_WORKER_MEMORY_BYTES trains shard by shard, through the start's fitted
    preprocessing and from its weights, as in memory."""
    settings = make_settings(tmp_path, worker_memory_bytes=1024)
    with TestClient(create_app(settings)) as c:
        r = c.post("/v1/datasets", files={"file": ("heart.svm", (data_dir / "heart_scale.svm").read_bytes())})
        dataset = r.json()["id"]
        start = _run(c, dataset_id=dataset, params=LOGISTIC)
        refreshed = _run(
            c, dataset_id=dataset, params=LOGISTIC, init_model=start["model_id"], test_fraction=0.3
        )
        assert "shard_window" in refreshed["metrics"]  # it streamed
        assert refreshed["init_model_id"] == start["model_id"]
        assert refreshed["metrics"]["test_accuracy"] > 0.7
        scales = [
            _arrays(c, j["model_id"])["preprocessing.scale.max_abs_.values"] for j in (start, refreshed)
        ]
        np.testing.assert_array_equal(scales[0], scales[1])
