"""Resumable uploads (tus 1.0: core, creation, termination, checksum, expiration) against the
real app: offsets, quota, expiry, checksums, restart, and the finish that turns the
bytes into a data set off the request. Another owner's upload: tests/security/test_tenants.py."""

from __future__ import annotations

import base64
import datetime as dt
import gzip
import hashlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import update

from app.core.config import Settings
from app.db.engine import make_engine, make_session_factory, run_migrations
from app.db.tables import Upload
from app.main import create_app
from app.services.datasets import resumable
from tests.cluster.harness import tiny_svmlight
from tests.helpers import assert_problem, make_settings, poll

KEY_A, KEY_B = "key-a", "key-b"
TUS = {"Tus-Resumable": "1.0.0"}
OFFSET_STREAM = "application/offset+octet-stream"


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


def auth(key: str = KEY_A) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}", **TUS}


def create(client: TestClient, length: int, filename: str = "d.svm.gz", key: str = KEY_A) -> Any:
    meta = "filename " + base64.b64encode(filename.encode()).decode()
    return client.post(
        "/v1/uploads", headers={**auth(key), "Upload-Length": str(length), "Upload-Metadata": meta}
    )


def patch(
    client: TestClient, location: str, offset: int, data: bytes, key: str = KEY_A, **headers: str
) -> Any:
    return client.patch(
        location,
        content=data,
        headers={**auth(key), "Upload-Offset": str(offset), "Content-Type": OFFSET_STREAM, **headers},
    )


def offset_of(client: TestClient, location: str, key: str = KEY_A) -> int:
    r = client.head(location, headers=auth(key))
    assert r.status_code == 200, r.status_code
    return int(r.headers["Upload-Offset"])


def finish(client: TestClient, location: str, **options: Any) -> dict[str, Any]:
    r = client.post(f"{location}/dataset", json=options, headers=auth())
    assert r.status_code == 202, r.text
    assert r.headers["Location"] == location
    return poll(client, location, lambda u: u["state"] in ("done", "failed"))


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


def test_a_wrong_offset_is_a_409_and_changes_nothing(client: TestClient):
    location = create(client, 10).headers["Location"]
    assert patch(client, location, 0, b"12345").status_code == 204
    body = assert_problem(patch(client, location, 3, b"xx"), 409)
    assert "5 bytes" in body["detail"]
    assert offset_of(client, location) == 5


def test_protocol_errors(client: TestClient):
    location = create(client, 10).headers["Location"]
    r = client.head(location, headers={"Tus-Resumable": "0.2.2"})
    assert r.status_code == 412 and r.headers["Tus-Version"] == "1.0.0"
    r = client.patch(
        location, content=b"x", headers={**auth(), "Upload-Offset": "0", "Content-Type": "text/plain"}
    )
    assert_problem(r, 415)
    assert r.headers["Tus-Resumable"] == "1.0.0"
    assert_problem(patch(client, location, 0, b"x" * 11), 413)
    assert offset_of(client, location) == 10  # the bytes that fitted are kept
    assert_problem(
        client.post(f"{create(client, 10).headers['Location']}/dataset", json={}, headers=auth()), 409
    )  # nothing received yet
    r = client.options("/v1/uploads", headers=auth())
    assert r.status_code == 204 and "creation" in r.headers["Tus-Extension"]


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


def test_a_checksum_mismatch_keeps_nothing_of_the_body(client: TestClient):
    location = create(client, 10).headers["Location"]
    good = "sha1 " + base64.b64encode(hashlib.sha1(b"12345").digest()).decode()
    bad = "sha1 " + base64.b64encode(hashlib.sha1(b"other").digest()).decode()
    assert_problem(patch(client, location, 0, b"12345", **{"Upload-Checksum": bad}), 460)
    assert offset_of(client, location) == 0
    assert patch(client, location, 0, b"12345", **{"Upload-Checksum": good}).status_code == 204
    assert offset_of(client, location) == 5


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


def test_the_sweep_never_takes_the_file_of_an_upload_created_while_it_runs(tmp_path: Path):
    """Attack T7: uploads created while the sweep ran lost their file (13 of 5,000), then
    answered 410, and a finished empty one stayed "parsing" for good."""
    settings = make_settings(tmp_path)
    engine = make_engine(settings.database_url)
    run_migrations(engine)
    factory = make_session_factory(engine)
    created: list[str] = []
    stop = threading.Event()

    def create_many(n: int) -> None:
        for _ in range(n):
            created.append(resumable.create(factory, settings, "default", 1, "").id)

    def sweep() -> None:
        while not stop.is_set():
            resumable.sweep_expired(factory, settings)

    sweeper = threading.Thread(target=sweep)
    sweeper.start()
    creators = [threading.Thread(target=create_many, args=(250,)) for _ in range(4)]
    for t in creators:
        t.start()
    for t in creators:
        t.join()
    stop.set()
    sweeper.join()
    lost = [i for i in created if not resumable.upload_path(settings, i).exists()]
    assert len(created) == 1000 and lost == []
