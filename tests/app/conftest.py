"""Fixtures for the service tests: a real app, a real SQLite file in tmp_path, the real pool."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.core.config import Settings
from app.main import create_app

REPO = Path(__file__).resolve().parents[2]
# Worker processes inherit this: compiled kernels are loaded, not rebuilt, in every test app.
os.environ.setdefault("NUMBA_CACHE_DIR", str(REPO / "var" / "numba-cache"))

PROBLEM = "application/problem+json"
# Generous: these bound a hang, they do not measure speed.
JOB_TIMEOUT_S = 180.0


def pytest_configure(config: pytest.Config) -> None:
    # Starlette's TestClient warns that it prefers a newer httpx; irrelevant to these tests.
    config.addinivalue_line("filterwarnings", "ignore:Using `httpx`:DeprecationWarning")


def make_settings(root: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "data_dir": root / "var",
        "workers": 1,
        "prestart_workers": False,
        "progress_interval_s": 0.1,
        "api_keys": "",
        "allow_anonymous": False,
    }
    values.update(overrides)
    return Settings(**values)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return make_settings(tmp_path)


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    """A fresh app and database per test; worker processes start only if a job is submitted."""
    with TestClient(create_app(settings)) as c:
        yield c


def upload(
    client: TestClient, content: bytes | Path, filename: str = "data.svm", **fields: str
) -> Any:
    data = content.read_bytes() if isinstance(content, Path) else content
    return client.post("/v1/datasets", files={"file": (filename, data)}, data=fields)


def create_job(client: TestClient, headers: dict[str, str] | None = None, **body: Any) -> Any:
    return client.post("/v1/jobs", json=body, headers=headers or {})


def wait_for(
    client: TestClient,
    job_id: int,
    done: Callable[[dict[str, Any]], bool] | None = None,
    timeout: float = JOB_TIMEOUT_S,
) -> dict[str, Any]:
    """Poll the job until ``done(job)`` (default: a terminal status)."""
    done = done or (lambda j: j["status"] in ("succeeded", "failed", "cancelled"))
    deadline = time.monotonic() + timeout
    while True:
        job = client.get(f"/v1/jobs/{job_id}").json()
        if done(job):
            return job
        if time.monotonic() > deadline:
            raise AssertionError(f"job {job_id} did not get there in {timeout} s: {job}")
        time.sleep(0.05)


def assert_problem(response: Any, status: int, field: str | None = None) -> dict[str, Any]:
    """An RFC 9457 body with the given status (and, for validation, an error naming ``field``)."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM), response.headers
    body = response.json()
    assert body["status"] == status
    assert body["title"] and body["type"] and body["detail"]
    if field is not None:
        fields = [e["field"] for e in body.get("errors", [])]
        assert any(f == field or f.startswith(field + ".") for f in fields), (field, body)
    return body
