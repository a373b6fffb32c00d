"""A job's full test metrics and a binary classifier's decision threshold through /v1/jobs, the
model and /predict (app/services/metrics, app/services/jobs/threshold.py): every bad threshold a
422 naming its field and rule; the metrics of a trained model equal sklearn.metrics on the
predictions /predict gives for the same test rows; a given or chosen threshold stored with the
model and used by /predict and by batch predictions, which report the same metrics."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from scipy.special import logit
from sklearn import metrics as skm
from sklearn.datasets import load_svmlight_file

from app.main import create_app
from tests.helpers import assert_problem, create_job, make_settings, poll, upload, wait_for

LOGISTIC = {"loss": "logistic", "sigma": 1e-3, "n_iter": 3000, "random_state": 0}
TOL = 1e-9


@pytest.fixture(scope="module")
def app_client(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Iterator[TestClient]:
    root = tmp_path_factory.mktemp("metrics")
    lines = (data_dir / "heart_scale.svm").read_bytes().splitlines(keepends=True)
    (root / "train.svm").write_bytes(b"".join(lines[:200]))
    (root / "test.svm").write_bytes(b"".join(lines[200:]))
    settings = make_settings(root, workers=1)
    with TestClient(create_app(settings)) as c:
        c.ids = {  # type: ignore[attr-defined]
            "train": upload(c, root / "train.svm", "train.svm").json()["id"],
            "test": upload(c, root / "test.svm", "test.svm", n_features="13").json()["id"],
            "abalone": upload(c, data_dir / "abalone.svm", "abalone.svm").json()["id"],
        }
        c.test_body = (root / "test.svm").read_bytes()  # type: ignore[attr-defined]
        yield c


def _ids(c: TestClient) -> dict[str, int]:
    return c.ids  # type: ignore[attr-defined, no-any-return]


def _trained(c: TestClient, **body: Any) -> dict[str, Any]:
    r = create_job(c, dataset_id=_ids(c)["train"], test_dataset_id=_ids(c)["test"], **body)
    assert r.status_code == 202, r.text
    job = wait_for(c, r.json()["id"])
    assert job["status"] == "succeeded", job
    return job


def _predict_test_rows(c: TestClient, model_id: int) -> dict[str, Any]:
    body = c.test_body  # type: ignore[attr-defined]
    r = c.post(f"/v1/models/{model_id}/predict", content=body, headers={"content-type": "text/plain"})
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("params", "threshold", "field"),
    [
        (LOGISTIC, {"value": 1.5}, "body.threshold.value"),
        (LOGISTIC, {"value": 0.0}, "body.threshold.value"),
        (LOGISTIC, {"value": 1.0}, "body.threshold.value"),
        (LOGISTIC, {"metric": "auc"}, "body.threshold.metric"),
        (LOGISTIC, {"metric": "log_loss"}, "body.threshold.metric"),
        (LOGISTIC, {"metric": "f1", "value": 0.3}, "body.threshold"),
        (LOGISTIC, {}, "body.threshold"),
        (LOGISTIC, {"metric": "f1", "validation_fraction": 1.0}, "body.threshold.validation_fraction"),
        (LOGISTIC, {"value": 0.5, "cut": 1}, "body.threshold.cut"),
    ],
)
def test_a_bad_threshold_is_a_422_naming_its_field(
    app_client: TestClient, params: dict[str, Any], threshold: dict[str, Any], field: str
):
    body = {"dataset_id": _ids(app_client)["train"], "params": params, "threshold": threshold}
    problem = assert_problem(create_job(app_client, **body), 422, field)
    if field == "body.threshold.value":
        assert "between 0 and 1" in problem["errors"][0]["msg"]


def test_a_non_finite_threshold_is_a_422(app_client: TestClient):
    body = '{"dataset_id": ID, "threshold": {"value": NaN}}'.replace("ID", str(_ids(app_client)["train"]))
    r = app_client.post("/v1/jobs", content=body, headers={"content-type": "application/json"})
    assert_problem(r, 422, "body.threshold.value")


def test_a_threshold_on_a_regression_is_a_422_naming_the_task(app_client: TestClient):
    body = {
        "dataset_id": _ids(app_client)["abalone"],
        "params": {"loss": "squared"},
        "threshold": {"value": 1},
    }
    problem = assert_problem(create_job(app_client, **body), 422, "body.threshold")
    assert "regression" in problem["errors"][0]["msg"]


def test_the_test_metrics_equal_sklearn_on_the_predictions(app_client: TestClient):
    c = app_client
    job = _trained(c, params=LOGISTIC)
    test = job["metrics"]["test"]
    out = _predict_test_rows(c, job["model_id"])
    _, y = load_svmlight_file(_test_path(c))
    y = (y > 0).astype(int)  # classes [-1, 1]: codes 0, 1
    p = np.asarray(out["probabilities"])[:, 1]
    pred = (np.asarray(out["predictions"]) > 0).astype(int)
    assert test["rows"] == len(y) and test["unknown_label_rows"] == 0
    assert test["accuracy"] == pytest.approx(job["metrics"]["test_accuracy"], abs=TOL)
    expected = {
        "accuracy": skm.accuracy_score(y, pred),
        "balanced_accuracy": skm.balanced_accuracy_score(y, pred),
        "log_loss": skm.log_loss(y, p),
        "roc_auc": skm.roc_auc_score(y, p),
        "average_precision": skm.average_precision_score(y, p),
        "precision": skm.precision_score(y, pred),
        "recall": skm.recall_score(y, pred),
        "f1": skm.f1_score(y, pred),
    }
    for name, value in expected.items():
        assert test[name] == pytest.approx(value, abs=TOL), name
    assert test["confusion_matrix"] == {"labels": [-1, 1], "matrix": skm.confusion_matrix(y, pred).tolist()}
    assert test["roc_curves"][0]["label"] == 1 and test["calibration"]["bins"] == 10
    assert job["threshold"] == {
        "value": 0.5,
        "applies_to": "probability",
        "source": "default",
        "metric": None,
        "validation_score": None,
    }
    model = c.get(f"/v1/models/{job['model_id']}").json()
    assert model["threshold"] == job["threshold"] and model["metrics"]["test"] == test


def _test_path(c: TestClient) -> io.BytesIO:
    return io.BytesIO(c.test_body)  # type: ignore[attr-defined]


def test_a_given_threshold_decides_predict_and_the_metrics(app_client: TestClient):
    c = app_client
    job = _trained(c, params=LOGISTIC, threshold={"value": 0.8})
    assert job["threshold_options"] == {"value": 0.8, "metric": None, "validation_fraction": 0.2}
    assert job["threshold"]["value"] == 0.8 and job["threshold"]["source"] == "given"
    out = _predict_test_rows(c, job["model_id"])
    scores = np.asarray(out["scores"])
    assert out["predictions"] == np.where(scores > logit(0.8), 1, -1).tolist()
    assert np.any((scores > 0) & (scores <= logit(0.8)))  # rows the default would call positive
    _, y = load_svmlight_file(_test_path(c))
    assert job["metrics"]["test"]["f1"] == pytest.approx(skm.f1_score(y, out["predictions"]), abs=TOL)


def test_a_threshold_chosen_for_f1_on_validation_rows(app_client: TestClient):
    c = app_client
    job = _trained(c, params=LOGISTIC, threshold={"metric": "f1", "validation_fraction": 0.3})
    chosen = job["threshold"]
    assert chosen["source"] == "validation" and chosen["metric"] == "f1"
    assert 0.0 < chosen["value"] < 1.0 and 0.0 < chosen["validation_score"] <= 1.0
    out = _predict_test_rows(c, job["model_id"])
    assert out["predictions"] == np.where(np.asarray(out["scores"]) > logit(chosen["value"]), 1, -1).tolist()
    assert job["metrics"]["test"]["threshold"] == chosen
    # The legacy test_accuracy is that of the predictions too, at the chosen threshold.
    assert job["metrics"]["test_accuracy"] == pytest.approx(job["metrics"]["test"]["accuracy"], abs=TOL)


def test_a_hinge_model_has_no_probability_metrics_and_a_decision_value_threshold(app_client: TestClient):
    c = app_client
    job = _trained(c, params={**LOGISTIC, "loss": "hinge"}, threshold={"value": -0.25})
    test = job["metrics"]["test"]
    assert test["log_loss"] is None and "logistic" in test["absent"]["log_loss"]
    assert test["calibration"] is None and test["roc_auc"] is not None
    assert job["threshold"]["applies_to"] == "decision_value" and job["threshold"]["value"] == -0.25
    out = _predict_test_rows(c, job["model_id"])
    assert out["predictions"] == np.where(np.asarray(out["scores"]) > -0.25, 1, -1).tolist()


def test_regression_metrics(app_client: TestClient):
    c = app_client
    params = {"loss": "squared", "sigma": 1e-3, "n_iter": 3000, "random_state": 0}
    r = create_job(c, dataset_id=_ids(c)["abalone"], test_fraction=0.25, params=params)
    job = wait_for(c, r.json()["id"])
    test = job["metrics"]["test"]
    assert test["rmse"] == pytest.approx(job["metrics"]["test_rmse"], abs=TOL)
    assert test["mae"] > 0 and test["r2"] < 1 and job["threshold"] is None


def test_a_batch_prediction_over_labelled_rows_reports_the_same_metrics(app_client: TestClient):
    c = app_client
    job = _trained(c, params=LOGISTIC, threshold={"value": 0.7})
    r = c.post(f"/v1/models/{job['model_id']}/predictions", json={"dataset_id": _ids(c)["test"]})
    assert r.status_code == 202, r.text
    done = poll(c, r.headers["location"], lambda b: b["status"] in ("succeeded", "failed", "cancelled"))
    assert done["status"] == "succeeded", done
    batch, test = done["metrics"], job["metrics"]["test"]
    assert batch.keys() == test.keys()
    for name in ("accuracy", "balanced_accuracy", "log_loss", "roc_auc", "average_precision", "f1"):
        assert batch[name] == pytest.approx(test[name], abs=TOL), name
    assert batch["confusion_matrix"] == test["confusion_matrix"] and batch["threshold"] == test["threshold"]


@pytest.mark.parametrize(
    ("params", "targets", "field", "rule"),
    [
        (LOGISTIC, {"metric": "auc", "values": [0.9]}, "body.targets.metric", "one of accuracy"),
        (LOGISTIC, {"metric": "rmse", "values": [0.9]}, "body.targets.metric", "classification metric"),
        (LOGISTIC, {"metric": "f1", "values": [1.5]}, "body.targets.values", "in [0, 1]"),
        (LOGISTIC, {"metric": "log_loss", "values": [-1.0]}, "body.targets.values", ">= 0"),
        (
            {**LOGISTIC, "loss": "hinge"},
            {"metric": "log_loss", "values": [0.3]},
            "body.targets.metric",
            "logistic",
        ),
    ],
)
def test_a_bad_target_metric_is_a_422_naming_its_field_and_rule(
    app_client: TestClient, params: dict[str, Any], targets: dict[str, Any], field: str, rule: str
):
    c = app_client
    body = {"dataset_id": _ids(c)["train"], "test_dataset_id": _ids(c)["test"], "params": params}
    problem = assert_problem(create_job(c, **body, targets=targets), 422, field)
    assert rule in problem["errors"][0]["msg"]


def test_targets_naming_a_metric_record_its_time_to_target(app_client: TestClient):
    c = app_client
    job = _trained(c, params=LOGISTIC, targets={"metric": "f1", "values": [0.5, 0.99]})
    assert job["targets"] == [0.5, 0.99] and job["target_metric"] == "f1"
    metrics = job["metrics"]
    assert metrics["test_f1"] == metrics["test"]["f1"]
    assert set(metrics["time_to_target"]) == {"0.5", "0.99"} and metrics["time_to_target"]["0.5"] is not None
    trace = c.get(f"/v1/jobs/{job['id']}/trace").json()
    assert trace["score_name"] == "f1"
    # The test set's 70 rows are all in the trace's sample: its last point is the model's F1.
    assert trace["points"][-1]["test_score"] == pytest.approx(metrics["test"]["f1"], abs=TOL)
    regression = create_job(
        c,
        dataset_id=_ids(c)["abalone"],
        test_fraction=0.25,
        params={"loss": "squared", "sigma": 1e-3, "n_iter": 3000},
        targets={"metric": "r2", "values": [0.3]},
    )
    job = wait_for(c, regression.json()["id"])
    assert (
        job["metrics"]["test_r2"] == job["metrics"]["test"]["r2"]
        and "0.3" in job["metrics"]["time_to_target"]
    )


def test_metrics_of_a_job_that_trains_from_its_shards_equal_sklearn(tmp_path: Path, data_dir: Path):
    """Data over the worker's memory budget, stored in shards of a few rows: the fit streams and
    the metrics are accumulated over the test set's shards, yet equal sklearn's on /predict's
    answers for the same rows."""
    lines = (data_dir / "heart_scale.svm").read_bytes().splitlines(keepends=True)
    (tmp_path / "train.svm").write_bytes(b"".join(lines[:200]))
    (tmp_path / "test.svm").write_bytes(b"".join(lines[200:]))
    settings = make_settings(tmp_path, workers=1, shard_bytes=1024, worker_memory_bytes=4096)
    with TestClient(create_app(settings)) as c:
        train = upload(c, tmp_path / "train.svm", "train.svm").json()
        test = upload(c, tmp_path / "test.svm", "test.svm", n_features="13").json()
        body = {"dataset_id": train["id"], "test_dataset_id": test["id"], "params": LOGISTIC}
        job = wait_for(c, create_job(c, **body, threshold={"value": 0.4}).json()["id"])
        assert job["status"] == "succeeded", job
        assert "shard_window" in job["metrics"]  # it trained from the shards
        got = job["metrics"]["test"]
        body_bytes = (tmp_path / "test.svm").read_bytes()
        out = c.post(
            f"/v1/models/{job['model_id']}/predict",
            content=body_bytes,
            headers={"content-type": "text/plain"},
        ).json()
    _, y = load_svmlight_file(io.BytesIO(body_bytes))
    p = np.asarray(out["probabilities"])[:, 1]
    pred = np.asarray(out["predictions"])
    assert pred.tolist() == np.where(p > 0.4, 1, -1).tolist()
    assert got["accuracy"] == pytest.approx(skm.accuracy_score(y, pred), abs=TOL)
    assert got["f1"] == pytest.approx(skm.f1_score(y, pred), abs=TOL)
    assert got["log_loss"] == pytest.approx(skm.log_loss(y, p), abs=TOL)
    assert got["roc_auc"] == pytest.approx(skm.roc_auc_score(y, p), abs=TOL)
    assert got["average_precision"] == pytest.approx(skm.average_precision_score(y, p), abs=TOL)


def test_a_cancel_during_the_threshold_fit_stops_the_job_before_its_fit(app_client: TestClient):
    c = app_client
    # Far from done when the cancel comes (tens of seconds of iterations on 160 rows).
    params = {**LOGISTIC, "n_iter": 200_000_000}
    r = create_job(c, dataset_id=_ids(c)["train"], params=params, threshold={"metric": "f1"})
    job_id = r.json()["id"]
    wait_for(c, job_id, lambda j: (j["metrics"] or {}).get("phase") == "choose_threshold")
    assert c.post(f"/v1/jobs/{job_id}/cancel").status_code == 202
    job = wait_for(c, job_id)
    assert job["status"] == "cancelled" and job["model_id"] is None, job
