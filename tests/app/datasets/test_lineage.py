"""A data set that models or studies come from is deleted only when asked explicitly, and then
the models keep what it was."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.helpers import assert_problem, create_job, poll, upload, wait_for


@pytest.mark.slow
def test_a_used_data_set_is_kept_unless_forced_and_models_keep_its_metadata(
    client: TestClient, data_dir: Path
):
    path = data_dir / "heart_scale.svm"
    heart = upload(client, path, "heart.svm").json()
    jobs = [
        wait_for(
            client,
            create_job(client, dataset_id=heart["id"], params={"n_iter": 500, "sigma": s}).json()["id"],
        )
        for s in (1e-3, 1e-2)
    ]
    models = [j["model_id"] for j in jobs]
    study = client.post(
        "/v1/studies",
        json={
            "dataset_id": heart["id"],
            "test_fraction": 0.25,
            "runs": [{"params": {"n_iter": 10**9}}],
            "sizes": [50],
            "repeats": 1,
            "targets": [0.7],
        },
    ).json()

    # The study's job is queued or running: not even force deletes what a job reads.
    assert client.post(f"/v1/studies/{study['id']}/cancel").status_code in (200, 202)
    poll(client, f"/v1/studies/{study['id']}", lambda s: s["progress"]["done"] == s["progress"]["total"])
    # A study job cancelled while running keeps its last iterate as a (partial) model too.
    models = sorted(
        m["id"] for m in client.get("/v1/models").json()["items"] if m["dataset_id"] == heart["id"]
    )
    assert len(models) >= 2
    detail = assert_problem(client.delete(f"/v1/datasets/{heart['id']}"), 409)["detail"]
    assert f"model(s) {models}" in detail and f"study(ies) [{study['id']}]" in detail
    assert "force=true" in detail
    assert client.get(f"/v1/datasets/{heart['id']}").status_code == 200

    assert client.delete(f"/v1/datasets/{heart['id']}?force=true").status_code == 204
    assert_problem(client.get(f"/v1/datasets/{heart['id']}"), 404)
    for model_id in models:
        model = client.get(f"/v1/models/{model_id}").json()
        assert model["dataset_id"] is None
        kept = model["training_dataset"]
        assert {
            k: kept[k]
            for k in ("id", "name", "sha256", "n_samples", "n_features", "task", "format", "index_base")
        } == {
            "id": heart["id"],
            "name": "heart.svm",
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            "n_samples": 270,
            "n_features": 13,
            "task": "binary",
            "format": "svmlight",
            "index_base": 1,
        }
        assert kept["deleted_at"] >= kept["created_at"]
    # The models still predict: they need nothing of the data set.
    r = client.post(f"/v1/models/{models[0]}/predict", json={"instances": [[0.0] * 13]})
    assert r.status_code == 200


def test_an_unused_data_set_is_deleted_at_once(client: TestClient, data_dir: Path):
    ident = upload(client, data_dir / "heart_scale.svm", "heart.svm").json()["id"]
    assert client.delete(f"/v1/datasets/{ident}").status_code == 204
