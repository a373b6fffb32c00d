"""Data sets without labels (``labelled=false``): new rows to predict in a batch. The upload of a
CSV (also one too wide for Arrow's reader), Parquet or svmlight file without labels, parsed like
any other (feature names, text columns, column statistics); the options that contradict it;
every request that needs labels refusing it with a 422 that names the field (a job's training
and test set, a study, a warm start, a task change); a batch prediction over it equal to
/predict on the same rows, with no metrics and the reason; a file with the model's columns in
another order refused by name."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from fastapi.testclient import TestClient

from app.core.config import Settings
from app.main import create_app
from app.services.datasets.csv_format import WIDE_COLUMNS
from tests.helpers import assert_problem, create_job, make_settings, parse_rows, poll, upload, wait_for

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
LABEL = "credit_risk"
PARAMS = {"loss": "logistic", "sigma": 1e-3, "n_iter": 2000, "random_state": 0}


def _without_label(order: list[str] | None = None) -> bytes:
    """examples/credit.csv without its label column (its columns in ``order`` when given), as
    an R export of new rows would come."""
    rows = list(csv.DictReader(io.StringIO((EXAMPLES / "credit.csv").read_text())))
    names = order or [n for n in rows[0] if n != LABEL]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(names)
    writer.writerows([row[n] for n in names] for row in rows)
    return out.getvalue().encode()


@pytest.fixture(scope="module")
def served_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return make_settings(tmp_path_factory.mktemp("unlabelled"))


@pytest.fixture(scope="module")
def served(served_settings: Settings) -> Iterator[dict[str, Any]]:
    """The labelled credit data set, a model trained on it, and the same rows without labels."""
    with TestClient(create_app(served_settings)) as c:
        r = upload(c, EXAMPLES / "credit.csv", "credit.csv", label_column=LABEL)
        assert r.status_code == 201, r.text
        labelled = r.json()
        job = wait_for(c, create_job(c, dataset_id=labelled["id"], params=PARAMS).json()["id"])
        assert job["status"] == "succeeded", job
        r = upload(c, _without_label(), "new-rows.csv", labelled="false")
        assert r.status_code == 201, r.text
        yield {"client": c, "labelled": labelled, "model": job["model_id"], "unlabelled": r.json()}


def test_a_csv_without_labels_is_read_like_any_other(served: dict[str, Any]):
    c, labelled, ds = served["client"], served["labelled"], served["unlabelled"]
    assert ds["labelled"] is False and ds["task"] is None and ds["classes"] is None
    assert ds["label_name"] is None
    assert "no labels" in ds["task_note"] and "labelled=false" in ds["warnings"][0]
    same = ("feature_names", "text_columns", "n_missing", "n_samples", "n_features", "nnz")
    assert {k: ds[k] for k in same} == {k: labelled[k] for k in same}
    assert labelled["labelled"] is True and labelled["warnings"] == []
    # The same statistics per column: the shard writer never looked at a label.
    columns = [c.get(f"/v1/datasets/{d['id']}/columns").json()["items"] for d in (ds, labelled)]
    assert columns[0] == columns[1] and len(columns[0]) == 7
    assert c.get(f"/v1/datasets/{ds['id']}").json()["labelled"] is False


def test_parquet_and_svmlight_files_without_labels(client: TestClient):
    table = pa.table({"x": [1.0, None, 3.0], "colour": ["red", "blue", None]})
    sink = io.BytesIO()
    pq.write_table(table, sink)
    r = upload(client, sink.getvalue(), "rows.parquet", labelled="false")
    assert r.status_code == 201, r.text
    got = r.json()
    assert (got["labelled"], got["feature_names"], got["text_columns"]) == (False, ["x", "colour"], [1])
    assert got["n_missing"] == 1
    # An svmlight line starts with a label, which /predict ignores: so does this upload.
    r = upload(client, b"1 1:0.5 3:2\n-1 2:1\n", "rows.svm", labelled="false")
    assert r.status_code == 201, r.text
    got = r.json()
    assert (got["labelled"], got["task"], got["n_samples"], got["n_features"]) == (False, None, 2, 3)
    # A single column is a data set without labels (with labels it would be only a label).
    assert upload(client, b"x\n1\n2\n", "one.csv", labelled="false").json()["n_features"] == 1


def test_options_about_labels_contradict_labelled_false(client: TestClient):
    body = _without_label()
    assert_problem(
        upload(client, body, "a.csv", labelled="false", label_column="age"), 422, "body.label_column"
    )
    assert_problem(upload(client, body, "a.csv", labelled="false", task="regression"), 422, "body.task")
    assert_problem(upload(client, body, "a.csv", labelled="maybe"), 422, "body.labelled")
    assert client.get("/v1/datasets").json()["items"] == []


def test_requests_that_need_labels_refuse_it(served: dict[str, Any]):
    c, labelled, unlabelled = served["client"], served["labelled"]["id"], served["unlabelled"]["id"]
    train = create_job(c, dataset_id=unlabelled, params=PARAMS)
    assert "has no labels" in assert_problem(train, 422, "body.dataset_id")["detail"]
    test = create_job(c, dataset_id=labelled, test_dataset_id=unlabelled, params=PARAMS)
    assert_problem(test, 422, "body.test_dataset_id")
    warm = create_job(c, dataset_id=unlabelled, params=PARAMS, init_model=served["model"])
    assert_problem(warm, 422, "body.dataset_id")
    study = {
        "dataset_id": unlabelled,
        "test_fraction": 0.25,
        "runs": [{"solver": "pgs", "params": PARAMS}],
        "sizes": [50],
        "targets": [0.7],
    }
    assert_problem(c.post("/v1/studies", json=study), 422, "body.dataset_id")
    patch = c.patch(f"/v1/datasets/{unlabelled}", json={"task": "classification"})
    assert_problem(patch, 422, "body.task")
    # Its name and tags change as any data set's do.
    assert c.patch(f"/v1/datasets/{unlabelled}", json={"tags": ["new"]}).json()["tags"] == ["new"]


def _batch(c: TestClient, model: int, dataset: int) -> tuple[dict[str, Any], str]:
    r = c.post(f"/v1/models/{model}/predictions", json={"dataset_id": dataset})
    assert r.status_code == 202, r.text
    path = r.headers["location"]
    return poll(c, path, lambda b: b["status"] in ("succeeded", "failed", "cancelled")), path


def test_a_batch_over_rows_without_labels_equals_predict_and_has_no_metrics(served: dict[str, Any]):
    c, model = served["client"], served["model"]
    done, path = _batch(c, model, served["unlabelled"]["id"])
    assert done["status"] == "succeeded", done
    assert done["metrics"] is None and "no labels" in done["metrics_note"]
    # /predict on the same file, columns matched by name.
    ref = c.post(
        f"/v1/models/{model}/predict", content=_without_label(), headers={"content-type": "text/csv"}
    ).json()
    for output in ("predictions", "scores", "probabilities"):
        got = np.load(io.BytesIO(c.get(f"{path}/result?format=npy&output={output}").content))
        np.testing.assert_array_equal(got, ref[output])
    assert set(ref["predictions"]) == {"bad", "good"}
    # The labelled data set's batch has its metrics, and no note.
    done, _ = _batch(c, model, served["labelled"]["id"])
    assert done["metrics"]["accuracy"] > 0.5 and done["metrics_note"] is None


def test_a_file_with_its_columns_in_another_order_is_refused_by_name(served: dict[str, Any]):
    """A stored data set is predicted column by column: a file whose header names the model's
    features in another order would predict other classes, so the batch says which."""
    c = served["client"]
    names = served["labelled"]["feature_names"]
    r = upload(c, _without_label(list(reversed(names))), "reordered.csv", labelled="false")
    assert r.status_code == 201, r.text
    refused = c.post(f"/v1/models/{served['model']}/predictions", json={"dataset_id": r.json()["id"]})
    detail = assert_problem(refused, 422, "body.dataset_id")["detail"]
    assert "in the model's order" in detail


def _wide_csv(n_cols: int, label_at: int | None) -> bytes:
    """Three rows of ``n_cols`` feature columns (column 5 text, NA cells), with a label column
    inserted at ``label_at``."""
    rows = []
    for r in range(3):
        cells = ["NA" if (r + c) % 11 == 0 else f"{r * n_cols + c}" for c in range(n_cols)]
        cells[5] = ["red", "blue", "NA"][r]
        if label_at is not None:
            cells.insert(label_at, "ab"[r % 2])
        rows.append(",".join(cells))
    names = [f"f{c}" for c in range(n_cols)]
    if label_at is not None:
        names.insert(label_at, "label")
    return ("\n".join([",".join(names), *rows]) + "\n").encode()


def test_a_csv_too_wide_for_arrow_reads_the_same_rows_without_its_label(tmp_path: Path):
    """Past WIDE_COLUMNS columns a CSV is read row by row: the label column, wherever it is,
    or none, leaves the same features."""
    n_cols = WIDE_COLUMNS + 10
    labelled = tmp_path / "labelled.csv"
    labelled.write_bytes(_wide_csv(n_cols, label_at=7))
    unlabelled = tmp_path / "unlabelled.csv"
    unlabelled.write_bytes(_wide_csv(n_cols, label_at=None))
    with_label = parse_rows(labelled, tmp_path / "a", label_column="label", filename="labelled.csv")
    without = parse_rows(unlabelled, tmp_path / "b", labelled=False, filename="unlabelled.csv")
    assert with_label.y.tolist() == ["a", "b", "a"] and not without.labelled
    assert without.columns.feature_names == with_label.columns.feature_names
    assert without.columns.text_columns == with_label.columns.text_columns == [5]
    assert without.columns.n_missing == with_label.columns.n_missing > 0
    np.testing.assert_array_equal(without.X.toarray(), with_label.X.toarray())
