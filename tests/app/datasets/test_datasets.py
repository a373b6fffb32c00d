"""POST/GET/DELETE /v1/datasets (app/api/routes/datasets.py): both formats, gzip, and every
bad-input case answered clearly; and the stored form and the splits of app/services/datasets/splits.py."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sklearn.datasets import load_svmlight_file

from app.core.config import Settings
from app.main import create_app
from app.services.datasets.splits import ShardSplit, held_out_rows, split_indices
from tests.helpers import assert_problem, make_settings, stored_rows, upload


def _stored(settings: Settings, client: TestClient, dataset_id: int):
    from app.db.tables import Dataset

    with client.app.state.session_factory() as s:  # type: ignore[attr-defined]
        row = s.get(Dataset, dataset_id)
        return stored_rows(settings.store, row.file_name)


def test_svmlight_upload_is_stored_as_csr(client: TestClient, settings: Settings, data_dir: Path):
    path = data_dir / "heart_scale.svm"
    r = upload(client, path, "heart_scale.svm", name="heart")
    assert r.status_code == 201, r.text
    body = r.json()
    assert r.headers["location"] == f"/v1/datasets/{body['id']}"
    X_ref, y_ref = load_svmlight_file(str(path))
    # The columns' statistics: tests/app/datasets/test_column_stats_api.py.
    assert (body["columns"]["total"], body["columns_status"]) == (13, "ready")
    assert body | {"id": 0, "created_at": "", "columns": None, "columns_status": None} == {
        "id": 0,
        "name": "heart",
        "format": "svmlight",
        "compressed": False,
        "n_samples": 270,
        "n_features": 13,
        "nnz": X_ref.nnz,
        "labelled": True,
        "task": "binary",
        "classes": [-1, 1],
        "index_base": 1,
        "size_bytes": path.stat().st_size,
        "sha256": __import__("hashlib").sha256(path.read_bytes()).hexdigest(),
        "created_at": "",
        "warnings": [],
        "feature_names": None,
        "label_name": None,
        "text_columns": None,
        "n_missing": 0,
        "na_values": None,
        "description": None,
        "tags": [],
        "task_source": "guessed",
        "task_note": "binary, guessed from 2 distinct label(s); PATCH /v1/datasets/1 with "
        '{"task": "regression"} if they are values to regress',
        "columns": None,
        "columns_status": None,
    }
    X, y = _stored(settings, client, body["id"])
    assert (X != X_ref).nnz == 0 and np.array_equal(y, y_ref)
    assert client.get(r.headers["location"]).json() == body


def test_gzip_svmlight_is_detected_by_content(client: TestClient, data_dir: Path):
    raw = (data_dir / "heart_scale.svm").read_bytes()
    # A misleading name: detection uses the gzip magic bytes, not the extension.
    r = upload(client, gzip.compress(raw), "heart.txt")
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["compressed"] is True and body["format"] == "svmlight"
    assert (body["n_samples"], body["n_features"]) == (270, 13)


def test_csv_with_string_labels(client: TestClient, settings: Settings, data_dir: Path):
    r = upload(client, data_dir / "magic04.csv", "magic04.csv")
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["format"] == "csv" and body["task"] == "binary"
    assert (body["n_samples"], body["n_features"], body["classes"]) == (19020, 10, ["g", "h"])
    X, y = _stored(settings, client, body["id"])
    first = (data_dir / "magic04.csv").read_text().splitlines()[0].split(",")
    np.testing.assert_allclose(X[0].toarray().ravel(), [float(v) for v in first[:-1]])
    assert y[0] == first[-1] and y.dtype.kind == "U"


def test_gzip_csv_with_header_and_named_label_column(client: TestClient):
    text = "label,a,b\nyes,1.5,0\nno,0,2\nyes,3,1\n"
    r = upload(client, gzip.compress(text.encode()), "t.csv.gz", label_column="label")
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["compressed"] and body["format"] == "csv"
    assert (body["n_samples"], body["n_features"], body["nnz"]) == (3, 2, 4)
    assert body["classes"] == ["no", "yes"]


def test_regression_and_multiclass_are_inferred(client: TestClient, data_dir: Path):
    r = upload(client, data_dir / "abalone.svm", "abalone.svm")
    assert r.status_code == 201 and r.json()["task"] == "regression"
    assert r.json()["classes"] is None
    multi = b"1 1:0.5\n2 2:1\n3 1:1 2:1\n2 1:0.1\n"
    r = upload(client, multi, "m.svm")
    assert r.json()["task"] == "multiclass" and r.json()["classes"] == [1, 2, 3]
    r = upload(client, multi, "m.svm", task="regression")
    assert r.json()["task"] == "regression"


def test_list_get_delete(client: TestClient, data_dir: Path, tmp_path: Path):
    ids = [upload(client, data_dir / "heart_scale.svm", f"h{i}.svm").json()["id"] for i in range(3)]
    page1 = client.get("/v1/datasets", params={"limit": 2}).json()
    assert [d["id"] for d in page1["items"]] == ids[::-1][:2]
    page2 = client.get("/v1/datasets", params={"limit": 2, "cursor": page1["next_cursor"]}).json()
    assert [d["id"] for d in page2["items"]] == [ids[0]] and page2["next_cursor"] is None
    stored = sorted(p.name for p in (tmp_path / "var" / "datasets").iterdir())
    assert len(stored) == 3
    assert client.delete(f"/v1/datasets/{ids[1]}").status_code == 204
    # Its shards and their directory are gone with it.
    assert len(list((tmp_path / "var" / "datasets").iterdir())) == 2
    assert_problem(client.get(f"/v1/datasets/{ids[1]}"), 404)
    assert_problem(client.delete(f"/v1/datasets/{ids[1]}"), 404)
    assert [d["id"] for d in client.get("/v1/datasets").json()["items"]] == [ids[2], ids[0]]


@pytest.mark.parametrize(
    ("content", "filename", "fields"),
    [
        (b"", "empty.svm", {}),
        (b"\n\n  \n", "blank.svm", {}),
        (gzip.compress(b""), "empty.svm.gz", {}),
        (b"\x00\xff\xfe\x00garbage", "bin.svm", {}),
        (b"\x1f\x8b\x08\x00broken-gzip-stream", "x.svm", {}),
        (b"1 1:nan 2:1\n", "nan.svm", {}),
        (b"1 1:2 1:3\n", "dup.svm", {}),
        (b"1 1:1\n-1 0:2\n", "zero.svm", {"zero_based": "false"}),
        (b"a,b,c\n1,2,x\n1,inf,y\n", "inf.csv", {}),
        (b"1,2,x\n1,2\n", "ragged.csv", {}),
        (b"1,2,x\n2,abc,y\n", "text-feature.csv", {"header": "false"}),
        (b"1,2,x\n3,4,\n", "missing-label.csv", {}),
        (b"1,2,3\n", "t.csv", {"label_column": "7"}),
        (b"1,2,3\n", "t.csv", {"label_column": "nope", "header": "false"}),
        (b"just some words\n", "words.txt", {}),
        (b"1 1:1\n", "x.svm", {"format": "yaml"}),
        (b"1 1:1\n", "x.svm", {"colour": "blue"}),
    ],
    ids=[
        "empty",
        "blank",
        "empty-gzip",
        "binary",
        "corrupt-gzip",
        "nan",
        "duplicate-index",
        "zero-index-1-based",
        "csv-inf",
        "csv-ragged",
        "csv-text-in-a-numeric-column",
        "csv-missing-label",
        "csv-label-column-range",
        "csv-label-column-name",
        "unknown-format",
        "bad-format-field",
        "unknown-field",
    ],
)
def test_bad_uploads_are_422(client: TestClient, content: bytes, filename: str, fields: dict):
    body = assert_problem(upload(client, content, filename, **fields), 422)
    assert body["errors"], body
    assert client.get("/v1/datasets").json()["items"] == []


def test_upload_over_the_limit_is_413(tmp_path: Path, data_dir: Path):
    settings = make_settings(tmp_path, max_upload_bytes=10_000)
    with TestClient(create_app(settings)) as c:
        assert_problem(upload(c, data_dir / "heart_scale.svm"), 413)
        # Chunked (no Content-Length): the streaming counter stops it too.
        data = (data_dir / "heart_scale.svm").read_bytes()
        boundary = "xyzzy"
        body = (
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="h.svm"\r\n\r\n'
            ).encode()
            + data
            + f"\r\n--{boundary}--\r\n".encode()
        )

        def chunks():
            for i in range(0, len(body), 4096):
                yield body[i : i + 4096]

        r = c.post(
            "/v1/datasets",
            content=chunks(),
            headers={"content-type": f"multipart/form-data; boundary={boundary}"},
        )
        assert_problem(r, 413)
        # Nothing is left behind in the temp dir.
        assert list(settings.tmp_dir.iterdir()) == []


def test_gzip_bomb_is_413(tmp_path: Path):
    settings = make_settings(tmp_path, max_decompressed_bytes=100_000)
    bomb = gzip.compress(b"1 1:1\n" * 1_000_000)  # ~6 MB of text in a few kB
    with TestClient(create_app(settings)) as c:
        assert_problem(upload(c, bomb, "bomb.svm.gz"), 413)


def test_wrong_content_type_and_missing_file(client: TestClient):
    assert_problem(client.post("/v1/datasets", json={"file": "1 1:1"}), 415)
    assert_problem(
        client.post("/v1/datasets", data={"name": "x"}, files={"other": ("a.svm", b"1 1:1\n")}),
        422,
        "body.file",
    )
    r = client.post("/v1/datasets", content=b"--x\r\n", headers={"content-type": "multipart/form-data"})
    assert_problem(r, 422)


@pytest.mark.parametrize(
    ("n", "fraction", "held_out"),
    [
        (270, 0.3, 81),
        (270, 0.25, 68),
        (100, 0.005, None),
        (10, 0.96, None),
        (2, 0.5, 1),
        (1, 0.5, None),
    ],
)
def test_one_rule_sizes_every_split(n: int, fraction: float, held_out: int | None):
    """round(n * fraction) rows set apart, both sides non-empty, or no split at all."""
    if held_out is None:
        with pytest.raises(ValueError, match="leaves one side of the split empty"):
            held_out_rows(n, fraction)
        return
    assert held_out_rows(n, fraction) == held_out
    train, test = split_indices(n, fraction, seed=3)
    assert len(test) == held_out and len(train) == n - held_out
    assert sorted([*train, *test]) == list(range(n))
    again = split_indices(n, fraction, seed=3)
    assert np.array_equal(again[0], train) and np.array_equal(again[1], test)


def test_a_sharded_split_sets_apart_exactly_its_rows_shard_by_shard():
    shard_rows = [100, 7, 0, 193, 50]
    split = ShardSplit(shard_rows, 0.3, seed=3)
    masks = [split.held_out_mask(i) for i in range(len(shard_rows))]
    assert [len(m) for m in masks] == shard_rows
    assert sum(int(m.sum()) for m in masks) == held_out_rows(350, 0.3) == 105
    again = ShardSplit(shard_rows, 0.3, seed=3)
    assert all(np.array_equal(again.held_out_mask(i), m) for i, m in enumerate(masks))
    other = ShardSplit(shard_rows, 0.3, seed=4)
    assert not all(np.array_equal(other.held_out_mask(i), m) for i, m in enumerate(masks))
    with pytest.raises(ValueError, match="leaves one side of the split empty"):
        ShardSplit([1], 0.5, seed=0)


def test_stored_size_limits_are_a_413_and_a_507(tmp_path: Path, data_dir: Path):
    heart = data_dir / "heart_scale.svm"  # 270 rows, 3,378 non-zeros: 45,024 bytes as shards
    settings = make_settings(tmp_path, max_dataset_bytes=40_000, shard_bytes=8192)
    with TestClient(create_app(settings)) as c:
        body = assert_problem(upload(c, heart), 413)
        assert "PGS_MAX_DATASET_BYTES" in body["detail"], body["detail"]
        assert list(settings.datasets_dir.iterdir()) == []  # its first shards are removed
    settings = make_settings(tmp_path, store_quota_bytes=100_000, shard_bytes=8192)
    with TestClient(create_app(settings)) as c:
        assert upload(c, heart, "a.svm").status_code == 201
        assert upload(c, heart, "b.svm").status_code == 201
        body = assert_problem(upload(c, heart, "c.svm"), 507)
        assert "PGS_STORE_QUOTA_BYTES" in body["detail"], body["detail"]
        assert len(list(settings.datasets_dir.iterdir())) == 2
        # A deleted data set gives its room back.
        first = c.get("/v1/datasets").json()["items"][-1]["id"]
        assert c.delete(f"/v1/datasets/{first}").status_code == 204
        assert upload(c, heart, "c.svm").status_code == 201
