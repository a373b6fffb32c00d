"""What a model learned, by name, and the warnings for a degenerate one, through /v1/jobs and
/v1/models on real files with the real worker pool: the job's and the model's answers carry the
top weights per unit of the raw columns (one-hot categories as ``column=value``) and
``warnings``; GET /v1/models/{id}/coefficients pages through every weight, and those weights
score raw rows as the model's own /predict does; sigma 1e12 on heart_scale and abalone gets
its warnings; each bad query is a 422 naming its field."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from tests.helpers import assert_problem, create_job, make_settings, upload, wait_for

LOGISTIC = {"solver": "lbfgs", "params": {"loss": "logistic", "sigma": 1e-4, "n_iter": 200}}
CITIES = ["Lyon", "Oslo", "Pune"]


def _shop_csv(classes: list[str], rows: int = 600) -> bytes:
    """A header, numeric columns on very different scales and a text column."""
    rng = np.random.default_rng(5)
    lines = ["age,income,city,visits,bought"]
    for _ in range(rows):
        age, income = rng.normal(40, 12), rng.exponential(3e4)
        city, visits = CITIES[rng.integers(0, 3)], rng.poisson(4)
        signal = (age - 40) / 12 + (income - 3e4) / 3e4 + (city == "Oslo") * 1.2 + rng.normal(0, 0.4)
        label = classes[int(np.digitize(signal, np.linspace(-0.8, 0.8, len(classes) - 1)))]
        lines.append(f"{age:.3f},{income:.2f},{city},{visits},{label}")
    return ("\n".join(lines) + "\n").encode()


def _train(c: TestClient, **body: Any) -> dict[str, Any]:
    r = create_job(c, **body)
    assert r.status_code == 202, r.text
    job = wait_for(c, r.json()["id"])
    assert job["status"] == "succeeded", job
    return job


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Iterator[TestClient]:
    with TestClient(create_app(make_settings(tmp_path_factory.mktemp("coefficients"), workers=1))) as c:
        c.ids = {  # type: ignore[attr-defined]
            "shop": upload(c, _shop_csv(["no", "yes"]), "shop.csv").json()["id"],
            "shop3": upload(c, _shop_csv(["low", "mid", "high"]), "shop3.csv").json()["id"],
            "heart": upload(c, data_dir / "heart_scale.svm", "heart.svm").json()["id"],
            "abalone": upload(c, data_dir / "abalone.svm", "abalone.svm").json()["id"],
        }
        yield c


def _ids(c: TestClient) -> dict[str, int]:
    return c.ids  # type: ignore[attr-defined, no-any-return]


def _all_weights(c: TestClient, model_id: int, **query: Any) -> dict[str, Any]:
    """Every weight of one class, three a page."""
    items: list[dict[str, Any]] = []
    while True:
        r = c.get(f"/v1/models/{model_id}/coefficients", params={"offset": len(items), "limit": 3, **query})
        assert r.status_code == 200, r.text
        page = r.json()
        items += page["items"]
        if not page["items"]:
            return page | {"items": items}


def test_the_answers_name_the_weights_and_they_score_raw_rows_as_the_model_does(client: TestClient):
    job = _train(client, dataset_id=_ids(client)["shop"], test_fraction=0.25, **LOGISTIC)
    assert job["warnings"] == []
    top = job["coefficients"]
    (out,) = top["outputs"]
    assert top["top_k"] == 20 and out["class"] == "yes"
    names = [e["name"] for e in out["positive"] + out["negative"]]
    assert "income" in names and "city=Oslo" in names
    assert out["positive"][0]["name"] in {"age", "income", "city=Oslo"}
    model = client.get(f"/v1/models/{job['model_id']}").json()
    assert model["coefficients"] == top and model["warnings"] == []

    every = _all_weights(client, job["model_id"])
    assert every["total"] == out["nonzero"] == len(every["items"])
    assert every["intercept"] == out["intercept"]
    sizes = [abs(e["model_weight"]) for e in every["items"]]
    assert sizes == sorted(sizes, reverse=True)
    rows = [
        {"age": 31.0, "income": 52000.0, "city": "Oslo", "visits": 2},
        {"age": 66.5, "income": 1200.0, "city": "Pune", "visits": 9},
    ]
    r = client.post(f"/v1/models/{job['model_id']}/predict", json={"instances": rows})
    assert r.status_code == 200, r.text
    for row, score in zip(rows, r.json()["scores"], strict=True):
        mine = every["intercept"] + sum(
            e["weight"] * (row[e["name"]] if e["category"] is None else float(row["city"] == e["category"]))
            for e in every["items"]
        )
        assert mine == pytest.approx(score, rel=1e-9, abs=1e-12)


def test_svmlight_features_are_named_by_their_index_as_written(client: TestClient):
    job = _train(client, dataset_id=_ids(client)["heart"], test_fraction=0.3, **LOGISTIC)
    every = _all_weights(client, job["model_id"])
    # heart_scale's indices are 1-based: column 0 is feature "1".
    assert {(e["column"], e["name"]) for e in every["items"]} == {(j, str(j + 1)) for j in range(13)}


def test_multiclass_weights_are_per_class(client: TestClient):
    job = _train(client, dataset_id=_ids(client)["shop3"], test_fraction=0.25, **LOGISTIC)
    outputs = job["coefficients"]["outputs"]
    assert sorted(o["class"] for o in outputs) == ["high", "low", "mid"]
    model_id = job["model_id"]
    low, high = (
        _all_weights(client, model_id, **{"class": "low"}),
        _all_weights(client, model_id, **{"class": "high"}),
    )
    by_name = {e["name"]: e["weight"] for e in low["items"]}, {e["name"]: e["weight"] for e in high["items"]}
    # Income pushes towards "high" and away from "low".
    assert by_name[0]["income"] < 0 < by_name[1]["income"]
    r = client.get(f"/v1/models/{model_id}/coefficients")
    assert "low" in assert_problem(r, 422, "query.class")["detail"]
    assert_problem(
        client.get(f"/v1/models/{model_id}/coefficients", params={"class": "nope"}), 422, "query.class"
    )


@pytest.mark.parametrize(
    ("query", "field"),
    [({"offset": -1}, "query.offset"), ({"limit": 0}, "query.limit"), ({"limit": 1001}, "query.limit")],
)
def test_a_bad_page_is_a_422_naming_its_field(client: TestClient, query: dict[str, Any], field: str):
    job = _train(client, dataset_id=_ids(client)["heart"], solver="scd", params={"loss": "logistic"})
    assert_problem(client.get(f"/v1/models/{job['model_id']}/coefficients", params=query), 422, field)


def test_a_kernel_model_has_no_coefficients(client: TestClient):
    params = {"loss": "hinge", "kernel": "rbf", "n_iter": 200}
    job = _train(client, dataset_id=_ids(client)["heart"], solver="kernel_pgs", params=params)
    assert job["coefficients"] is None
    assert_problem(client.get(f"/v1/models/{job['model_id']}/coefficients"), 422, "path.model_id")


def test_sigma_1e12_warns_that_every_weight_is_zero_and_the_model_is_the_majority_class(
    client: TestClient,
):
    body = {"solver": "scd", "params": {"loss": "logistic", "sigma": 1e12}, "test_fraction": 0.3}
    job = _train(client, dataset_id=_ids(client)["heart"], **body)
    codes = {w["code"]: w["message"] for w in job["warnings"]}
    assert set(codes) == {"zero_weights", "majority_class"}
    assert codes["zero_weights"].startswith("sigma 1e12 leaves every weight at 0")
    assert 'try sigma: "auto"' in codes["zero_weights"]
    assert job["coefficients"]["outputs"][0]["nonzero"] == 0
    model = client.get(f"/v1/models/{job['model_id']}").json()
    assert model["warnings"] == job["warnings"]


def test_a_regressor_no_better_than_the_mean_is_warned(client: TestClient):
    body = {"solver": "scd", "params": {"loss": "squared", "sigma": 1e12}, "test_fraction": 0.3}
    job = _train(client, dataset_id=_ids(client)["abalone"], **body)
    assert {w["code"] for w in job["warnings"]} == {"zero_weights", "no_better_than_mean"}
    assert job["coefficients"]["outputs"][0]["class"] is None


def test_an_imported_model_has_the_coefficients_of_its_own_arrays_and_refuses_forged_warnings(
    client: TestClient,
):
    job = _train(client, dataset_id=_ids(client)["shop"], test_fraction=0.25, **LOGISTIC)
    doc = client.get(f"/v1/models/{job['model_id']}/export", params={"format": "json"}).json()
    # Derived from the arrays, the coefficients are not exported: the import computes them.
    assert "coefficients" not in doc["model"]["metrics"]
    forged = {"positive": [], "negative": [], "class": "yes", "intercept": 0.0, "nonzero": 0}
    doc["model"]["metrics"]["coefficients"] = {"top_k": 1, "outputs": [forged]}
    r = client.post("/v1/models", json=doc)
    assert r.status_code == 201, r.text
    imported = r.json()
    assert imported["coefficients"] == job["coefficients"] and imported["warnings"] == []
    page = client.get(f"/v1/models/{imported['id']}/coefficients", params={"limit": 1000}).json()
    original = client.get(f"/v1/models/{job['model_id']}/coefficients", params={"limit": 1000}).json()
    assert page == original
    for warnings, field in [
        ("all good", "body.model.metrics.warnings"),
        ([{"code": "pwned", "message": "x"}], "body.model.metrics.warnings.0.code"),
    ]:
        bad = {**doc, "model": {**doc["model"], "metrics": {"warnings": warnings}}}
        assert_problem(client.post("/v1/models", json=bad), 422, field)


def test_a_job_that_streams_its_shards_gets_the_same_warnings(tmp_path: Path, data_dir: Path):
    # heart_scale (44,864 bytes as CSR) over a 40,000-byte budget, in small shards: the fit and
    # the evaluation read them a shard at a time, and so does the majority-class baseline.
    settings = make_settings(tmp_path, worker_memory_bytes=40_000, shard_bytes=4096, workers=1)
    with TestClient(create_app(settings)) as c:
        dataset_id = upload(c, data_dir / "heart_scale.svm").json()["id"]
        body = {"solver": "truncgrad", "params": {"loss": "logistic", "sigma": 1e12}, "test_fraction": 0.3}
        job = _train(c, dataset_id=dataset_id, **body)
    assert job["metrics"]["shard_window"] >= 1
    assert {w["code"] for w in job["warnings"]} == {"zero_weights", "majority_class"}
