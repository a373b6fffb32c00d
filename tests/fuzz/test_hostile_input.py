"""Hand-made hostile input: uploads and request bodies built to break parsers. Each one gets a
4xx problem+json within a few seconds: no 500, no hang, nothing stored. Among them, rows of the
security review (the rest of them: tests/security/test_parse_attacks.py): P1 (a gzip bomb), P4
(feature indices 2^31, 2^31-1, -5, duplicated, unsorted), P5 (NaN or infinite labels and
features, svmlight and CSV), P7 (a NUL byte in svmlight) and P8 (malformed request bodies)."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from tests.cluster.harness import tiny_svmlight
from tests.helpers import assert_problem, make_settings, wait_for

MIB = 1024 * 1024

UPLOADS: dict[str, tuple[bytes, str, int]] = {
    # name: (content, filename, expected status)
    "malformed svmlight": (b"1 1:2 3\n-1 a:b\n", "x.svm", 422),
    "feature without value": (b"1 1:\n-1 2:1\n", "x.svm", 422),
    "index beyond 64 bits": (b"1 1:1 99999999999999999999999:1\n-1 2:1\n", "x.svm", 422),
    # P4
    "huge index (2^31-1 features)": (b"1 1:1 2147483647:1\n-1 2:1\n", "x.svm", 422),
    "index 2^31": (b"1 1:1 2147483648:1\n-1 2:1\n", "x.svm", 422),
    "negative index": (b"1 -5:1\n-1 2:1\n", "x.svm", 422),
    "duplicate index": (b"1 1:1 1:2\n-1 2:1\n", "x.svm", 422),
    "unsorted indices": (b"1 3:1 2:1\n-1 2:1\n", "x.svm", 422),
    # P5
    "NaN and inf": (b"1 1:nan\n-1 2:inf\n", "x.svm", 422),
    "NaN label": (b"nan 1:1\n-1 2:1\n", "x.svm", 422),
    "inf label": (b"inf 1:1\n-1 2:1\n", "x.svm", 422),
    "CSV NaN label": (b"1,2,nan\n3,4,1\n", "x.csv", 422),
    "CSV inf label": (b"1,2,inf\n3,4,1\n", "x.csv", 422),
    "CSV inf feature": (b"1,inf,1\n3,4,0\n", "x.csv", 422),
    # P7 (in a CSV a NUL makes a text column: tests/security/test_parse_attacks.py)
    "NUL byte": (b"1 1:1\x00\n-1 2:1\n", "x.svm", 422),
    # P1
    "gzip bomb": (gzip.compress(b"1 1:1\n" * (3 * MIB)), "bomb.svm.gz", 413),
    # Inflated whole before parsing: over the decompressed limit whatever its content.
    "gzip bomb of zeros": (gzip.compress(b"0" * (40 * MIB)), "zeros.gz", 413),
    "truncated gzip": (gzip.compress(b"1 1:1\n-1 2:1\n" * 50)[:-9], "t.svm.gz", 422),
    "CSV with mixed types": (b"a,b,label\n1,2,x\nfoo,3,y\n4,bar,x\n", "m.csv", 422),
    "CSV header only": (b"a,b,c\n", "h.csv", 422),
    "CSV ragged rows": (b"1,2,3\n4,5\n6,7,8,9\n", "r.csv", 422),
    "0-byte file": (b"", "empty.svm", 422),
    "Unicode junk": ("ünï 1:ç\n☃ 2:∞\n\u202e 3:1\n".encode(), "u.svm", 422),
    "invalid UTF-8 and NUL bytes": (b"1 1:1\x00\n\xff\xfe 2:1\n", "b.svm", 422),
    "binary junk": (bytes(range(256)) * 64, "junk.bin", 422),
    "single class": (b"1 1:1\n1 2:1\n", "one.svm", 201),  # stored; a job on it is refused
}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    settings = make_settings(tmp_path, max_decompressed_bytes=4 * MIB, max_upload_bytes=8 * MIB)
    with TestClient(create_app(settings)) as c:
        yield c


def test_hostile_uploads(client: TestClient, tmp_path: Path):
    tried = 0
    for name, (content, filename, status) in UPLOADS.items():
        # No time limit here: the server's own (PGS_PARSE_TIMEOUT_S, the body timeouts) end a
        # slow case with its answer; a timing assertion would only measure the machine's load.
        r = client.post("/v1/datasets", files={"file": (filename, content)})
        tried += 1
        if status >= 400:
            assert_problem(r, status), name
        else:
            assert r.status_code == status, (name, r.text)
    # Only the one valid upload left a file and a row; the rejected ones left nothing behind.
    stored = sorted(p.name for p in (tmp_path / "var" / "datasets").iterdir())
    assert len(stored) == 1 and not list((tmp_path / "var" / "tmp").iterdir())
    assert len(client.get("/v1/datasets").json()["items"]) == 1
    one = client.get("/v1/datasets").json()["items"][0]["id"]
    assert_problem(client.post("/v1/jobs", json={"dataset_id": one}), 422, "body.dataset_id")
    assert tried == len(UPLOADS)


def test_hostile_request_bodies(client: TestClient):
    """P8 (with test_parse_attacks.py): nesting 100k deep, numbers beyond float, NaN, ids
    beyond 64 bits, an empty body."""
    ds = client.post("/v1/datasets", files={"file": ("t.svm", tiny_svmlight())}).json()["id"]
    model = wait_for(
        client, client.post("/v1/jobs", json={"dataset_id": ds, "params": {"n_iter": 500}}).json()["id"]
    )["model_id"]
    predict = f"/v1/models/{model}/predict"
    deep = b"[" * 100_000 + b"]" * 100_000
    cases: list[tuple[str, str, bytes, str, int]] = [
        ("deeply nested JSON", predict, deep, "application/json", 422),
        ("deeply nested instances", predict, b'{"instances": ' + deep + b"}", "application/json", 422),
        (
            "deeply nested job",
            "/v1/jobs",
            b'{"dataset_id": 1, "params": ' + b'{"a":' * 50_000 + b"1" + b"}" * 50_001,
            "application/json",
            400,
        ),
        (
            "overflowing values",
            predict,
            b'{"instances": [[' + b", ".join([b"1e308"] * 20) + b"]]}",
            "application/json",
            422,
        ),
        ("number beyond float", predict, b'{"instances": [[1e999]]}', "application/json", 422),
        (
            "NaN literal",
            predict,
            b'{"instances": [{"indices": [0], "values": [NaN]}]}',
            "application/json",
            422,
        ),
        ("svmlight junk as text", predict, "1 1:\u2603\n\x00".encode(), "text/plain", 422),
        ("invalid UTF-8 text", predict, b"\xff\xfe junk", "text/plain", 422),
        ("index beyond 64 bits", predict, b"1 99999999999999999999999:1", "text/plain", 422),
        ("JSON sent as XML", predict, b"<instances/>", "application/xml", 415),
        (
            "id beyond 64 bits",
            "/v1/models/99999999999999999999999/predict",
            b'{"instances": [[1]]}',
            "application/json",
            422,
        ),
        ("job id beyond 64 bits", "/v1/jobs/99999999999999999999999/cancel", b"", "application/json", 422),
        (
            "non-finite job params",
            "/v1/jobs",
            b'{"dataset_id": 1, "params": {"n_iter": 1e400}}',
            "application/json",
            422,
        ),
        ("empty body", "/v1/jobs", b"", "application/json", 422),
    ]
    for name, path, body, ctype, status in cases:
        r = client.post(path, content=body, headers={"content-type": ctype})
        assert r.status_code == status, (name, r.status_code, r.text[:300])
        assert_problem(r, status)
