"""Batch predictions: a model's predictions for a whole stored data set, in the background,
streamed back as CSV, JSON lines or .npy; cancel, restart and width rules."""

from __future__ import annotations

import csv
import io
import json
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import update

from app.core.config import Settings
from app.db.tables import BatchPrediction, utcnow
from app.main import create_app
from app.services.model_registry import batch_predictions, batch_results
from tests.helpers import (
    assert_problem,
    create_job,
    make_settings,
    poll,
    upload,
)
from tests.helpers import wait_for as wait_for_job

BIG_ROWS = 100_000


def _big_svmlight(data_dir: Path) -> bytes:
    """100,000 rows: heart_scale's 270 rows repeated with seeded noise (13 features)."""
    lines = (data_dir / "heart_scale.svm").read_bytes().splitlines()
    rng = np.random.default_rng(0)
    noise = rng.normal(scale=0.05, size=BIG_ROWS)
    out = []
    for i in range(BIG_ROWS):
        label, *pairs = lines[i % len(lines)].split()
        first = pairs[0].split(b":")
        pairs[0] = first[0] + b":" + f"{float(first[1]) + noise[i]:.4f}".encode()
        out.append(b" ".join([label, *pairs]))
    return b"\n".join(out) + b"\n"


def _wait(c: TestClient, path: str) -> dict[str, Any]:
    return poll(c, path, lambda b: b["status"] in ("succeeded", "failed", "cancelled"))


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    # A /predict body of 64 kB and 1,000 rows at most: the batch data set is far over both.
    return make_settings(tmp_path_factory.mktemp("batch"), max_predict_bytes=64 * 1024, max_predict_rows=1000)


@pytest.fixture(scope="module")
def served(settings: Settings, data_dir: Path) -> Iterator[dict[str, Any]]:
    with TestClient(create_app(settings)) as c:
        heart = upload(c, data_dir / "heart_scale.svm", "heart.svm").json()["id"]
        r = create_job(
            c, dataset_id=heart, params={"loss": "logistic", "sigma": 1e-3, "n_iter": 2000, "random_state": 0}
        )
        job = wait_for_job(c, r.json()["id"])
        assert job["status"] == "succeeded", job
        big_body = _big_svmlight(data_dir)
        big = upload(c, big_body, "big.svm").json()
        assert big["n_samples"] == BIG_ROWS, big
        yield {"client": c, "heart": heart, "model": job["model_id"], "big": big["id"], "big_body": big_body}


def _create(c: TestClient, model: int | str, dataset: int, **body: Any) -> Any:
    return c.post(f"/v1/models/{model}/predictions", json={"dataset_id": dataset, **body})


def test_batch_equals_predict_in_every_format(served: dict[str, Any], data_dir: Path):
    c, model = served["client"], served["model"]
    r = _create(c, model, served["heart"])
    assert r.status_code == 202, r.text
    path = r.headers["location"]
    assert path == f"/v1/models/{model}/predictions/{r.json()['id']}"
    done = _wait(c, path)
    assert done["status"] == "succeeded", done
    assert done["progress"] == {"rows_done": 270, "n_rows": 270, "fraction": 1.0}
    assert done["outputs"] == ["predictions", "scores", "probabilities"]

    body = (data_dir / "heart_scale.svm").read_bytes()
    ref = c.post(f"/v1/models/{model}/predict", content=body, headers={"content-type": "text/plain"}).json()
    npy = {
        out: np.load(io.BytesIO(c.get(f"{path}/result?format=npy&output={out}").content))
        for out in done["outputs"]
    }
    np.testing.assert_array_equal(npy["predictions"], ref["predictions"])
    np.testing.assert_array_equal(npy["scores"], ref["scores"])
    np.testing.assert_array_equal(npy["probabilities"], ref["probabilities"])

    r = c.get(f"{path}/result", headers={"accept": "application/x-ndjson"})
    assert r.headers["content-type"] == "application/x-ndjson"
    lines = [json.loads(line) for line in r.text.splitlines()]
    assert lines[5] == {
        "row": 5,
        "prediction": ref["predictions"][5],
        "score": ref["scores"][5],
        "probabilities": ref["probabilities"][5],
    }

    r = c.get(f"{path}/result?format=csv")
    assert r.headers["content-type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(r.text)))
    assert rows[0] == ["row", "prediction", "score", "probability_-1", "probability_1"]
    assert len(rows) == 271 and float(rows[1][2]) == pytest.approx(ref["scores"][0], rel=1e-15)
    assert_problem(c.get(f"{path}/result?format=npy&output=nothing"), 422, "query.output")


def test_100k_rows_over_the_body_limit_are_predicted_and_streamed(served: dict[str, Any], settings: Settings):
    """The data set is ~3 MB of svmlight and 100,000 rows: /predict refuses it (413), a batch
    prediction takes it; the CSV result (~5 MB) is produced block by block with the Python
    heap never holding more than a small part of it."""
    c, model = served["client"], served["model"]
    assert_problem(
        c.post(
            f"/v1/models/{model}/predict", content=served["big_body"], headers={"content-type": "text/plain"}
        ),
        413,
    )
    path = _create(c, model, served["big"]).headers["location"]
    done = _wait(c, path)
    assert done["status"] == "succeeded" and done["progress"]["rows_done"] == BIG_ROWS, done

    predictions = np.load(io.BytesIO(c.get(f"{path}/result?format=npy").content))
    assert predictions.shape == (BIG_ROWS,)
    first = c.post(
        f"/v1/models/{model}/predict",
        content=b"\n".join(served["big_body"].splitlines()[:300]),
        headers={"content-type": "text/plain"},
    )
    np.testing.assert_array_equal(predictions[:300], first.json()["predictions"])

    keys, classes = _stored_result(c, path)
    tracemalloc.start()
    sizes = [len(chunk) for chunk in batch_results.stream_csv(settings.store, keys, classes)]
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    total = sum(sizes)
    assert total > 5_000_000 and len(sizes) >= BIG_ROWS // batch_results.BLOCK_ROWS
    # Memory follows the block (1,024 rows), not the result (100,000 rows).
    assert max(sizes) < total / 50 and peak < total / 4, (max(sizes), peak, total)
    assert len(c.get(f"{path}/result?format=csv").content) == total


def _stored_result(c: TestClient, path: str) -> tuple[dict[str, str], list[Any]]:
    """The stored result's keys and the model's classes: what the result route streams."""
    row = c.get(path).json()
    with c.app.state.session_factory() as s:  # type: ignore[attr-defined]
        stored = s.get(BatchPrediction, row["id"])
        keys = batch_predictions.result_keys(stored.result_key, stored.outputs)
    return keys, c.get(f"/v1/models/{row['model_id']}").json()["classes"]


def test_cancel_stops_it_and_keeps_no_result(served: dict[str, Any]):
    c, model = served["client"], served["model"]
    path = _create(c, model, served["big"]).headers["location"]
    r = c.post(f"{path}/cancel")
    assert r.status_code == 200 and r.json()["cancel_requested"], r.text
    done = _wait(c, path)
    assert done["status"] == "cancelled" and done["outputs"] is None, done
    assert_problem(c.get(f"{path}/result"), 409)
    assert_problem(c.post(f"{path}/cancel"), 409)
    assert c.delete(path).status_code == 204
    assert_problem(c.get(path), 404)


def test_width_rules_and_unknown_inputs(served: dict[str, Any], data_dir: Path):
    """A data set wider than the model: 422 naming both widths, or extra_features=ignore."""
    c, model = served["client"], served["model"]
    wide = upload(c, b"1 1:0.5 20:1\n-1 2:0.25\n", "wide.svm").json()["id"]
    detail = assert_problem(_create(c, model, wide), 422, "body.dataset_id")["detail"]
    assert "20 features, the model 13" in detail and "extra_features=ignore" in detail
    path = _create(c, model, wide, extra_features="ignore").headers["location"]
    assert _wait(c, path)["status"] == "succeeded"
    ref = c.post(
        f"/v1/models/{model}/predict", content=b"1:0.5\n2:0.25", headers={"content-type": "text/plain"}
    ).json()
    scores = np.load(io.BytesIO(c.get(f"{path}/result?format=npy&output=scores").content))
    np.testing.assert_array_equal(scores, ref["scores"])
    assert_problem(_create(c, model, 999_999), 422, "body.dataset_id")
    assert_problem(_create(c, 999_999, wide), 404)
    assert_problem(c.get(f"/v1/models/{model}/predictions/999999"), 404)
    # The data set a running batch prediction reads is not deleted, even with force=true.
    with c.app.state.session_factory() as s:  # type: ignore[attr-defined]
        running = BatchPrediction(
            model_id=model,
            dataset_id=wide,
            extra_features="ignore",
            status="running",
            attempts=1,
            n_rows=2,
            rows_done=0,
            cancel_requested=False,
            heartbeat_at=utcnow(),
        )
        s.add(running)
        s.commit()
        detail = assert_problem(c.delete(f"/v1/datasets/{wide}?force=true"), 409)["detail"]
        assert f"batch prediction(s) [{running.id}]" in detail
        running.status = "failed"
        s.commit()
    assert c.delete(f"/v1/datasets/{wide}").status_code == 204


@pytest.mark.slow
def test_a_run_lost_with_its_server_is_run_again_at_the_next_start(data_dir: Path, tmp_path: Path):
    """The server stops while a batch prediction runs (here: the row is left running, as a
    killed server leaves it): the next start re-queues it and runs it to the end."""
    settings = make_settings(tmp_path)
    with TestClient(create_app(settings)) as c:
        heart = upload(c, data_dir / "heart_scale.svm", "heart.svm").json()["id"]
        job = wait_for_job(c, create_job(c, dataset_id=heart, params={"n_iter": 500}).json()["id"])
        path = _create(c, job["model_id"], heart).headers["location"]
        assert _wait(c, path)["status"] == "succeeded"
        with c.app.state.session_factory() as s:  # type: ignore[attr-defined]
            s.execute(
                update(BatchPrediction).values(status="running", result_key=None, outputs=None, rows_done=100)
            )
            s.commit()
    with TestClient(create_app(settings)) as c:
        done = _wait(c, path)
        assert done["status"] == "succeeded" and done["attempts"] == 2, done
        assert len(c.get(f"{path}/result?format=csv").text.splitlines()) == 271
