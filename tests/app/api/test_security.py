"""API keys: 401 without, 403 with an unknown key; health is open; no anonymous network bind
(one Idempotency-Key from two keys: tests/security/test_access_attacks.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.core.security import BindRefused, check_bind, is_loopback
from app.main import create_app
from tests.helpers import REPO, assert_problem, make_settings


@pytest.fixture
def keyed(tmp_path: Path):
    with TestClient(create_app(make_settings(tmp_path, api_keys="alpha-key, beta-key"))) as c:
        yield c


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/datasets"),
        ("POST", "/v1/datasets"),
        ("GET", "/v1/datasets/1"),
        ("DELETE", "/v1/datasets/1"),
        ("GET", "/v1/jobs"),
        ("POST", "/v1/jobs"),
        ("GET", "/v1/jobs/1"),
        ("POST", "/v1/jobs/1/cancel"),
        ("GET", "/v1/jobs/1/trace"),
        ("GET", "/v1/models"),
        ("GET", "/v1/models/1"),
        ("DELETE", "/v1/models/1"),
        ("POST", "/v1/models/1/predict"),
    ],
)
def test_every_api_route_needs_a_key(keyed: TestClient, method: str, path: str):
    r = keyed.request(method, path)
    assert_problem(r, 401)
    assert r.headers["www-authenticate"] == "Bearer"
    assert_problem(keyed.request(method, path, headers={"Authorization": "Bearer wrong"}), 403)
    assert_problem(keyed.request(method, path, headers={"Authorization": "Basic YTpi"}), 401)
    ok = keyed.request(method, path, headers={"Authorization": "Bearer beta-key"})
    assert ok.status_code not in (401, 403)


def test_health_is_open_and_metrics_need_a_key(keyed: TestClient):
    assert keyed.get("/healthz").status_code == 200
    assert keyed.get("/readyz").status_code == 200
    # PGS_METRICS_ACCESS=key (the default); tests/app/api/test_request_guards.py has the others.
    assert keyed.get("/metrics").status_code == 401
    assert keyed.get("/metrics", headers={"Authorization": "Bearer alpha-key"}).status_code == 200


def test_bind_rules(tmp_path: Path):
    for host in ("127.0.0.1", "127.8.9.10", "::1", "[::1]", "localhost"):
        assert is_loopback(host)
    for host in ("0.0.0.0", "::", "10.1.2.3", "example.org"):
        assert not is_loopback(host)
    check_bind(make_settings(tmp_path, host="127.0.0.1"))
    check_bind(make_settings(tmp_path, host="0.0.0.0", api_keys="k"))
    check_bind(make_settings(tmp_path, host="0.0.0.0", allow_anonymous=True))
    with pytest.raises(BindRefused, match="PGS_API_KEYS"):
        check_bind(make_settings(tmp_path, host="0.0.0.0"))


def test_server_refuses_to_start_on_a_public_address_without_keys(tmp_path: Path):
    env = {
        **os.environ,
        "PGS_HOST": "0.0.0.0",
        "PGS_API_KEYS": "",
        "PGS_ALLOW_ANONYMOUS": "0",
        "PGS_DATA_DIR": str(tmp_path / "var"),
    }
    done = subprocess.run([sys.executable, "-m", "app"], cwd=REPO, env=env, capture_output=True, timeout=60)
    assert done.returncode == 2
    assert b"refusing to listen on 0.0.0.0" in done.stderr
    assert not (tmp_path / "var").exists()  # refused before touching anything
