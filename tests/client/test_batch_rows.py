"""Batch predictions of new rows without labels, through the client and ``pgs``, against a real
service: a DataFrame of string, categorical, nullable and numeric columns with NA cells and no
label column (its columns in another order), rows keyed by feature name and a NumPy array,
each batch-predicted equal to ``models.predict`` on the same rows, leaving nothing behind;
``wait=False`` keeping the batch and its data set; ``pgs batches create MODEL FILE`` printing
what ``pgs predict`` prints, and the file inputs it refuses with a one-line error."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from pgs_client import Client, Dataset, Job

from tests.client.conftest import run_pgs
from tests.cluster.harness import ApiServer

# Against a real service (conftest.py): out of make test-fast.
pytestmark = pytest.mark.system

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
LABEL = "credit_risk"
REF = "credit-batch@prod"


@pytest.fixture(scope="module")
def credit(service: ApiServer) -> Iterator[str]:
    """examples/credit.csv uploaded as a DataFrame, a logistic model trained on it, named and
    aliased: REF."""
    with Client(service.base) as c:
        frame = pd.read_csv(EXAMPLES / "credit.csv")
        ds = c.datasets.upload(frame, name="credit batch", label_column=LABEL)
        job = c.jobs.wait(c.jobs.create(ds, params={"loss": "logistic", "sigma": 1e-3, "random_state": 0}))
        c.models.update(job.model_id, name="credit-batch")
        c.aliases.set(REF, job.model_id)
        yield REF


def _new_rows() -> pd.DataFrame:
    """credit.csv's rows as a user holds new ones: no label column, the columns in another
    order, a categorical, a string and a nullable integer column, NA cells."""
    frame = pd.read_csv(EXAMPLES / "credit.csv").drop(columns=[LABEL])
    frame = frame[list(reversed(frame.columns))]
    return frame.astype({"housing": "category", "purpose": "string", "amount": "Int64"})


def _assert_same(got: Any, want: Any) -> None:
    assert got.predictions.tolist() == want.predictions.tolist()
    np.testing.assert_allclose(got.scores, want.scores, rtol=1e-12)
    np.testing.assert_allclose(got.probabilities, want.probabilities, rtol=1e-12)


def _ids(c: Client) -> tuple[set[int], set[int]]:
    return {d.id for d in c.datasets.list()}, {b.id for b in c.models.batches(REF)}


def test_a_dataframe_without_labels_is_batch_predicted_as_predict_does(client: Client, credit: str):
    frame = _new_rows()
    assert frame["amount"].isna().any() and frame["purpose"].isna().any()
    before = _ids(client)
    got = client.models.predict_batch(credit, frame)
    assert set(got.predictions.tolist()) == {"bad", "good"} and len(got.predictions) == len(frame)
    _assert_same(got, client.models.predict(credit, frame))
    # The data set it uploaded and its batch prediction were deleted once read.
    assert _ids(client) == before


def test_rows_keyed_by_name_and_a_numpy_array(
    client: Client, credit: str, heart: Path, heart_job: tuple[Dataset, Job]
):
    rows = _new_rows().astype(object).where(_new_rows().notna(), None).to_dict("records")
    _assert_same(client.models.predict_batch(credit, rows), client.models.predict(credit, rows))
    # Numbers only: uploaded as svmlight lines, whose leading label the service does not keep.
    X = np.zeros((40, 13))
    for i, line in enumerate(heart.read_text().splitlines()[:40]):
        for pair in line.split()[1:]:
            j, v = pair.split(":")
            X[i, int(j) - 1] = float(v)
    model = heart_job[1].model_id
    _assert_same(client.models.predict_batch(model, X), client.models.predict(model, X))


def test_without_waiting_the_batch_and_its_data_set_stay(client: Client, credit: str):
    batch = client.models.predict_batch(credit, _new_rows(), wait=False, name="new credit rows")
    done = client.models.wait_batch(credit, batch)
    assert done.status == "succeeded", done
    assert done.metrics is None and "no labels" in (done.metrics_note or "")
    dataset = client.datasets.get(done.dataset_id)
    assert (dataset.name, dataset.labelled, dataset.task) == ("new credit rows", False, None)
    client.models.delete_batch(credit, done)
    client.datasets.delete(dataset)


@pytest.fixture(scope="module")
def rows_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """credit.csv without its label column, as R's write.csv writes it (quoted, NA cells)."""
    lines = (EXAMPLES / "credit.csv").read_text().splitlines()
    path = tmp_path_factory.mktemp("rows") / "new-rows.csv"
    path.write_text("\n".join(line.rsplit(",", 1)[0] for line in lines) + "\n")
    return path


def test_pgs_batches_create_with_a_file_prints_what_pgs_predict_prints(
    service: ApiServer, credit: str, rows_csv: Path, tmp_path: Path
):
    by_predict = run_pgs("predict", credit, str(rows_csv), url=service.base)
    assert by_predict.returncode == 0, by_predict.stderr
    by_batch = run_pgs("batches", "create", credit, str(rows_csv), url=service.base)
    assert by_batch.returncode == 0, by_batch.stderr
    predicted, batched = (list(csv.DictReader(r.stdout.splitlines())) for r in (by_predict, by_batch))
    assert len(batched) == 200 and batched[0].keys() == predicted[0].keys()
    assert [r["prediction"] for r in batched] == [r["prediction"] for r in predicted]
    np.testing.assert_allclose([float(r["score"]) for r in batched], [float(r["score"]) for r in predicted])

    out = tmp_path / "predictions.csv"
    kept = run_pgs("batches", "create", credit, str(rows_csv), "-o", str(out), "--keep", url=service.base)
    assert kept.returncode == 0, kept.stderr
    assert out.read_text() == by_batch.stdout
    listed = run_pgs("batches", "ls", credit, "--json", url=service.base)
    newest = json.loads(listed.stdout)[0]
    assert newest["status"] == "succeeded" and "no labels" in newest["metrics_note"]


def test_pgs_uploads_rows_without_labels_and_refuses_what_does_not_fit(
    service: ApiServer, credit: str, rows_csv: Path, tmp_path: Path
):
    done = run_pgs("datasets", "upload", str(rows_csv), "--unlabelled", "--json", url=service.base)
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert (shown["labelled"], shown["task"], shown["label_name"]) == (False, None, None)
    by_id = run_pgs("batches", "create", credit, str(shown["id"]), "--wait", "--json", url=service.base)
    assert by_id.returncode == 0, by_id.stderr
    assert json.loads(by_id.stdout)["metrics"] is None

    missing = run_pgs("batches", "create", credit, str(tmp_path / "nope.csv"), url=service.base)
    assert missing.returncode == 2 and "neither a data set id nor a file" in missing.stderr
    # The columns in another order: a stored data set is predicted by position, so refused.
    rows = list(csv.reader(rows_csv.read_text().splitlines()))
    reordered = tmp_path / "reordered.csv"
    with reordered.open("w", newline="") as fh:
        csv.writer(fh).writerows([list(reversed(r)) for r in rows])
    with Client(service.base) as c:
        before = _ids(c)
        refused = run_pgs("batches", "create", credit, str(reordered), url=service.base)
        assert refused.returncode == 3, refused.stderr
        assert "in the model's order" in refused.stderr and "Traceback" not in refused.stderr
        assert _ids(c) == before  # the data set it uploaded is gone with the refusal
