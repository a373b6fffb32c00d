"""Nothing is lost: graceful restarts, a killed server, a killed worker, and giving up."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from app.core.db import make_engine, make_session_factory, transaction
from app.main import create_app
from app.models import Job

from .conftest import JOB_TIMEOUT_S, REPO, create_job, make_settings, upload, wait_for

LONG = {"loss": "logistic", "sigma": 1e-4, "n_iter": 10**9, "random_state": 0}


def _jobs_in_db(db: Path) -> dict[int, tuple[str, int]]:
    with sqlite3.connect(db) as conn:
        return {i: (s, a) for i, s, a in conn.execute("SELECT id, status, attempts FROM jobs")}


def test_graceful_shutdown_requeues_and_the_next_start_finishes(tmp_path: Path, data_dir: Path):
    settings = make_settings(tmp_path)
    with TestClient(create_app(settings)) as c:
        ds = upload(c, data_dir / "heart_scale.svm").json()["id"]
        running = create_job(c, dataset_id=ds, params=LONG, time_budget_s=2).json()["id"]
        queued = create_job(c, dataset_id=ds, params={"n_iter": 500, "random_state": 0}).json()["id"]
        wait_for(c, running, lambda j: (j["progress"]["iteration"] or 0) > 0)
    # The running job was stopped and put back, not counted as an attempt; nothing was lost.
    assert _jobs_in_db(settings.data_dir / "pgs.db") == {running: ("queued", 0),
                                                          queued: ("queued", 0)}
    with TestClient(create_app(settings)) as c:
        first, second = wait_for(c, running), wait_for(c, queued)
    assert first["status"] == second["status"] == "succeeded"
    assert first["stop_reason"] == "time_budget" and first["attempts"] == 1
    assert first["metrics"]["solver_seconds"] >= 2


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(env: dict[str, str]) -> subprocess.Popen[bytes]:
    # A session of its own: killpg takes down uvicorn and every worker, like a container kill.
    return subprocess.Popen([sys.executable, "-m", "app"], cwd=REPO, env=env,
                            start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def _wait_ready(base: str, proc: subprocess.Popen[bytes], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the server exited"
        try:
            if httpx.get(f"{base}/readyz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise AssertionError("server did not become ready")


def _poll(client: httpx.Client, job_id: int, done: Any) -> dict[str, Any]:
    deadline = time.monotonic() + JOB_TIMEOUT_S
    while time.monotonic() < deadline:
        job = client.get(f"/v1/jobs/{job_id}").json()
        if done(job):
            return job
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} stuck: {job}")


def test_killed_server_restart_finishes_running_and_queued_jobs(tmp_path: Path, data_dir: Path):
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "PGS_DATA_DIR": str(tmp_path / "var"), "PGS_PORT": str(port),
           "PGS_HOST": "127.0.0.1", "PGS_WORKERS": "1", "PGS_PROGRESS_INTERVAL_S": "0.1",
           "PGS_API_KEYS": "", "PGS_LOG_LEVEL": "warning"}
    proc = _serve(env)
    try:
        _wait_ready(base, proc)
        with httpx.Client(base_url=base, timeout=30) as c:
            files = {"file": ("h.svm", (data_dir / "heart_scale.svm").read_bytes())}
            ds = c.post("/v1/datasets", files=files).json()["id"]
            running = c.post("/v1/jobs", json={"dataset_id": ds, "params": LONG,
                                               "time_budget_s": 3}).json()["id"]
            queued = c.post("/v1/jobs", json={"dataset_id": ds, "params": {"n_iter": 500}}
                            ).json()["id"]
            _poll(c, running, lambda j: (j["progress"]["iteration"] or 0) > 0)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert _jobs_in_db(tmp_path / "var" / "pgs.db") == {running: ("running", 1),
                                                        queued: ("queued", 0)}

    proc = _serve(env)
    try:
        _wait_ready(base, proc)
        with httpx.Client(base_url=base, timeout=30) as c:
            done = lambda j: j["status"] in ("succeeded", "failed", "cancelled")  # noqa: E731
            first, second = _poll(c, running, done), _poll(c, queued, done)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    assert first["status"] == "succeeded" and first["attempts"] == 2, first
    assert first["stop_reason"] == "time_budget"
    assert second["status"] == "succeeded" and second["attempts"] == 1, second


def test_killed_worker_is_replaced_and_the_job_rerun(tmp_path: Path, data_dir: Path):
    settings = make_settings(tmp_path)
    with TestClient(create_app(settings)) as c:
        ds = upload(c, data_dir / "heart_scale.svm").json()["id"]
        job_id = create_job(c, dataset_id=ds, params=LONG, time_budget_s=2).json()["id"]
        wait_for(c, job_id, lambda j: (j["progress"]["iteration"] or 0) > 0)
        with transaction(c.app.state.session_factory) as s:  # type: ignore[attr-defined]
            pid = s.get(Job, job_id).worker_pid
        os.kill(pid, signal.SIGKILL)
        job = wait_for(c, job_id)
        assert job["status"] == "succeeded" and job["attempts"] == 2, job
        # The replacement pool serves new jobs and the service is ready again.
        other = wait_for(c, create_job(c, dataset_id=ds, params={"n_iter": 100}).json()["id"])
        assert other["status"] == "succeeded"
        assert c.get("/readyz").status_code == 200


@pytest.mark.parametrize(("attempts", "cancel", "status"), [
    (2, False, "failed"),     # lost twice: give up with a reason
    (1, True, "cancelled"),   # the user asked to cancel before the crash
])
def test_startup_recovery_settles_lost_runs(tmp_path: Path, attempts: int, cancel: bool,
                                            status: str):
    settings = make_settings(tmp_path)
    with TestClient(create_app(settings)) as c:
        ds = upload(c, b"1 1:1\n-1 2:1\n", "tiny.svm").json()["id"]
    factory = make_session_factory(make_engine(settings.database_url))
    with transaction(factory) as s:
        job = Job(status="running", solver="pgs", task="binary", dataset_id=ds, params={},
                  targets=[], attempts=attempts, cancel_requested=cancel)
        s.add(job)
    with TestClient(create_app(settings)) as c:
        body = c.get(f"/v1/jobs/{job.id}").json()
    assert body["status"] == status and body["finished_at"] is not None
    if status == "failed":
        assert "gave up after 2 attempt(s)" in body["error"]
