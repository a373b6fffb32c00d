"""Requests that used to be 500s, the no-keys rules (loopback only, own Host, same origin), and
who may read /metrics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from tests.cluster.harness import tiny_svmlight
from tests.helpers import assert_problem, make_settings, upload, wait_for

KEY = "k3y"


# -- item 7: each of these was a 500 ----------------------------------------------------------


@pytest.mark.slow
def test_a_5000_digit_number_in_a_prediction_is_a_422(client: TestClient):
    ds = upload(client, tiny_svmlight(), "t.svm").json()["id"]
    job = wait_for(
        client, client.post("/v1/jobs", json={"dataset_id": ds, "params": {"n_iter": 300}}).json()["id"]
    )
    body = b'{"instances": [[' + b"1" * 5000 + b"]]}"
    r = client.post(
        f"/v1/models/{job['model_id']}/predict", content=body, headers={"content-type": "application/json"}
    )
    assert "digits" in assert_problem(r, 422, "body")["detail"]


def test_params_nested_400_deep_are_a_400(client: TestClient):
    ds = upload(client, tiny_svmlight(), "t.svm").json()["id"]
    params = "1"
    for _ in range(400):
        params = '{"a": ' + params + "}"
    body = f'{{"dataset_id": {ds}, "params": {params}}}'
    r = client.post("/v1/jobs", content=body, headers={"content-type": "application/json"})
    assert "PGS_MAX_JSON_DEPTH" in assert_problem(r, 400)["detail"]
    # Brackets inside strings are not structure; a study's plain body is unaffected.
    r = client.post("/v1/jobs", json={"dataset_id": ds, "params": {"loss": "[[[[" * 50}})
    assert_problem(r, 422, "body.params")


# -- item 11: without API keys: loopback only, own Host, same origin --------------------------


def _raw_request(
    client: TestClient,
    server: tuple[str, int],
    host: bytes = b"127.0.0.1:8000",
    method: str = "GET",
    path: str = "/v1/datasets",
    extra: list[tuple[bytes, bytes]] | None = None,
) -> tuple[int, dict[str, Any]]:
    """Call the app with a connection's own address (TestClient always says "testserver")."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "server": server,
        "client": ("203.0.113.7", 50000),
        "headers": [(b"host", host), *(extra or [])],
    }
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    assert client.portal is not None
    client.portal.call(client.app, scope, receive, send)
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return sent[0]["status"], json.loads(body)


def test_without_keys_a_non_loopback_connection_is_refused(tmp_path: Path):
    # `uvicorn app.main:create_app --factory --host 0.0.0.0` served everyone without a key.
    with TestClient(create_app(make_settings(tmp_path))) as c:
        status, body = _raw_request(c, ("192.0.2.10", 8000), host=b"192.0.2.10:8000")
        assert status == 403 and "PGS_API_KEYS" in body["detail"], body
        assert _raw_request(c, ("127.0.0.1", 8000))[0] == 200
        assert _raw_request(c, ("::1", 8000), host=b"[::1]:8000")[0] == 200
    with TestClient(create_app(make_settings(tmp_path, api_keys=KEY))) as c:
        assert _raw_request(c, ("192.0.2.10", 8000), host=b"192.0.2.10:8000")[0] == 401
    with TestClient(create_app(make_settings(tmp_path, allow_anonymous=True))) as c:
        assert _raw_request(c, ("192.0.2.10", 8000), host=b"192.0.2.10:8000")[0] == 200


def test_without_keys_a_foreign_host_header_is_refused(tmp_path: Path):
    # DNS rebinding: attacker.example resolves to 127.0.0.1 and a browser sends its name.
    with TestClient(create_app(make_settings(tmp_path))) as c:
        status, body = _raw_request(c, ("127.0.0.1", 8000), host=b"attacker.example:8000")
        assert status == 400 and "PGS_ALLOWED_HOSTS" in body["detail"], body
        for ok in (b"localhost:8000", b"127.0.0.1", b"LOCALHOST"):
            assert _raw_request(c, ("127.0.0.1", 8000), host=ok)[0] == 200, ok
    with TestClient(create_app(make_settings(tmp_path, allowed_hosts="pgs.internal"))) as c:
        assert _raw_request(c, ("127.0.0.1", 8000), host=b"pgs.internal:8000")[0] == 200
    with TestClient(create_app(make_settings(tmp_path, api_keys=KEY))) as c:
        # With keys a page cannot send one: the Host is not checked.
        assert _raw_request(c, ("127.0.0.1", 8000), host=b"attacker.example")[0] == 401


@pytest.mark.parametrize(
    "headers",
    [
        [(b"origin", b"http://attacker.example")],
        [(b"origin", b"null")],
        [(b"sec-fetch-site", b"cross-site")],
        [(b"origin", b"http://127.0.0.1:3000"), (b"sec-fetch-site", b"same-site")],
    ],
)
def test_without_keys_a_cross_origin_unsafe_request_is_refused(
    tmp_path: Path, headers: list[tuple[bytes, bytes]]
):
    with TestClient(create_app(make_settings(tmp_path))) as c:
        status, body = _raw_request(c, ("127.0.0.1", 8000), method="POST", extra=headers)
        assert status == 403 and "origin" in body["detail"], body
        # Reading is not refused (the browser keeps a cross-origin answer from the page), nor
        # is a same-origin request or a script's (no Origin, no Sec-Fetch-Site).
        assert _raw_request(c, ("127.0.0.1", 8000), extra=headers)[0] == 200
        same = [(b"origin", b"http://127.0.0.1:8000"), (b"sec-fetch-site", b"same-origin")]
        assert _raw_request(c, ("127.0.0.1", 8000), method="POST", extra=same)[0] == 415
        assert _raw_request(c, ("127.0.0.1", 8000), method="POST")[0] == 415


def test_a_real_form_post_from_another_site_uploads_nothing(client: TestClient):
    r = client.post(
        "/v1/datasets",
        files={"file": ("x.svm", b"1 1:1\n-1 2:1\n")},
        headers={"Origin": "https://attacker.example", "Sec-Fetch-Site": "cross-site"},
    )
    assert_problem(r, 403)
    assert client.get("/v1/datasets").json()["items"] == []


# -- item 13: /metrics exposure is a setting --------------------------------------------------


@pytest.mark.parametrize(
    ("access", "keys", "without_key", "with_key"),
    [
        ("key", KEY, 401, 200),
        ("key", "", 200, 200),
        ("public", KEY, 200, 200),
        ("off", KEY, 404, 404),
    ],
)
def test_metrics_exposure_follows_the_setting(
    tmp_path: Path, access: str, keys: str, without_key: int, with_key: int
):
    settings = make_settings(tmp_path, metrics_access=access, api_keys=keys)
    with TestClient(create_app(settings)) as c:
        assert c.get("/metrics").status_code == without_key
        assert c.get("/metrics", headers={"Authorization": f"Bearer {KEY}"}).status_code == with_key
