"""Resumable uploads (tus 1.0: core, creation, termination, checksum, expiration) against the
real app: offsets, quota, expiry, restart, and the finish that turns the bytes into a data set
off the request. The protocol's misuse (bad headers, offsets, checksums, races: the security
review's rows T1-T7) is in tests/security/test_uploads_attacks.py; another owner's upload in
tests/security/test_tenants.py."""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import update

from app.core.config import Settings
from app.db.tables import Upload
from app.main import create_app
from tests.cluster.harness import tiny_svmlight
from tests.helpers import assert_problem, make_settings
from tests.tus import KEY_A, KEY_B, auth, create, finish, offset_of, patch


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    # Two owners (app/core/tenants.py): uploads and their quota are per owner.
    return make_settings(
        tmp_path, api_keys=f"team-a:member:{KEY_A},team-b:member:{KEY_B}", upload_quota_bytes=100_000
    )


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings), headers=auth()) as c:
        yield c


def svm_gz(n: int = 300) -> bytes:
    return gzip.compress(tiny_svmlight(n), compresslevel=1)


def test_an_upload_in_chunks_becomes_the_data_set_of_its_bytes(client: TestClient):
    data = svm_gz()
    r = create(client, len(data))
    assert r.status_code == 201 and r.headers["Tus-Resumable"] == "1.0.0"
    location = r.headers["Location"]
    assert offset_of(client, location) == 0
    half = len(data) // 2
    r = patch(client, location, 0, data[:half])
    assert r.status_code == 204 and r.headers["Upload-Offset"] == str(half)
    assert offset_of(client, location) == half
    assert patch(client, location, half, data[half:]).status_code == 204
    upload = finish(client, location, name="chunked", tags="big")
    assert upload["state"] == "done", upload
    ds = client.get(f"/v1/datasets/{upload['dataset_id']}", headers=auth()).json()
    assert ds["sha256"] == hashlib.sha256(data).hexdigest() and ds["size_bytes"] == len(data)
    assert (ds["name"], ds["tags"], ds["n_samples"]) == ("chunked", ["big"], 300)


def test_tus_discovery(client: TestClient):
    r = client.options("/v1/uploads", headers=auth())
    assert r.status_code == 204 and "creation" in r.headers["Tus-Extension"]
    assert r.headers["Tus-Resumable"] == "1.0.0"


def test_the_quota_holds_the_unfinished_uploads_of_one_key(client: TestClient):
    first = create(client, 60_000)
    assert first.status_code == 201
    body = assert_problem(create(client, 50_000), 413)
    assert "PGS_UPLOAD_QUOTA_BYTES" in body["detail"] and body["type"].endswith("quota-exceeded")
    assert create(client, 50_000, key=KEY_B).status_code == 201  # another owner's own quota
    assert client.delete(first.headers["Location"], headers=auth()).status_code == 204
    assert create(client, 50_000).status_code == 201
    assert client.head(first.headers["Location"], headers=auth()).status_code == 404


def test_an_expired_upload_is_gone_then_swept(client: TestClient, settings: Settings):
    location = create(client, 10).headers["Location"]
    upload_id = location.rsplit("/", 1)[1]
    with client.app.state.session_factory() as s, s.begin():  # type: ignore[attr-defined]
        s.execute(
            update(Upload)
            .where(Upload.id == upload_id)
            .values(expires_at=dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1))
        )
    assert client.head(location, headers=auth()).status_code == 410
    assert_problem(patch(client, location, 0, b"x"), 410)
    client.app.state.upload_service.run_once()  # type: ignore[attr-defined]
    assert client.head(location, headers=auth()).status_code == 404
    assert list(settings.uploads_dir.iterdir()) == []


def test_an_upload_survives_a_restart_and_a_bad_file_can_be_finished_again(
    settings: Settings,
):
    data = svm_gz()
    with TestClient(create_app(settings), headers=auth()) as client:
        location = create(client, len(data)).headers["Location"]
        assert patch(client, location, 0, data[:1000]).status_code == 204
    with TestClient(create_app(settings), headers=auth()) as client:
        assert offset_of(client, location) == 1000
        assert patch(client, location, 1000, data[1000:]).status_code == 204
        failed = finish(client, location, format="csv")  # svmlight read as CSV: refused
        assert failed["state"] == "failed" and failed["error"]["status"] == 422
        assert finish(client, location)["state"] == "done"
        assert list(settings.uploads_dir.iterdir()) == []
