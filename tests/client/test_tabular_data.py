"""Real tabular data through the client and ``pgs``, parsed by the service only: a raw R-style
export of german_credit (a header, a text label column by name, 13 text columns, NA cells, one in
the first data row) as a pandas DataFrame and as a file, to a named model with an alias, to
``pgs predict name@alias file.csv`` equal to the service's batch predictions; DataFrames of every
column kind, dicts keyed by feature name and object arrays; a file with its columns reordered;
stdin; the inputs predict refuses, each with a one-line error; ``--extra-features`` and the
upload flags ``--n-features``, ``--header``, ``--description``."""

from __future__ import annotations

import csv
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pgs_client import Client, Dataset, Job

from tests.client.conftest import PGS, run_pgs
from tests.cluster.harness import ApiServer

# Against a real service (conftest.py): out of make test-fast.
pytestmark = pytest.mark.system

# german_credit's attributes (UCI Statlog German credit), in the file's order, then the label.
COLUMNS = [
    "checking_status",
    "duration",
    "credit_history",
    "purpose",
    "credit_amount",
    "savings",
    "employment",
    "installment_rate",
    "personal_status",
    "other_debtors",
    "residence_since",
    "property",
    "age",
    "other_installment_plans",
    "housing",
    "existing_credits",
    "job",
    "num_dependents",
    "telephone",
    "foreign_worker",
]
LABEL = "credit_risk"
NA_SHARE = 0.03


def _r_export(source: Path, target: Path) -> None:
    """german_credit as R's write.csv(row.names = FALSE) writes it: a quoted header, quoted text,
    the labels 1/2 as "good"/"bad", NA in 3 % of the feature cells (seeded) and in the first row's
    text column "purpose"."""
    rng = np.random.default_rng(32)
    lines = [",".join(f'"{name}"' for name in [*COLUMNS, LABEL])]
    for i, row in enumerate(csv.reader(source.read_text().splitlines())):
        cells = [c if c.lstrip("-").isdigit() else f'"{c}"' for c in row[:-1]]
        cells = ["NA" if rng.random() < NA_SHARE else c for c in cells]
        if i == 0:
            cells[COLUMNS.index("purpose")] = "NA"
        lines.append(",".join([*cells, '"good"' if row[-1] == "1" else '"bad"']))
    target.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def r_csv(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("r") / "credit-r.csv"
    _r_export(data_dir / "german_credit.csv", path)
    return path


@pytest.fixture(scope="module")
def credit(service: ApiServer, r_csv: Path) -> Iterator[tuple[Dataset, str]]:
    """The R export uploaded by ``pgs`` (the label column by name), and ``credit@prod``: a
    logistic model trained on it, named and aliased."""
    done = run_pgs(
        "datasets", "upload", str(r_csv), "--name", "credit", "--label-column", LABEL, "--tags", "raw,r",
        "--json", url=service.base,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    with Client(service.base) as c:
        ds = c.datasets.get(json.loads(done.stdout)["id"])
        params = {"loss": "logistic", "sigma": 1e-3, "random_state": 0}
        job = c.jobs.wait(c.jobs.create(ds, params=params, test_fraction=0.25))
        model = c.models.update(job.model_id, name="credit")
        c.aliases.set("credit@prod", model)
        yield ds, "credit@prod"


def _pgs_predictions(service: ApiServer, *args: str) -> list[dict[str, str]]:
    done = run_pgs("predict", *args, url=service.base)
    assert done.returncode == 0, done.stderr
    return list(csv.DictReader(done.stdout.splitlines()))


def test_an_r_export_as_a_dataframe_and_as_a_file_predicts_as_the_batch(
    client: Client, service: ApiServer, r_csv: Path, credit: tuple[Dataset, str], tmp_path: Path
):
    ds, ref = credit
    assert ds.feature_names == COLUMNS and ds.label_name == LABEL and ds.classes == ["bad", "good"]
    assert len(ds.text_columns) == 13 and ds.n_samples == 1000 and ds.n_missing > 0
    assert ds.tags == ["raw", "r"]
    # (a) The same file read by pandas, defaults and all, uploaded as the DataFrame it gives.
    frame = pd.read_csv(r_csv)
    from_frame = client.datasets.upload(frame, name="credit frame", label_column=LABEL)
    same = ("feature_names", "label_name", "text_columns", "n_missing", "n_samples", "classes", "nnz")
    assert {k: getattr(from_frame, k) for k in same} == {k: getattr(ds, k) for k in same}

    # (b) pgs predict name@alias on the file as it is: the labels of the file, row by row.
    by_pgs = _pgs_predictions(service, ref, str(r_csv))
    assert len(by_pgs) == 1000 and {r["prediction"] for r in by_pgs} == {"bad", "good"}
    assert set(by_pgs[0]) == {"prediction", "score", "probability_bad", "probability_good"}

    batch = client.models.wait_batch(ref, client.models.predict_dataset(ref, ds))
    assert batch.status == "succeeded", batch
    result = client.models.download_batch(ref, batch, tmp_path / "batch.csv")
    by_batch = list(csv.DictReader(result.read_text().splitlines()))
    assert [r["prediction"] for r in by_pgs] == [r["prediction"] for r in by_batch]
    np.testing.assert_allclose([float(r["score"]) for r in by_pgs], [float(r["score"]) for r in by_batch])

    # The DataFrame through the client gives the same, and so does the batch of its data set.
    pred = client.models.predict(ref, frame)
    assert pred.predictions.tolist() == [r["prediction"] for r in by_pgs]


def test_a_file_with_its_columns_in_another_order_predicts_the_same(
    service: ApiServer, r_csv: Path, credit: tuple[Dataset, str], tmp_path: Path
):
    _, ref = credit
    rows = list(csv.reader(r_csv.read_text().splitlines()))
    order = list(reversed(range(len(rows[0]))))
    shuffled = tmp_path / "reordered.csv"
    with shuffled.open("w", newline="") as out:
        csv.writer(out).writerows([[row[k] for k in order] for row in rows])
    assert _pgs_predictions(service, ref, str(shuffled)) == _pgs_predictions(service, ref, str(r_csv))
    # From stdin, as a pipe (the format told by the first line: not svmlight).
    piped = subprocess.run(
        f"'{PGS}' predict {ref} - < '{shuffled}'",
        shell=True,
        capture_output=True,
        text=True,
        env={**{k: v for k, v in os.environ.items() if k != "PGS_API_KEY"}, "PGS_URL": service.base},
    )
    assert piped.returncode == 0, piped.stderr
    assert list(csv.DictReader(piped.stdout.splitlines())) == _pgs_predictions(service, ref, str(r_csv))


def test_dataframes_of_every_column_kind_dicts_by_name_and_object_arrays_agree(
    client: Client, r_csv: Path, credit: tuple[Dataset, str]
):
    _, ref = credit
    frame = pd.read_csv(r_csv).drop(columns=[LABEL])
    reference = client.models.predict(ref, frame)
    typed = frame.astype(
        {
            "checking_status": "category",
            "purpose": "string",
            "housing": pd.CategoricalDtype(["A151", "A152", "A153"]),
            "duration": "Int64",
            "age": "Float64",
        }
    )
    assert typed["duration"].isna().any() and typed["purpose"].isna().any()  # pd.NA cells
    records = frame.to_dict("records")  # NaN where R wrote NA
    forms = {
        "typed frame": typed,
        "dicts by name": records,
        "dicts by name, missing left out": [{k: v for k, v in r.items() if v == v} for r in records],
        "object array": frame.to_numpy(dtype=object),
    }
    for name, X in forms.items():
        pred = client.models.predict(ref, X, batch_rows=300)
        assert pred.predictions.tolist() == reference.predictions.tolist(), name
        np.testing.assert_allclose(pred.scores, reference.scores, err_msg=name)


def test_uploads_of_frames_with_labels_booleans_and_dicts_by_name(client: Client, r_csv: Path):
    frame = pd.read_csv(r_csv)
    X, y = frame.drop(columns=[LABEL]), frame[LABEL]
    phone = [v == "A192" if v == v else None for v in X["telephone"]]
    X = X.assign(has_phone=pd.array(phone, dtype="boolean"))
    ds = client.datasets.upload((X, y), name="credit tuple")
    # The labels keep their name; a boolean column is a feature (1/0), as in a Parquet upload.
    assert ds.label_name == LABEL and ds.feature_names == [*COLUMNS, "has_phone"]
    assert "has_phone" not in [ds.feature_names[j] for j in ds.text_columns]
    named = client.datasets.upload((X.drop(columns=["has_phone"]).to_dict("records"), y.tolist()))
    assert named.feature_names == COLUMNS and named.label_name == "label" and named.classes == ["bad", "good"]
    assert named.n_missing == client.datasets.upload(frame, label_column=LABEL).n_missing


def test_predict_refuses_what_it_cannot_send_in_one_line(
    service: ApiServer, r_csv: Path, credit: tuple[Dataset, str], tmp_path: Path
):
    _, ref = credit
    parquet = tmp_path / "credit.parquet"
    pd.read_csv(r_csv).to_parquet(parquet)
    done = run_pgs("predict", ref, str(parquet), url=service.base)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "Parquet and Arrow files cannot be sent for prediction" in done.stderr
    missing = run_pgs("predict", ref, str(tmp_path / "nope.csv"), url=service.base)
    assert missing.returncode == 2 and "is not a file" in missing.stderr
    unknown = run_pgs("predict", "credit@nowhere", str(r_csv), url=service.base)
    assert unknown.returncode == 4 and "Traceback" not in unknown.stderr
    bad_column = tmp_path / "bad.csv"
    bad_column.write_text("colour,age\nred,3\n")
    refused = run_pgs("predict", ref, str(bad_column), url=service.base)
    assert refused.returncode == 3 and "unknown column(s) 'colour'" in refused.stderr


def test_pgs_predict_extra_features_and_upload_width_header_and_description(
    service: ApiServer, heart: Path, heart_job: tuple[Dataset, Job], tmp_path: Path
):
    _, job = heart_job
    wide = tmp_path / "wide.svm"
    wide.write_text("1:0.5 3:1 20:7\n2:1\n")  # feature 20 is past the model's 13
    refused = run_pgs("predict", str(job.model_id), str(wide), url=service.base)
    assert refused.returncode == 3 and "extra_features=ignore" in refused.stderr
    kept = run_pgs("predict", str(job.model_id), str(wide), "--extra-features", "ignore", url=service.base)
    assert kept.returncode == 0, kept.stderr
    assert len(list(csv.DictReader(kept.stdout.splitlines()))) == 2

    done = run_pgs(
        "datasets", "upload", str(heart), "--n-features", "20", "--description", "heart, wider",
        "--json", url=service.base,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    ds = json.loads(done.stdout)
    assert (ds["n_features"], ds["description"]) == (20, "heart, wider")
    no_header = tmp_path / "no-header.csv"
    no_header.write_text("a,1,x\nb,2,y\n")  # text in the first row, yet no header
    done = run_pgs("datasets", "upload", str(no_header), "--header", "false", "--json", url=service.base)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["n_samples"] == 2
