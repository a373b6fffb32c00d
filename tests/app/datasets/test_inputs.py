"""Inputs handled the way a careful user expects: a test set with the training set's features,
prediction rows wider than the model, compressed uploads, formats that cannot be told apart, and
a task that was guessed wrong."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from tests.helpers import assert_problem, create_job, make_settings, upload, wait_for


@pytest.fixture(scope="module")
def c(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    with TestClient(create_app(make_settings(tmp_path_factory.mktemp("inputs")))) as client:
        yield client


@pytest.fixture(scope="module")
def heart_model(c: TestClient, data_dir: Path) -> int:
    heart = upload(c, data_dir / "heart_scale.svm", "heart.svm").json()["id"]
    job = wait_for(c, create_job(c, dataset_id=heart, params={"n_iter": 1000}).json()["id"])
    assert job["status"] == "succeeded", job
    return int(job["model_id"])


@pytest.mark.slow
def test_a_test_set_needs_the_training_sets_features(c: TestClient, data_dir: Path):
    """The issue's case: a 13-feature test set for a 126-feature training set is refused with
    both shapes; declared with n_features=126 at upload it is accepted."""
    train = upload(c, data_dir / "agaricus.train.svm", "agaricus.svm").json()
    narrow = upload(c, data_dir / "heart_scale.svm", "heart.svm").json()
    detail = assert_problem(
        create_job(c, dataset_id=train["id"], test_dataset_id=narrow["id"]), 422, "body.test_dataset_id"
    )["detail"]
    assert "270 rows x 13 features" in detail and "6513 rows x 126 features" in detail
    assert "n_features=126" in detail
    declared = upload(c, data_dir / "heart_scale.svm", "heart.svm", n_features="126").json()
    assert declared["n_features"] == 126
    r = create_job(c, dataset_id=train["id"], test_dataset_id=declared["id"], params={"n_iter": 10})
    assert r.status_code == 202, r.text
    wait_for(c, r.json()["id"])
    # A declared width under the file's largest index is refused, naming both.
    detail = assert_problem(
        upload(c, data_dir / "heart_scale.svm", "heart.svm", n_features="10"), 422, "body.file"
    )["detail"]
    assert "feature index 13 (1-based)" in detail and "n_features=10" in detail


def _predict(c: TestClient, model: int, body: Any, query: str = "") -> Any:
    if isinstance(body, bytes):
        return c.post(
            f"/v1/models/{model}/predict{query}", content=body, headers={"content-type": "text/plain"}
        )
    return c.post(f"/v1/models/{model}/predict{query}", json=body)


def test_features_beyond_the_model_fail_or_are_ignored_by_choice(c: TestClient, heart_model: int):
    m = heart_model
    detail = assert_problem(_predict(c, m, b"1:0.5 15:1\n2:0.25"), 422)["detail"]
    assert "feature index 15 (1-based)" in detail and "width of 13 features" in detail
    assert "extra_features=ignore" in detail
    ignored = _predict(c, m, b"1:0.5 15:1\n2:0.25", "?extra_features=ignore").json()
    assert ignored == _predict(c, m, b"1:0.5\n2:0.25").json()

    sparse = {"instances": [{"indices": [0, 14], "values": [0.5, 1.0]}, {"indices": [1], "values": [0.25]}]}
    body = assert_problem(_predict(c, m, sparse), 422, "body.instances.0.indices")
    assert "feature index 14 (0-based)" in body["detail"] and "width of 13" in body["detail"]
    assert _predict(c, m, sparse, "?extra_features=ignore").json() == ignored
    mixed = {"instances": [*sparse["instances"], [0.0] * 13]}  # the per-row path
    assert _predict(c, m, mixed, "?extra_features=ignore").json()["scores"][:2] == ignored["scores"]
    assert_problem(_predict(c, m, sparse, "?extra_features=maybe"), 422, "query.extra_features")


def _zip(data: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("heart.svm", data)
    return buffer.getvalue()


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress, lzma.compress])
def test_gzip_bzip2_and_xz_uploads_read_as_the_plain_file(c: TestClient, data_dir: Path, compress: Any):
    raw = (data_dir / "heart_scale.svm").read_bytes()
    plain = upload(c, raw, "heart.svm").json()
    packed = upload(c, compress(raw), "heart.svm.z").json()
    assert packed["compressed"] is True
    assert {k: packed[k] for k in ("n_samples", "n_features", "nnz", "classes")} == {
        k: plain[k] for k in ("n_samples", "n_features", "nnz", "classes")
    }


@pytest.mark.parametrize(
    "content, expected",
    [
        (b"BZh91AY&SY" + b"\x00" * 40, "not a valid bzip2 stream"),
        (b"\xfd7zXZ\x00" + b"\x00" * 40, "not a valid xz stream"),
        (None, "the file is a zip archive"),
        (
            b"hello world of data\nsecond line\n",
            "the first line, 'hello world of data', has 4 field(s) separated by spaces",
        ),
        (b"\x01\x02\x03\x04binary\xff\xfe\n", "the content is binary (it starts with bytes 01 02"),
    ],
)
def test_unreadable_uploads_say_what_was_found(
    c: TestClient, data_dir: Path, content: bytes | None, expected: str
):
    if content is None:
        content = _zip((data_dir / "heart_scale.svm").read_bytes())
    detail = assert_problem(upload(c, content, "upload.dat"), 422, "body.file")["detail"]
    assert expected in detail, detail


def _integer_classes(n_classes: int, rows: int = 600) -> bytes:
    """Like sector.scale: integer class labels, more of them than the regression guess allows."""
    rng = np.random.default_rng(0)
    labels = rng.integers(1, n_classes + 1, size=rows)
    labels[:n_classes] = np.arange(1, n_classes + 1)
    return b"\n".join(f"{y} 1:{rng.normal():.3f} 2:{rng.normal():.3f}".encode() for y in labels)


def test_a_guessed_task_is_stated_and_can_be_corrected(c: TestClient, data_dir: Path):
    ds = upload(c, _integer_classes(30), "sector.svm").json()
    assert (ds["task"], ds["task_source"]) == ("regression", "guessed")
    assert "PATCH /v1/datasets/" in ds["task_note"] and '"classification"' in ds["task_note"]
    r = c.patch(f"/v1/datasets/{ds['id']}", json={"task": "classification"})
    assert r.status_code == 200, r.text
    fixed = r.json()
    assert (fixed["task"], fixed["task_source"]) == ("multiclass", "declared")
    assert fixed["classes"] == list(range(1, 31)) and fixed["task_note"] == "multiclass, as declared"
    assert c.patch(f"/v1/datasets/{ds['id']}", json={"task": "regression"}).json()["classes"] is None

    declared = upload(c, _integer_classes(30), "sector.svm", task="classification").json()
    assert (declared["task"], declared["task_source"]) == ("multiclass", "declared")
    magic = upload(c, data_dir / "magic04.csv", "magic04.csv").json()
    assert (
        "string"
        in assert_problem(
            c.patch(f"/v1/datasets/{magic['id']}", json={"task": "regression"}), 422, "body.task"
        )["detail"]
    )
    assert c.get(f"/v1/datasets/{magic['id']}").json()["task"] == "binary"  # nothing changed
