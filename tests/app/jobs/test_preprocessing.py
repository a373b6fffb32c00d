"""Preprocessing learned with the model (a job's ``preprocessing``) on real files: raw magic04
with default preprocessing against scikit-learn's own pipeline on the same split, text columns,
missing values and an id column, the model's metadata, and the requests refused."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from app.core.storage.local import LocalDirStore
from app.main import create_app
from app.services.datasets.parse_base import ParseOptions
from app.services.datasets.parsing import parse_upload
from app.services.datasets.shards import ShardWriter, open_dataset
from app.services.datasets.splits import split_indices
from app.services.jobs.preprocessing import raw_matrix
from app.services.jobs.rows import RowSelection, codes_of
from app.services.solvers.estimators import EstimatorSpec
from solver import make_preprocessor
from tests.helpers import (
    JOB_TIMEOUT_S,
    assert_problem,
    create_job,
    make_settings,
    poll,
    upload,
    wait_for,
)


def _magic(data_dir: Path) -> tuple[np.ndarray, np.ndarray]:
    raw = np.loadtxt(data_dir / "magic04.csv", delimiter=",", dtype=str)
    return raw[:, :-1].astype(np.float64), raw[:, -1]


def _mixed_csv(data_dir: Path, rows: int = 3000) -> bytes:
    """magic04 with a header, an id column, a text column (fAlpha in bands) and empty cells."""
    X, y = _magic(data_dir)
    names = [
        "fLength",
        "fWidth",
        "fSize",
        "fConc",
        "fConc1",
        "fAsym",
        "fM3Long",
        "fM3Trans",
        "fAlpha",
        "fDist",
    ]
    lines = ["id," + ",".join(names[:8]) + ",alpha_band,fDist,class"]
    # magic04 lists all g rows before the h rows: a seeded sample has both.
    for i in np.random.default_rng(0).permutation(len(y))[:rows]:
        cells = [f"{v:g}" for v in X[i, :8]]
        if i % 7 == 3:
            cells[i % 8] = ""  # a missing value
        band = "low" if X[i, 8] < 20 else "mid" if X[i, 8] < 50 else "high"
        lines.append(",".join([f"row{i}", *cells, band, f"{X[i, 9]:g}", y[i]]))
    return ("\n".join(lines) + "\n").encode()


def _train(c: TestClient, **body: Any) -> dict[str, Any]:
    r = create_job(c, **body)
    assert r.status_code == 202, r.text
    job = wait_for(c, r.json()["id"])
    assert job["status"] == "succeeded", job
    return job


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    # Small shards: a CSV's text columns are stored shard by shard, and training, splits and
    # batch predictions must put each row's text beside it.
    settings = make_settings(tmp_path_factory.mktemp("prep"), shard_bytes=32 * 1024)
    with TestClient(create_app(settings)) as c:
        yield c


LOGISTIC = {"solver": "lbfgs", "params": {"loss": "logistic", "sigma": 1e-4, "n_iter": 200}}


def test_raw_magic04_with_default_preprocessing_matches_scikit_learns_pipeline(
    client: TestClient, data_dir: Path
):
    ds = upload(client, data_dir / "magic04.csv", "magic04.csv").json()
    job = _train(client, dataset_id=ds["id"], test_fraction=0.25, split_seed=3, **LOGISTIC)
    assert job["preprocessing"] == {
        "scaling": "standard",
        "impute": True,
        "categorical": [],
        "ignore": [],
        "sparse": False,
    }
    X, y = _magic(data_dir)
    # A split of the same size and seed; the service draws its own shard by shard (small shards
    # here), so the reference is compared within a point, not exactly.
    train, test = split_indices(len(y), 0.25, 3)
    reference = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    expected = reference.fit(X[train], y[train]).score(X[test], y[test])
    assert job["metrics"]["test_accuracy"] >= expected - 0.01, (job["metrics"], expected)

    model = client.get(f"/v1/models/{job['model_id']}").json()
    assert model["preprocessing"]["scaling"] == "standard"
    # Raw rows in, the preprocessing applied inside the model.
    r = client.post(f"/v1/models/{job['model_id']}/predict", json={"instances": X[test[:200]].tolist()})
    assert r.status_code == 200, r.text
    agree = np.mean(np.asarray(r.json()["predictions"]) == y[test[:200]])
    assert agree >= expected - 0.05


def test_text_columns_missing_values_and_an_ignored_id_column(client: TestClient, data_dir: Path):
    r = upload(client, _mixed_csv(data_dir), "mixed.csv")
    assert r.status_code == 201, r.text
    ds = r.json()
    assert ds["feature_names"][0] == "id" and ds["label_name"] == "class"
    assert ds["text_columns"] == [0, 9] and ds["n_missing"] > 300
    # The id column is text too: without ignoring it, every row would be a category of its own.
    job = _train(
        client, dataset_id=ds["id"], test_fraction=0.25, preprocessing={"ignore": ["id"]}, **LOGISTIC
    )
    assert job["preprocessing"]["ignore"] == [0] and job["preprocessing"]["categorical"] == [9]
    assert job["metrics"]["test_accuracy"] > 0.75, job["metrics"]
    model_id = job["model_id"]
    # Density is over the model's own weights: the one-hot indicators are more than the raw columns.
    model = client.get(f"/v1/models/{model_id}").json()
    assert model["n_weights"] > model["n_features"] - 1 >= 1
    assert 0 < model["nnz_weights"] <= model["n_weights"]
    row = {
        "id": "new",
        "fLength": 28.8,
        "fWidth": 16.0,
        "fSize": 2.64,
        "fConc": 0.39,
        "fConc1": 0.2,
        "fAsym": 27.7,
        "fM3Long": 22.0,
        "fM3Trans": -8.2,
        "alpha_band": "low",
        "fDist": 81.9,
    }
    missing = {k: v for k, v in row.items() if k != "fSize"}  # absent: imputed
    unseen = row | {"alpha_band": "never seen"}  # an unseen category: all its indicators zero
    r = client.post(f"/v1/models/{model_id}/predict", json={"instances": [row, missing, unseen]})
    assert r.status_code == 200, r.text
    assert set(r.json()["predictions"]) <= {"g", "h"}
    listed = [row[n] for n in ds["feature_names"]]
    r2 = client.post(f"/v1/models/{model_id}/predict", json={"instances": [listed]})
    assert r2.json()["scores"][0] == pytest.approx(r.json()["scores"][0], abs=1e-12)


def test_sparse_data_get_max_abs_scaling(client: TestClient, data_dir: Path):
    ds = upload(client, data_dir / "heart_scale.svm", "heart.svm").json()
    job = _train(client, dataset_id=ds["id"], test_fraction=0.3, **LOGISTIC)
    assert job["preprocessing"]["scaling"] == "maxabs" and job["preprocessing"]["sparse"]
    r = client.post(
        f"/v1/models/{job['model_id']}/predict", content=b"1:0.5 3:1", headers={"content-type": "text/plain"}
    )
    assert r.status_code == 200, r.text


def test_a_missing_text_feature_is_null_absent_or_an_na_cell(client: TestClient, data_dir: Path):
    """A text feature left out, null, "" or an NA cell is the missing category the data set
    stored for an empty cell; NA in a numeric cell is imputed; a row may carry its label."""
    ds = upload(client, _mixed_csv(data_dir, rows=300), "missing-text.csv").json()
    job = _train(client, dataset_id=ds["id"], preprocessing={"ignore": ["id"]}, **LOGISTIC)
    url = f"/v1/models/{job['model_id']}/predict"
    values = ["new", 28.8, 16.0, 2.64, 0.39, 0.2, 27.7, 22.0, -8.2, "", 81.9]
    row = dict(zip(ds["feature_names"], values, strict=True))
    variants = [
        row,
        row | {"alpha_band": None},
        {k: v for k, v in row.items() if k != "alpha_band"},
        row | {"class": "g"},
    ]
    r = client.post(url, json={"instances": variants})
    assert r.status_code == 200, r.text
    scores = r.json()["scores"]
    assert scores == pytest.approx([scores[0]] * len(variants), abs=1e-12)

    header = ",".join(ds["feature_names"])
    cells = "new,28.8,16,{size},0.39,0.2,27.7,22,-8.2,{band},81.9"
    empty = cells.format(size="", band="")
    body = "\n".join([header, empty, cells.format(size="NA", band="NA"), cells.format(size="NaN", band="")])
    by_csv = client.post(url, content=body.encode(), headers={"content-type": "text/csv"})
    assert by_csv.status_code == 200, by_csv.text
    imputed = client.post(url, json={"instances": [row | {"fSize": None}]}).json()["scores"][0]
    assert by_csv.json()["scores"] == pytest.approx([imputed] * 3, abs=1e-12)


@pytest.mark.parametrize(
    ("preprocessing", "field", "words"),
    [
        ({"ignore": ["nope"]}, "body.preprocessing.ignore.0", "no column 'nope'"),
        ({"ignore": [99]}, "body.preprocessing.ignore.0", "outside"),
        ({"impute": False}, "body.preprocessing.impute", "missing values"),
        (None, "body.preprocessing", "text columns or missing values"),
        ({"scaling": "minmax"}, "body.preprocessing.scaling", ""),
        ({"ignore": list(range(11))}, "body.preprocessing.ignore", "leaves none"),
    ],
)
def test_preprocessing_that_does_not_fit_the_data_is_a_422(
    client: TestClient, data_dir: Path, preprocessing: Any, field: str, words: str
):
    ds = upload(client, _mixed_csv(data_dir, rows=200), "small.csv").json()
    r = create_job(client, dataset_id=ds["id"], preprocessing=preprocessing, **LOGISTIC)
    body = assert_problem(r, 422, field)
    assert words in body["detail"], body


@pytest.mark.parametrize(
    ("row", "words"),
    [
        ({"fLength": "x"}, "must be a finite number"),
        ({"alpha_band": 3}, "must be a string"),
        ({"colour": 1}, "unknown feature 'colour'"),
    ],
)
def test_bad_named_rows_are_a_422_naming_the_feature(
    client: TestClient, data_dir: Path, row: dict[str, Any], words: str
):
    ds = upload(client, _mixed_csv(data_dir, rows=300), "rows.csv").json()
    job = _train(client, dataset_id=ds["id"], preprocessing={"ignore": ["id"]}, **LOGISTIC)
    r = client.post(f"/v1/models/{job['model_id']}/predict", json={"instances": [row]})
    body = assert_problem(r, 422)
    assert words in body["detail"], body


# -- names: feature names in, class names out, CSV both ways -------------------------------------


def test_csv_in_with_a_header_and_csv_out_when_asked(client: TestClient, data_dir: Path):
    csv_file = _mixed_csv(data_dir, rows=400)
    ds = upload(client, csv_file, "names.csv").json()
    job = _train(client, dataset_id=ds["id"], preprocessing={"ignore": ["id"]}, **LOGISTIC)
    url = f"/v1/models/{job['model_id']}/predict"
    # The training file itself, label column included (left out), columns in its own order.
    lines = csv_file.decode().splitlines()[:6]
    body = "\n".join(lines).encode()
    as_json = client.post(url, content=body, headers={"content-type": "text/csv"})
    assert as_json.status_code == 200, as_json.text
    as_csv = client.post(url, content=body, headers={"content-type": "text/csv", "accept": "text/csv"})
    assert as_csv.status_code == 200 and as_csv.headers["content-type"].startswith("text/csv")
    table = [row.split(",") for row in as_csv.text.splitlines()]
    assert table[0] == ["prediction", "score", "probability_g", "probability_h"]
    assert [r[0] for r in table[1:]] == as_json.json()["predictions"]
    assert [float(r[1]) for r in table[1:]] == pytest.approx(as_json.json()["scores"])
    # Columns reordered: the same answer (rows are keyed by the header, not by position).
    header = lines[0].split(",")
    order = list(reversed(range(len(header))))
    shuffled = "\n".join(",".join(line.split(",")[k] for k in order) for line in lines)
    again = client.post(url, content=shuffled.encode(), headers={"content-type": "text/csv"})
    assert again.json()["scores"] == pytest.approx(as_json.json()["scores"])
    bad = client.post(url, content=b"fLength,colour\n1,red\n", headers={"content-type": "text/csv"})
    assert "unknown column(s) 'colour'" in assert_problem(bad, 422, "body.header")["detail"]


def test_a_model_reads_a_csv_with_its_training_file_s_missing_markers(
    client: TestClient, data_dir: Path, tmp_path: Path
):
    """A data set uploaded with na_values="-999,?" (a sentinel and a text marker): its model
    reads a CSV sent to /predict with the same markers, also once exported and imported
    elsewhere, as the upload read the training file."""
    text = _mixed_csv(data_dir, rows=400).decode().replace(",,", ",-999,").replace(",low,", ",?,", 40)
    ds = upload(client, text.encode(), "sentinels.csv", na_values="-999,?").json()
    assert ds["na_values"] == ["-999", "?"] and ds["n_missing"] > 0
    job = _train(client, dataset_id=ds["id"], preprocessing={"ignore": ["id"]}, **LOGISTIC)
    url = f"/v1/models/{job['model_id']}/predict"
    header = ",".join(ds["feature_names"])
    cells = "new,28.8,16,{size},0.39,0.2,27.7,22,-8.2,{band},81.9"
    marked = "\n".join([header, cells.format(size="-999", band="?")])
    empty = "\n".join([header, cells.format(size="", band="")])
    by_marker = client.post(url, content=marked.encode(), headers={"content-type": "text/csv"})
    by_empty = client.post(url, content=empty.encode(), headers={"content-type": "text/csv"})
    assert by_marker.status_code == by_empty.status_code == 200, by_marker.text
    assert by_marker.json()["scores"] == pytest.approx(by_empty.json()["scores"], abs=1e-12)
    # A value the upload read as a number would have moved the score a long way.
    literal = "\n".join([header, cells.format(size="-998", band="mid")])
    moved = client.post(url, content=literal.encode(), headers={"content-type": "text/csv"}).json()
    assert moved["scores"] != pytest.approx(by_marker.json()["scores"], abs=1e-6)

    exported = client.get(f"/v1/models/{job['model_id']}/export", params={"format": "json"})
    with TestClient(create_app(make_settings(tmp_path))) as other:
        imported = other.post(
            "/v1/models", content=exported.content, headers={"content-type": "application/json"}
        )
        assert imported.status_code == 201, imported.text
        again = other.post(
            f"/v1/models/{imported.json()['id']}/predict",
            content=marked.encode(),
            headers={"content-type": "text/csv"},
        )
    assert again.json()["scores"] == pytest.approx(by_marker.json()["scores"], abs=1e-12)


def test_predictions_are_the_labels_of_the_file_not_class_codes(client: TestClient, data_dir: Path):
    # abalone's ages 1..29 as 28 classes: a prediction is an age, never a 0-based code.
    ds = upload(client, data_dir / "abalone.svm", "abalone.svm", task="classification").json()
    assert ds["task"] == "multiclass" and ds["classes"][0] == 1 and 29 in ds["classes"]
    job = _train(client, dataset_id=ds["id"], **LOGISTIC)
    r = client.post(
        f"/v1/models/{job['model_id']}/predict",
        content=b"1:0.5 2:0.4 3:0.1\n1:0.7 2:0.55 3:0.18 4:1.1 5:0.5 6:0.2 7:0.3",
        headers={"content-type": "text/plain", "accept": "text/csv"},
    )
    assert r.status_code == 200, r.text
    table = [row.split(",") for row in r.text.splitlines()]
    assert table[0][:3] == ["prediction", "score_1", "score_2"]
    assert all(int(row[0]) in ds["classes"] for row in table[1:])


def test_the_openapi_document_shows_csv_in_and_out(client: TestClient):
    op = client.get("/openapi.json").json()["paths"]["/v1/models/{model_id}/predict"]["post"]
    assert {"application/json", "text/csv", "text/plain"} <= set(op["requestBody"]["content"])
    assert {"application/json", "text/csv"} <= set(op["responses"]["200"]["content"])


def test_a_batch_prediction_of_a_data_set_with_text_columns_equals_predict(
    client: TestClient, data_dir: Path
):
    """A stored data set's text columns reach the model's one-hot encoder in a batch too."""
    ds = upload(client, _mixed_csv(data_dir, rows=500), "mixed-batch.csv").json()
    job = _train(client, dataset_id=ds["id"], preprocessing={"ignore": ["id"]}, **LOGISTIC)
    model_id = job["model_id"]
    r = client.post(f"/v1/models/{model_id}/predictions", json={"dataset_id": ds["id"]})
    assert r.status_code == 202, r.text
    path = r.headers["location"]
    done = poll(client, path, lambda b: b["status"] in ("succeeded", "failed", "cancelled"), JOB_TIMEOUT_S)
    assert done["status"] == "succeeded", done
    batch = np.load(io.BytesIO(client.get(f"{path}/result?format=npy&output=scores").content))
    csv_rows = _mixed_csv(data_dir, rows=500).decode().splitlines()
    header = csv_rows[0].split(",")[:-1]
    rows = [dict(zip(header, line.split(",")[:-1], strict=True)) for line in csv_rows[1:]]
    instances = [
        {k: (v if k in ("id", "alpha_band") else (float(v) if v else None)) for k, v in row.items()}
        for row in rows
    ]
    direct = client.post(f"/v1/models/{model_id}/predict", json={"instances": instances})
    assert direct.status_code == 200, direct.text
    np.testing.assert_allclose(batch, direct.json()["scores"], rtol=1e-9, atol=1e-12)


def test_a_job_with_a_test_set_trains_the_model_scikit_learns_fitted_preprocessing_gives(
    client: TestClient, data_dir: Path, tmp_path: Path
):
    # The job builds its preprocessing from the statistics stored with the data set; the model
    # must be the one trained on rows preprocessed by scikit-learn's fit on those rows.
    content = _mixed_csv(data_dir, rows=1500)
    train = upload(client, content, "train.csv").json()
    test = upload(client, _mixed_csv(data_dir, rows=400), "test.csv").json()
    job = _train(
        client,
        dataset_id=train["id"],
        test_dataset_id=test["id"],
        preprocessing={"ignore": ["id"]},
        **LOGISTIC,
    )
    (tmp_path / "train.csv").write_bytes(content)
    store = LocalDirStore(tmp_path / "store")
    writer = ShardWriter(store, "datasets/t", shard_bytes=2**20, max_bytes=2**40, over_limit=OverflowError)
    parsed = parse_upload(tmp_path / "train.csv", ParseOptions(filename="train.csv"), writer)
    writer.finish(parsed.n_features)
    rows = RowSelection(open_dataset(store, "datasets/t"), parsed.n_features)
    X, y = rows.in_memory()
    prep = job["preprocessing"]
    reference = make_preprocessor(parsed.n_features, **prep)
    X_ref = reference.fit_transform(raw_matrix(X, rows.text(), train["text_columns"], prep))
    estimator = EstimatorSpec(job["solver"], job["task"], job["params"]).build()
    estimator.fit(X_ref, codes_of(np.array(["g", "h"]), y))
    first = [dict(zip(train["feature_names"], r, strict=True)) for r in _first_rows(content, 20)]
    r = client.post(f"/v1/models/{job['model_id']}/predict", json={"instances": first})
    assert r.status_code == 200, r.text
    expected = estimator.decision_function(X_ref[:20])
    np.testing.assert_allclose(r.json()["scores"], expected, rtol=1e-6, atol=1e-8)


def _first_rows(content: bytes, n: int) -> list[list[Any]]:
    """The first ``n`` data rows of a CSV as prediction rows: numbers, text, null when empty."""
    out = []
    for line in content.decode().splitlines()[1 : n + 1]:
        cells = line.split(",")[:-1]
        out.append([None if c == "" else c if k in (0, 9) else float(c) for k, c in enumerate(cells)])
    return out
