"""/healthz, /readyz, /metrics, the OpenAPI document, and the problem+json catch-alls."""

from __future__ import annotations

import importlib.metadata
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from tests.cluster.harness import ApiServer
from tests.helpers import assert_problem, make_settings, upload


@pytest.mark.slow
def test_readiness_waits_for_the_prestarted_workers(tmp_path: Path):
    """Ready once a worker process has started and imported the solver: no kernel is compiled
    before (a job compiles what it needs), so the wait does not depend on the Numba cache."""
    with TestClient(create_app(make_settings(tmp_path, prestart_workers=True))) as c:
        assert c.get("/healthz").json()["status"] == "ok"
        deadline = time.monotonic() + 120
        while (r := c.get("/readyz")).status_code != 200:
            body = assert_problem(r, 503)
            assert "workers" in body["detail"]
            assert time.monotonic() < deadline, body
            time.sleep(0.1)
        checks = {"database": "ok", "store": "ok", "disk": "ok", "workers": "ok"}
        assert r.json() == {"status": "ready", "checks": checks}
    # After shutdown the pool is stopped: a late check says so.


def test_not_ready_below_the_free_space_the_settings_ask_for(tmp_path: Path):
    """Attack F5: a full disk answered 507 to every write while /readyz said ready."""
    free = shutil.disk_usage(tmp_path).free
    with TestClient(create_app(make_settings(tmp_path, min_free_bytes=free * 2))) as c:
        body = assert_problem(c.get("/readyz"), 503)
        assert "disk:" in body["detail"] and "PGS_MIN_FREE_BYTES" in body["detail"]
    with TestClient(create_app(make_settings(tmp_path, min_free_bytes=0))) as c:
        r = c.get("/readyz")  # 503 only while the pool starts (prestart off here), never for disk
        assert (
            r.json()["checks"]["disk"] == "ok" if r.status_code == 200 else "disk:" not in r.json()["detail"]
        )


def test_healthz_and_the_openapi_document_show_the_installed_version(client: TestClient):
    """The version pyproject.toml declares, as pip installed it: not a second copy in the code."""
    installed = importlib.metadata.version("pgs-solver")
    assert client.get("/healthz").json() == {"status": "ok", "version": installed}
    assert client.get("/openapi.json").json()["info"]["version"] == installed


def test_metrics_count_requests_by_route_template_and_jobs_by_status(client: TestClient):
    for _ in range(3):
        client.get("/v1/datasets/12345")
    upload(client, b"1 1:1\n-1 2:1\n", "t.svm")
    text = client.get("/metrics").text
    assert 'pgs_http_requests_total{method="GET",route="/v1/datasets/{dataset_id}",status="404"} 3.0' in text
    assert 'pgs_http_requests_total{method="POST",route="/v1/datasets",status="201"} 1.0' in text
    bucket = 'le="0.25",method="GET",route="/v1/datasets/{dataset_id}"'
    assert f"pgs_http_request_duration_seconds_bucket{{{bucket}}}" in text
    assert 'pgs_jobs{status="queued"} 0.0' in text
    assert "pgs_queue_depth 0.0" in text and "pgs_workers 1.0" in text
    # Unknown paths share one label instead of one per path.
    client.get("/no/such/path/1")
    client.get("/no/such/path/2")
    assert 'route="unmatched",status="404"} 2.0' in client.get("/metrics").text


def test_openapi_and_docs(client: TestClient):
    spec = client.get("/openapi.json").json()
    assert {
        "/v1/datasets",
        "/v1/jobs/{job_id}/cancel",
        "/v1/models/{model_id}/predict",
        "/healthz",
        "/readyz",
        "/metrics",
    } <= set(spec["paths"])
    predict = spec["paths"]["/v1/models/{model_id}/predict"]["post"]["requestBody"]["content"]
    assert {"application/json", "text/plain"} <= set(predict)
    upload_body = spec["paths"]["/v1/datasets"]["post"]["requestBody"]["content"]
    assert "file" in upload_body["multipart/form-data"]["schema"]["properties"]
    assert client.get("/docs").status_code == 200


def test_routing_errors_are_problems(client: TestClient):
    assert_problem(client.get("/v1/nothing"), 404)
    assert_problem(client.put("/v1/datasets"), 405)
    assert_problem(client.get("/v1/datasets/abc"), 422, "path.dataset_id")
    assert_problem(client.get("/v1/datasets/0"), 422, "path.dataset_id")


@pytest.mark.system
def test_a_ready_server_has_its_parser_process_before_the_first_upload(tmp_path: Path):
    """The forkserver every upload's parse forks from starts with the service (a fresh server's
    first upload waited seconds for it): it is there once /readyz answers, before any upload."""
    server = ApiServer(tmp_path / "var", tmp_path / "api.log").start()
    try:
        children = subprocess.run(
            ["pgrep", "-P", str(server.proc.pid), "-f", "forkserver"], capture_output=True, text=True
        ).stdout.split()
        assert children, (tmp_path / "api.log").read_text()[-2000:]
    finally:
        server.stop()
