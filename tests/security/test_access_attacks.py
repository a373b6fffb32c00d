"""The attacks on access of the security review (rows A1, A4, A5 and A6; A2 and A3, one key on
another's objects, are in test_tenants.py), replayed with the review's keys: each test is one
attack and asserts the outcome that must hold.

A1 and A4 run against a real server (``python -m app``): where a key may hide in a request and
how a path is read are the transport's business, and a raw socket sends paths no HTTP client
would leave as written. A1's first half (no key and a wrong key on every operation, and every
operation declaring its security) is tests/fuzz/test_security.py.
"""

from __future__ import annotations

import base64
import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from tests.cluster.harness import ApiServer, running_service
from tests.helpers import create_job, make_settings, upload

KEY_A, KEY_B = "keyA-0123456789", "keyB-9876543210"
A = {"Authorization": f"Bearer {KEY_A}"}
B = {"Authorization": f"Bearer {KEY_B}"}
PUBLIC = {"/healthz", "/readyz"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    with running_service(tmp_path_factory.mktemp("access"), PGS_API_KEYS=f"{KEY_A},{KEY_B}") as s:
        yield s


@pytest.fixture
def keyed(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(make_settings(tmp_path, api_keys=f"{KEY_A},{KEY_B}"))) as c:
        yield c


def _operations(spec: dict[str, Any]) -> list[tuple[str, str]]:
    """Every operation of the OpenAPI document but the health checks, with ids filled in."""
    return [
        (method.upper(), re.sub(r"\{[^}]+\}", "1", path))
        for path, item in spec["paths"].items()
        for method in item
        if method in ("get", "post", "put", "patch", "delete", "head") and path not in PUBLIC
    ]


# Where a client might put the key other than in 'Authorization: Bearer': all ignored (401).
_MISPLACED_KEYS: dict[str, dict[str, Any]] = {
    "?api_key=": {"params": {"api_key": KEY_A}},
    "?key=&token=&access_token=": {"params": {"key": KEY_A, "token": KEY_A, "access_token": KEY_A}},
    "Basic key:": {"headers": {"Authorization": "Basic " + base64.b64encode(f"{KEY_A}:".encode()).decode()}},
    "Basic :key": {"headers": {"Authorization": "Basic " + base64.b64encode(f":{KEY_A}".encode()).decode()}},
    "Basic key:key": {
        "headers": {"Authorization": "Basic " + base64.b64encode(f"{KEY_A}:{KEY_A}".encode()).decode()}
    },
    "bare key": {"headers": {"Authorization": KEY_A}},
    "X-API-Key": {"headers": {"X-API-Key": KEY_A}},
    "cookies": {
        "headers": {"Cookie": f"api_key={KEY_A}; key={KEY_A}; token={KEY_A}; Authorization=Bearer%20{KEY_A}"}
    },
}


@pytest.mark.system
def test_a1_a_key_anywhere_but_the_bearer_header_is_ignored_on_every_operation(server: ApiServer):
    """A1: every OpenAPI operation with the key in the query, as Basic auth, bare, in another
    header or as a cookie is a 401 asking for a bearer key; the health checks stay open and
    /metrics needs a key."""
    with server.client() as c:
        operations = _operations(c.get("/openapi.json").json())
        assert len(operations) >= 45, operations  # the review counted 49
        tried = 0
        for method, url in operations:
            for where, placed in _MISPLACED_KEYS.items():
                r = c.request(method, url, **placed)
                assert r.status_code == 401, (method, url, where, r.status_code, r.text[:200])
                assert r.headers["www-authenticate"] == "Bearer", (method, url, where)
                tried += 1
        assert tried == len(operations) * len(_MISPLACED_KEYS)
        for path in PUBLIC:
            assert c.get(path).status_code == 200, path
        assert c.get("/metrics").status_code == 401
        assert c.get("/metrics", params={"api_key": KEY_A}).status_code == 401
        assert c.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 403
        assert c.get("/metrics", headers=A).status_code == 200


def _raw_get(port: int, target: str) -> tuple[int, bytes]:
    """GET ``target`` exactly as written (no client normalises it): the status and the body."""
    with socket.create_connection(("127.0.0.1", port)) as conn:
        conn.settimeout(30)  # bounds a hang of the test, not the server's speed
        conn.sendall(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


# The review's forms, and those that would reach real files from the static directories
# (app/console/static and app/docs_ui/static: app/main.py is two or three levels up).
TRAVERSALS = [
    "/console/../app/main.py",
    "/console/%2e%2e/app/main.py",
    "/console/..%2fapp/main.py",
    "/console/../../main.py",
    "/console/../__init__.py",
    "/console/%2e%2e/%2e%2e/main.py",
    "/console/..%2f..%2fmain.py",
    "/console/%2e%2e%2f%2e%2e%2fmain.py",
    "/console/..%5c..%5cmain.py",
    "/console/....//....//main.py",
    "/console/%252e%252e/%252e%252e/main.py",
    "/console//etc/passwd",
    "/console/../../../../../../etc/passwd",
    "/docs/assets/../../main.py",
    "/docs/assets/%2e%2e/__init__.py",
    "/docs/assets/..%2f..%2fmain.py",
    "/../app/main.py",
    "/%2e%2e/app/main.py",
]


@pytest.mark.system
def test_a4_the_public_surface_is_as_documented_and_static_files_do_not_traverse(server: ApiServer):
    """A4: without a key the console, /docs and /openapi.json answer and /metrics does not; no
    path, raw or encoded, reaches a file outside the static directories (404, and no source or
    system file in any answer)."""
    for path in ("/", "/console/js/main.js", "/docs", "/openapi.json"):
        status, body = _raw_get(server.port, path)
        assert status == 200 and body, path
    assert _raw_get(server.port, "/metrics")[0] == 401
    for target in TRAVERSALS:
        status, body = _raw_get(server.port, target)
        assert status in (400, 404), (target, status, body[:200])
        assert b"create_app" not in body and b"import " not in body and b"root:" not in body, target


def test_a5_one_idempotency_key_from_two_keys_makes_two_jobs(keyed: TestClient):
    """A5: the same Idempotency-Key sent by key A and by key B makes two separate jobs, and A's
    retry is A's first job, replayed."""
    keyed.headers.update(A)
    ds = upload(keyed, b"1 1:1\n-1 2:1\n1 1:2\n", "t.svm").json()["id"]
    keyed.headers.clear()
    body = {"dataset_id": ds, "params": {"n_iter": 10}}
    ja = create_job(keyed, headers={**A, "Idempotency-Key": "k"}, **body)
    jb = create_job(keyed, headers={**B, "Idempotency-Key": "k"}, **body)
    assert ja.status_code == jb.status_code == 202
    assert ja.json()["id"] != jb.json()["id"]
    assert "idempotent-replayed" not in jb.headers
    again = create_job(keyed, headers={**A, "Idempotency-Key": "k"}, **body)
    assert again.status_code == 202 and again.json()["id"] == ja.json()["id"]
    assert again.headers["idempotent-replayed"] == "true"


def test_a6_a_cors_preflight_from_another_site_gets_no_cors_headers(keyed: TestClient):
    """A6: a preflight from https://evil.example (with or without a key) and the request itself
    get no Access-Control-Allow-* header: a page of another site cannot read the API."""
    preflight = {
        "Origin": "https://evil.example",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type",
    }
    for path in ("/v1/jobs", "/v1/datasets", "/openapi.json", "/"):
        for headers in (preflight, {**preflight, **A}):
            r = keyed.options(path, headers=headers)
            assert r.status_code in (401, 405), (path, r.status_code)
            assert not [h for h in r.headers if h.lower().startswith("access-control-")], (path, r.headers)
    r = keyed.get("/v1/jobs", headers={**A, "Origin": "https://evil.example"})
    assert r.status_code == 200
    assert not [h for h in r.headers if h.lower().startswith("access-control-")], r.headers
