"""Row weights through the real app (a real SQLite file and worker pool): a job's
``weight_column`` and ``params.class_weight``, the weighted test score checked against
scikit-learn on the service's own split, and every bad weight refused as a 422 naming its field."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, balanced_accuracy_score

from app.main import create_app
from app.services.datasets.splits import ShardSplit
from tests.helpers import assert_problem, create_job, make_settings, upload, wait_for

RNG = np.random.default_rng(3)
M = 600
X = RNG.normal(size=(M, 3))
CLEAN = np.where(X @ np.array([2.0, -1.0, 0.5]) > 0, "yes", "no")
NOISY = np.arange(M) % 3 == 0  # a third of the rows: flipped labels, weight 0
LABELS = np.where(NOISY, np.where(CLEAN == "yes", "no", "yes"), CLEAN)
WEIGHTS = np.where(NOISY, 0.0, 1.0 + (np.arange(M) % 4))
LBFGS = {"solver": "lbfgs", "params": {"loss": "logistic", "sigma": 1e-3, "fit_intercept": False}}


def _csv(weights: list[str], labels: np.ndarray = LABELS) -> bytes:
    lines = ["a,b,c,w,label"]
    lines += [f"{x[0]:.6f},{x[1]:.6f},{x[2]:.6f},{w},{y}" for x, w, y in zip(X, weights, labels, strict=True)]
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    with TestClient(create_app(make_settings(tmp_path_factory.mktemp("weights")))) as c:
        yield c


@pytest.fixture(scope="module")
def weighted(client: TestClient) -> dict[str, Any]:
    r = upload(client, _csv([f"{w:g}" for w in WEIGHTS]), "weighted.csv")
    assert r.status_code == 201, r.text
    return r.json()


def _train(client: TestClient, **body: Any) -> dict[str, Any]:
    r = create_job(client, **body)
    assert r.status_code == 202, r.text
    job = wait_for(client, r.json()["id"])
    assert job["status"] == "succeeded", job
    return job


def test_weight_column_weighs_the_fit_and_the_test_score_as_scikit_learn(client, weighted):
    body = {"dataset_id": weighted["id"], "test_fraction": 0.25, "split_seed": 1, **LBFGS}
    job = _train(client, weight_column="w", preprocessing={"scaling": "none"}, **body)
    assert job["weight_column"] == "w"
    assert 3 in job["preprocessing"]["ignore"]  # the weights are not a feature
    # The job's seeded split (one shard: the file is small).
    held = ShardSplit([M], 0.25, 1).held_out_mask(0)
    train, test = np.flatnonzero(~held), np.flatnonzero(held)
    features = X  # the columns a, b, c
    reference = LogisticRegression(C=1.0 / (1e-3 * WEIGHTS[train].sum()), fit_intercept=False, tol=1e-10)
    reference.fit(features[train], LABELS[train], sample_weight=WEIGHTS[train])
    expected = accuracy_score(LABELS[test], reference.predict(features[test]), sample_weight=WEIGHTS[test])
    assert job["metrics"]["test_accuracy"] == pytest.approx(expected, abs=0.01)
    assert expected > 0.95  # the weight-0 rows (flipped labels) no longer count

    unweighted = _train(client, preprocessing={"scaling": "none"}, **body)
    assert unweighted["metrics"]["test_accuracy"] < 0.8  # every row counts, flipped ones too
    # The model takes the rows as uploaded, weight column included, and ignores it.
    rows = np.column_stack([X[test[:50]], np.full(50, 123.0)])
    r = client.post(f"/v1/models/{job['model_id']}/predict", json={"instances": rows.tolist()})
    assert r.status_code == 200, r.text
    assert r.json()["predictions"] == reference.predict(features[test[:50]]).tolist()
    # The test metrics weigh the test rows too, as sklearn.metrics does with sample_weight (on
    # the rows as the file wrote them, to 6 decimals).
    every = np.column_stack([np.round(X[test], 6), np.full(len(test), 123.0)])
    r = client.post(f"/v1/models/{job['model_id']}/predict", json={"instances": every.tolist()})
    predicted = np.asarray(r.json()["predictions"])
    metrics = job["metrics"]["test"]
    assert metrics["accuracy"] == pytest.approx(
        accuracy_score(LABELS[test], predicted, sample_weight=WEIGHTS[test]), abs=1e-9
    )
    assert metrics["balanced_accuracy"] == pytest.approx(
        balanced_accuracy_score(LABELS[test], predicted, sample_weight=WEIGHTS[test]), abs=1e-9
    )


def test_balanced_class_weight_trains_and_is_kept_with_the_job(client, weighted):
    job = _train(
        client,
        dataset_id=weighted["id"],
        test_fraction=0.25,
        solver="pgs",
        params={"sigma": 1e-3, "class_weight": "balanced", "random_state": 0},
    )
    assert job["params"]["class_weight"] == "balanced"
    assert job["metrics"]["test_accuracy"] > 0.5
    mapping = _train(
        client, dataset_id=weighted["id"], solver="sgd", params={"sigma": 1e-3, "class_weight": {"yes": 2.5}}
    )
    assert mapping["params"]["class_weight"] == {"yes": 2.5}


@pytest.mark.parametrize(
    ("cells", "rule"),
    [
        (["-1" if i == 5 else "1" for i in range(M)], "negative"),
        (["" if i == 5 else "1" for i in range(M)], "missing"),
        (["0"] * M, "0 in every row"),
    ],
    ids=["negative", "missing", "all-zero"],
)
def test_bad_weight_column_values_are_422(client, cells, rule):
    r = upload(client, _csv(cells), f"bad-{rule}.csv")
    assert r.status_code == 201, r.text
    body = assert_problem(
        create_job(client, dataset_id=r.json()["id"], weight_column="w", **LBFGS), 422, "body.weight_column"
    )
    assert rule in body["detail"]


def test_a_non_finite_weight_is_refused(client):
    """At upload (the parser refuses infinite values) or, if stored, at the job: never a failed job."""
    r = upload(client, _csv(["inf" if i == 5 else "1" for i in range(M)]), "inf.csv")
    if r.status_code == 201:
        body = assert_problem(
            create_job(client, dataset_id=r.json()["id"], weight_column="w", **LBFGS),
            422,
            "body.weight_column",
        )
        assert "not finite" in body["detail"]
    else:
        assert_problem(r, 422)


def test_weight_column_that_is_not_a_column_is_422(client, weighted):
    body = assert_problem(
        create_job(client, dataset_id=weighted["id"], weight_column="weights", **LBFGS),
        422,
        "body.weight_column",
    )
    assert "not a column" in body["detail"]


def test_weight_column_on_svmlight_data_is_422(client):
    ds = upload(client, b"1 1:0.5 2:1\n-1 1:-0.5 2:2\n1 1:1 2:0.1\n-1 1:-1 2:0.3\n", "tiny.svm").json()
    body = assert_problem(
        create_job(client, dataset_id=ds["id"], weight_column="1", **LBFGS), 422, "body.weight_column"
    )
    assert "svmlight" in body["detail"]


def test_sigma_auto_weighs_the_rows_of_its_path(client, weighted):
    # The weight-0 rows have flipped labels: weighted, the path's held-out scores ignore them.
    params = {"loss": "logistic", "sigma": "auto", "fit_intercept": False}
    body = {
        "dataset_id": weighted["id"],
        "solver": "lbfgs",
        "params": params,
        "preprocessing": {"scaling": "none"},
    }
    weighted_job = _train(client, weight_column="w", selection={"folds": 3}, **body)
    plain_job = _train(client, selection={"folds": 3}, **body)
    best = max(p["mean"] for p in weighted_job["selection"]["path"])
    assert best > 0.95  # only the clean rows count
    assert max(p["mean"] for p in plain_job["selection"]["path"]) < 0.8  # the flipped third counts


def test_class_weight_on_a_regression_data_set_is_422(client):
    lines = ["a,b,target"] + [f"{x[0]:.4f},{x[1]:.4f},{x[0] - x[1]:.4f}" for x in X[:100]]
    ds = upload(client, ("\n".join(lines) + "\n").encode(), "reg.csv").json()
    assert ds["task"] == "regression"
    r = create_job(client, dataset_id=ds["id"], solver="pgs", params={"class_weight": "balanced"})
    body = assert_problem(r, 422, "body.params.class_weight")
    assert "classification" in body["detail"]


def test_class_weight_naming_a_label_the_data_lacks_is_422(client, weighted):
    r = create_job(client, dataset_id=weighted["id"], solver="pgs", params={"class_weight": {"maybe": 2.0}})
    body = assert_problem(r, 422, "body.params.class_weight")
    assert "'maybe'" in body["detail"]


@pytest.mark.parametrize("value", [-1.0, "Infinity"], ids=["negative", "infinite"])
def test_negative_or_non_finite_class_weight_is_422(client, weighted, value):
    # Raw JSON: Python's parser reads Infinity, as the service's does.
    params = f'{{"class_weight": {{"yes": {value}}}}}'
    content = f'{{"dataset_id": {weighted["id"]}, "solver": "pgs", "params": {params}}}'
    r = client.post("/v1/jobs", content=content, headers={"content-type": "application/json"})
    body = assert_problem(r, 422, "body.params.class_weight")
    assert "dict of label to float in [0, inf)" in body["detail"]
