"""The service's whole flow on an S3 store (moto on 127.0.0.1): upload, train in the worker
pool, predict, batch predictions, delete; nothing lands in the data dir's datasets/ or models/."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

from app.core.storage.object_store import FsspecStore
from app.main import create_app
from tests.helpers import assert_problem, create_job, make_settings, poll, upload, wait_for
from tests.s3 import S3Server


@pytest.mark.slow
def test_upload_train_predict_and_batch_predict_on_s3(tmp_path: Path, s3: S3Server, data_dir: Path):
    settings = make_settings(tmp_path, **s3.settings())
    store = settings.store
    assert isinstance(store, FsspecStore)
    with TestClient(create_app(settings)) as c:
        assert c.get("/readyz").json()["checks"]["store"] == "ok"
        ds = upload(c, data_dir / "heart_scale.svm", "heart.svm").json()
        job = wait_for(
            c,
            create_job(
                c,
                dataset_id=ds["id"],
                test_fraction=0.25,
                params={"loss": "logistic", "sigma": 1e-3, "n_iter": 2000, "random_state": 0},
            ).json()["id"],
        )
        assert job["status"] == "succeeded", job
        assert job["metrics"]["test_accuracy"] > 0.7

        rows = (data_dir / "heart_scale.svm").read_bytes()
        ref = c.post(
            f"/v1/models/{job['model_id']}/predict", content=rows, headers={"content-type": "text/plain"}
        )
        assert ref.status_code == 200, ref.text
        path = c.post(f"/v1/models/{job['model_id']}/predictions", json={"dataset_id": ds["id"]}).headers[
            "location"
        ]
        done = poll(c, path, lambda b: b["status"] in ("succeeded", "failed", "cancelled"))
        assert done["status"] == "succeeded", done
        batch = np.load(io.BytesIO(c.get(f"{path}/result?format=npy").content))
        np.testing.assert_array_equal(batch, ref.json()["predictions"])

        # Everything is in the bucket, nothing in the data dir's store directories.
        objects = {p.removeprefix(store.root + "/").split("/")[0] for p in store.fs.find(store.root)}
        assert {"datasets", "models", "predictions"} <= objects, objects
        local = [p for d in ("datasets", "models") for p in (settings.data_dir / d).rglob("*")]
        assert local == [], local

        assert c.delete(path).status_code == 204
        assert c.delete(f"/v1/models/{job['model_id']}").status_code == 204
        assert c.delete(f"/v1/datasets/{ds['id']}").status_code == 204
        left = [p for p in store.fs.find(store.root) if not p.endswith("/pgs-store")]
        assert left == [], left


@pytest.mark.slow
def test_an_unreachable_store_is_not_ready_and_uploads_get_503(tmp_path: Path):
    settings = make_settings(tmp_path, store_url="s3://nowhere/x", s3_endpoint_url="http://127.0.0.1:9")
    with TestClient(create_app(settings)) as c:
        r = c.get("/readyz")
        assert r.status_code == 503, r.text
        assert "store" in r.json()["detail"], r.json()
        body = assert_problem(upload(c, b"1 1:1\n-1 2:1\n", "t.svm"), 503)
        assert body["type"].endswith("store-unavailable"), body
        assert c.get("/v1/datasets").json()["items"] == []  # no row without its data


def test_s3_calls_retry_in_botocore_standard_mode_unless_the_environment_names_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # "legacy", botocore's default, backed off for about 7 s on every call to an endpoint that
    # refuses connections (the test above took 40 s with it).
    monkeypatch.delenv("AWS_RETRY_MODE", raising=False)
    settings = make_settings(tmp_path, store_url="s3://nowhere/x", s3_endpoint_url="http://127.0.0.1:9")
    store = settings.store
    assert isinstance(store, FsspecStore)
    assert store.fs.config_kwargs == {"retries": {"mode": "standard"}}
    monkeypatch.setenv("AWS_RETRY_MODE", "adaptive")
    store = settings.store
    assert isinstance(store, FsspecStore)
    assert "retries" not in store.fs.config_kwargs
