"""Names, descriptions and tags on data sets, jobs and models; model versions; aliases
(name@alias) with their history, used for predictions while they move."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from tests.helpers import assert_problem, create_job, make_settings, upload, wait_for

ROWS = {
    "instances": [
        [0.7, 1, 1, -0.3, -0.2, -1, 1, 0.5, -1, -0.9, 0.3, -1, 1],
        [-0.5, -1, 0.3, 0.1, -0.8, -1, -1, 0.2, -1, -0.5, -1, -1, -0.5],
    ]
}


def _train(c: TestClient, dataset_id: int, sigma: float, **labels: Any) -> dict[str, Any]:
    r = create_job(
        c,
        dataset_id=dataset_id,
        params={"loss": "logistic", "sigma": sigma, "n_iter": 2000, "random_state": 0},
        **labels,
    )
    assert r.status_code == 202, r.text
    job = wait_for(c, r.json()["id"])
    assert job["status"] == "succeeded", job
    return job


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Iterator[dict[str, Any]]:
    """Two versions of heart-clf (different sigmas, so different scores) and an unnamed model."""
    settings = make_settings(tmp_path_factory.mktemp("registry"))
    with TestClient(create_app(settings)) as c:
        heart = upload(
            c, data_dir / "heart_scale.svm", "heart.svm", description="Statlog heart", tags="medical,small"
        ).json()
        jobs = [
            _train(c, heart["id"], sigma, name=f"heart {sigma}", tags=["nightly"], model_name="heart-clf")
            for sigma in (1e-3, 1e-1)
        ]
        other = _train(c, heart["id"], 1e-2)
        yield {
            "client": c,
            "heart": heart,
            "jobs": jobs,
            "v1": jobs[0]["model_id"],
            "v2": jobs[1]["model_id"],
            "other": other["model_id"],
        }


def test_labels_are_set_edited_and_filtered(registry: dict[str, Any]):
    c, heart = registry["client"], registry["heart"]
    assert heart["description"] == "Statlog heart" and heart["tags"] == ["medical", "small"]
    r = c.patch(f"/v1/datasets/{heart['id']}", json={"name": "heart-270", "tags": ["medical"]})
    assert r.status_code == 200, r.text
    assert r.json()["name"] == "heart-270" and r.json()["tags"] == ["medical"]
    assert r.json()["description"] == "Statlog heart"  # left out: unchanged
    assert [d["id"] for d in c.get("/v1/datasets?tag=medical").json()["items"]] == [heart["id"]]
    assert c.get("/v1/datasets?tag=small").json()["items"] == []
    assert c.get("/v1/datasets?tag=medical&tag=small").json()["items"] == []

    job = registry["jobs"][0]
    assert job["name"] == "heart 0.001" and job["tags"] == ["nightly"]
    assert job["model_name"] == "heart-clf"
    r = c.patch(f"/v1/jobs/{job['id']}", json={"description": "baseline", "tags": ["nightly", "a_b"]})
    assert r.json()["description"] == "baseline" and r.json()["tags"] == ["nightly", "a_b"]
    # "_" is a LIKE wildcard: the filter must match it literally.
    assert [j["id"] for j in c.get("/v1/jobs?tag=a_b").json()["items"]] == [job["id"]]
    assert c.get("/v1/jobs?tag=aXb").json()["items"] == []
    assert len(c.get("/v1/jobs?tag=nightly").json()["items"]) == 2

    r = c.patch(f"/v1/models/{registry['other']}", json={"tags": ["candidate"], "description": "sigma 1e-2"})
    assert r.json()["tags"] == ["candidate"] and r.json()["name"] is None
    assert [m["id"] for m in c.get("/v1/models?tag=candidate").json()["items"]] == [registry["other"]]


@pytest.mark.parametrize(
    "body, field",
    [
        ({"tags": ["has space"]}, "body.tags.0"),
        ({"tags": ["a", "a"]}, "body.tags"),
        ({"name": "12"}, "body.name"),
        ({"name": "a@b"}, "body.name"),
        ({"solver": "pgs"}, "body.solver"),
    ],
)
def test_bad_patches_are_422(registry: dict[str, Any], body: dict[str, Any], field: str):
    assert_problem(registry["client"].patch(f"/v1/models/{registry['other']}", json=body), 422, field)


def test_a_name_groups_versions(registry: dict[str, Any]):
    c = registry["client"]
    v1, v2 = (c.get(f"/v1/models/{registry[v]}").json() for v in ("v1", "v2"))
    assert (v1["name"], v1["version"], v2["name"], v2["version"]) == ("heart-clf", 1, "heart-clf", 2)
    listed = c.get("/v1/models?name=heart-clf").json()["items"]
    assert [m["version"] for m in listed] == [2, 1]


def test_aliases_move_and_keep_their_history(registry: dict[str, Any]):
    c, v1, v2, other = (registry[k] for k in ("client", "v1", "v2", "other"))
    ref = "heart-clf@production"
    assert_problem(c.post(f"/v1/models/{ref}/predict", json=ROWS), 404)
    r = c.put(f"/v1/aliases/{ref}", json={"model_id": v1})
    assert r.status_code == 200, r.text
    assert r.json() | {"updated_at": None} == {
        "name": "heart-clf",
        "alias": "production",
        "model_id": v1,
        "version": 1,
        "ref": ref,
        "updated_at": None,
    }
    by_alias = c.post(f"/v1/models/{ref}/predict", json=ROWS).json()
    assert by_alias == c.post(f"/v1/models/{v1}/predict", json=ROWS).json()
    assert c.get(f"/v1/models/{ref}").json()["id"] == v1

    # Only a version of the alias's name; a model with an alias is neither deleted nor renamed.
    assert (
        "not a version of 'heart-clf'"
        in assert_problem(c.put(f"/v1/aliases/{ref}", json={"model_id": other}), 409)["detail"]
    )
    assert ref in assert_problem(c.delete(f"/v1/models/{v1}"), 409)["detail"]
    assert ref in assert_problem(c.patch(f"/v1/models/{v1}", json={"name": "x"}), 409)["detail"]

    assert c.put(f"/v1/aliases/{ref}", json={"model_id": v2}).json()["version"] == 2
    assert (
        c.post(f"/v1/models/{ref}/predict", json=ROWS).json()
        == c.post(f"/v1/models/{v2}/predict", json=ROWS).json()
        != by_alias
    )
    assert c.put(f"/v1/aliases/{ref}", json={"model_id": v2}).status_code == 200  # no change
    assert [a["ref"] for a in c.get("/v1/aliases?name=heart-clf").json()["items"]] == [ref]
    assert c.delete(f"/v1/aliases/{ref}").status_code == 204
    assert_problem(c.get(f"/v1/aliases/{ref}"), 404)
    history = c.get(f"/v1/aliases/{ref}/history").json()["items"]
    assert [(e["model_id"], e["previous_model_id"]) for e in history] == [(v1, None), (v2, v1), (None, v2)]
    assert {e["principal"] for e in history} == {"anonymous"}


@pytest.mark.parametrize("ref", ["heart-clf", "heart-clf@", "@prod", "12@prod", "a@1x"])
def test_malformed_alias_refs_are_422(registry: dict[str, Any], ref: str):
    assert_problem(registry["client"].put(f"/v1/aliases/{ref}", json={"model_id": 1}), 422)


def test_predictions_never_fail_while_the_alias_moves(registry: dict[str, Any]):
    """Four threads predict through heart-clf@live while the main thread moves it between the
    two versions 40 times: every request succeeds, answered by one version or the other."""
    c, v1, v2 = registry["client"], registry["v1"], registry["v2"]
    answers = {c.post(f"/v1/models/{m}/predict", json=ROWS).json()["scores"][0] for m in (v1, v2)}
    assert c.put("/v1/aliases/heart-clf@live", json={"model_id": v1}).status_code == 200
    moving = True

    def predict_until_done() -> list[tuple[int, float]]:
        seen = []
        while moving:
            r = c.post("/v1/models/heart-clf@live/predict", json=ROWS)
            seen.append((r.status_code, r.json()["scores"][0] if r.status_code == 200 else 0.0))
        return seen

    with ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(predict_until_done) for _ in range(4)]
        for i in range(40):
            r = c.put("/v1/aliases/heart-clf@live", json={"model_id": (v2, v1)[i % 2]})
            assert r.status_code == 200, r.text
        moving = False
        results = [x for f in futures for x in f.result()]
    assert results and {status for status, _ in results} == {200}
    assert {score for _, score in results} <= answers
    assert len(c.get("/v1/aliases/heart-clf@live/history").json()["items"]) == 41
