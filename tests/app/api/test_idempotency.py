"""Idempotency-Key on every creating POST (app/services/idempotency.py): a retried upload or
study creation answers with what the first request created and creates nothing more; the same key
with another request is a 409; keys are per operation. Jobs: tests/app/jobs/test_jobs.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.helpers import assert_problem, upload, wait_for


def _count(client: TestClient, path: str) -> int:
    return len(client.get(path, params={"limit": 500}).json()["items"])


def test_a_retried_upload_returns_the_first_data_set(client: TestClient, data_dir: Path, tmp_path: Path):
    heart = (data_dir / "heart_scale.svm").read_bytes()
    key = {"Idempotency-Key": "upload-1"}

    def send(content: bytes, **fields: str):
        return client.post("/v1/datasets", files={"file": ("heart.svm", content)}, data=fields, headers=key)

    first, second = send(heart, name="heart"), send(heart, name="heart")
    assert first.status_code == second.status_code == 201, second.text
    assert second.json() == first.json()
    assert second.headers["idempotent-replayed"] == "true"
    assert second.headers["location"] == first.headers["location"]
    assert "idempotent-replayed" not in first.headers
    # One row and one stored file.
    assert _count(client, "/v1/datasets") == 1
    assert len(list((tmp_path / "var" / "datasets").iterdir())) == 1
    # The same key with other content or other fields: refused, nothing stored.
    assert_problem(send(heart[: len(heart) // 2].rsplit(b"\n", 1)[0] + b"\n", name="heart"), 409)
    assert_problem(send(heart, name="other"), 409)
    assert _count(client, "/v1/datasets") == 1
    # Without a key every upload is a new data set; deleting one forgets its key.
    assert client.post("/v1/datasets", files={"file": ("h.svm", heart)}).status_code == 201
    assert client.delete(first.headers["location"]).status_code == 204
    third = send(heart, name="heart")
    assert third.status_code == 201 and third.json()["id"] not in (first.json()["id"],)
    assert "idempotent-replayed" not in third.headers


@pytest.mark.slow
def test_a_retried_study_returns_the_first_study_and_queues_no_more_jobs(client: TestClient, data_dir: Path):
    ds = upload(client, data_dir / "heart_scale.svm", "heart.svm").json()["id"]
    body = {
        "dataset_id": ds,
        "test_fraction": 0.3,
        "sizes": [40],
        "repeats": 1,
        "targets": [0.7],
        "runs": [{"params": {"loss": "logistic", "n_iter": 300}}],
    }
    key = {"Idempotency-Key": "study-1"}
    first = client.post("/v1/studies", json=body, headers=key)
    second = client.post("/v1/studies", json=body, headers=key)
    assert first.status_code == second.status_code == 202, second.text
    assert second.json()["id"] == first.json()["id"]
    assert second.headers["idempotent-replayed"] == "true"
    assert _count(client, "/v1/studies") == 1 and _count(client, "/v1/jobs") == 1
    assert_problem(client.post("/v1/studies", json={**body, "repeats": 2}, headers=key), 409)
    # A key belongs to one operation: the study's key cannot create a job.
    assert_problem(client.post("/v1/jobs", json={"dataset_id": ds}, headers=key), 409)
    assert _count(client, "/v1/jobs") == 1
    for job in client.get("/v1/jobs").json()["items"]:
        wait_for(client, job["id"])
