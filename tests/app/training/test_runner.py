"""The runner, its worker processes and the background services around them (app/training/runner.py,
app/training/worker.py, app/background/): nothing is lost through a graceful restart, a killed server, a
killed worker, and giving up on a job that keeps losing its worker."""

from __future__ import annotations

import os
import signal
import sqlite3
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from app.background.pool_supervisor import PoolSupervisor
from app.core.config import Settings
from app.db.engine import make_engine, make_session_factory, transaction
from app.db.tables import Job
from app.main import create_app
from app.training.pool import WorkerDied
from app.training.runner import JobRunner
from tests.cluster.harness import ApiServer, poll_job, wait_until
from tests.helpers import JOB_TIMEOUT_S, create_job, make_settings, metric, poll, upload, wait_for

# Servers and workers stopped and killed, seconds to half a minute each: out of make test-fast.
pytestmark = pytest.mark.system

LONG = {"loss": "logistic", "sigma": 1e-4, "n_iter": 10**9, "random_state": 0}


def _jobs_in_db(db: Path) -> dict[int, tuple[str, int]]:
    with sqlite3.connect(db) as conn:
        return {i: (s, a) for i, s, a in conn.execute("SELECT id, status, attempts FROM jobs")}


# Long enough that the shutdown stops the running job before its budget ends it, even when the
# other process of a parallel run keeps both cores busy.
SHUTDOWN_BUDGET_S = 10


def test_graceful_shutdown_requeues_and_the_next_start_finishes(tmp_path: Path, data_dir: Path):
    settings = make_settings(tmp_path)
    with TestClient(create_app(settings)) as c:
        ds = upload(c, data_dir / "heart_scale.svm").json()["id"]
        running = create_job(c, dataset_id=ds, params=LONG, time_budget_s=SHUTDOWN_BUDGET_S).json()["id"]
        queued = create_job(c, dataset_id=ds, params={"n_iter": 500, "random_state": 0}).json()["id"]
        wait_for(c, running, lambda j: (j["progress"]["iteration"] or 0) > 0)
    # The running job was stopped and put back, not counted as an attempt; nothing was lost.
    assert _jobs_in_db(settings.data_dir / "pgs.db") == {running: ("queued", 0), queued: ("queued", 0)}
    with TestClient(create_app(settings)) as c:
        first, second = wait_for(c, running), wait_for(c, queued)
    assert first["status"] == second["status"] == "succeeded"
    assert first["stop_reason"] == "time_budget" and first["attempts"] == 1
    # The budget is wall-clock time as well: the solver's own clock stays within it.
    assert 0 < first["metrics"]["solver_seconds"] <= SHUTDOWN_BUDGET_S


def _upload_heart(c: httpx.Client, data_dir: Path) -> int:
    """heart_scale uploaded to a real server (ApiServer); the data set's id."""
    files = {"file": ("h.svm", (data_dir / "heart_scale.svm").read_bytes())}
    return int(c.post("/v1/datasets", files=files).json()["id"])


def test_a_long_poll_answers_when_the_server_begins_to_stop(tmp_path: Path, data_dir: Path):
    server = ApiServer(tmp_path / "var", tmp_path / "api.log", PGS_WORKERS="1").start()
    wait_s = 30
    try:
        with server.client() as c:
            ds = _upload_heart(c, data_dir)
            job = c.post("/v1/jobs", json={"dataset_id": ds, "params": LONG, "time_budget_s": 600}).json()[
                "id"
            ]
            poll_job(c, job, lambda j: j["status"] == "running", timeout=JOB_TIMEOUT_S)
        with ThreadPoolExecutor(1) as pool, server.client() as c:
            c.get("/healthz")  # the connection is open: the poll below only has to be sent
            started = time.monotonic()
            waiting = pool.submit(lambda: c.get(f"/v1/jobs/{job}", params={"wait": wait_s}))
            with server.client() as probe:
                wait_until(lambda: metric(probe, "pgs_long_polls_waiting") == 1, wait_s, "the poll waiting")
            assert server.stop()
            answer = waiting.result()
            waited = time.monotonic() - started
    finally:
        server.kill()
    # The server stopped without waiting for the poll's 30 s, and the poll got the job as it was.
    assert answer.status_code == 200 and answer.json()["status"] == "running"
    assert waited < wait_s, waited
    assert _jobs_in_db(tmp_path / "var" / "pgs.db")[job][0] == "queued"  # back for the next start


def test_killed_server_restart_finishes_running_and_queued_jobs(tmp_path: Path, data_dir: Path):
    server = ApiServer(tmp_path / "var", tmp_path / "api.log", PGS_WORKERS="1").start()
    try:
        with server.client() as c:
            ds = _upload_heart(c, data_dir)
            running = c.post("/v1/jobs", json={"dataset_id": ds, "params": LONG, "time_budget_s": 3}).json()[
                "id"
            ]
            queued = c.post("/v1/jobs", json={"dataset_id": ds, "params": {"n_iter": 500}}).json()["id"]
            poll_job(c, running, lambda j: (j["progress"]["iteration"] or 0) > 0, timeout=JOB_TIMEOUT_S)
    finally:
        server.kill()
    assert _jobs_in_db(tmp_path / "var" / "pgs.db") == {running: ("running", 1), queued: ("queued", 0)}

    server.start()
    try:
        with server.client() as c:
            first = poll_job(c, running, timeout=JOB_TIMEOUT_S)
            second = poll_job(c, queued, timeout=JOB_TIMEOUT_S)
    finally:
        server.stop()
    assert first["status"] == "succeeded" and first["attempts"] == 2, first
    assert first["stop_reason"] == "time_budget"
    assert second["status"] == "succeeded" and second["attempts"] == 1, second


def test_killed_worker_is_replaced_and_the_job_rerun(tmp_path: Path, data_dir: Path):
    settings = make_settings(tmp_path)
    with TestClient(create_app(settings)) as c:
        ds = upload(c, data_dir / "heart_scale.svm").json()["id"]
        job_id = create_job(c, dataset_id=ds, params=LONG, time_budget_s=2).json()["id"]
        # Killed as soon as a worker holds it: its first progress write may come late under
        # load, after the 2 s budget has already ended the run.
        wait_for(c, job_id, lambda j: j["status"] != "queued")
        with transaction(c.app.state.session_factory) as s:  # type: ignore[attr-defined]
            pid = s.get(Job, job_id).worker_pid
        os.kill(pid, signal.SIGKILL)
        job = wait_for(c, job_id)
        assert job["status"] == "succeeded" and job["attempts"] == 2, job
        # The replacement pool serves new jobs and the service is ready again.
        other = wait_for(c, create_job(c, dataset_id=ds, params={"n_iter": 100}).json()["id"])
        assert other["status"] == "succeeded"
        assert c.get("/readyz").status_code == 200


def _running_job(settings: Settings, dataset_id: int, **fields: Any) -> Job:
    """A job row left "running" by a run this app did not start (a crash, another process)."""
    factory = make_session_factory(make_engine(settings.database_url))
    with transaction(factory) as s:
        job = Job(
            status="running",
            solver="pgs",
            task="binary",
            dataset_id=dataset_id,
            params={},
            targets=[],
            **fields,
        )
        s.add(job)
    return job


@pytest.mark.parametrize(
    ("attempts", "cancel", "status"),
    [
        (2, False, "failed"),  # lost twice: give up with a reason
        (1, True, "cancelled"),  # the user asked to cancel before the crash
    ],
)
def test_startup_recovery_settles_lost_runs(tmp_path: Path, attempts: int, cancel: bool, status: str):
    settings = make_settings(tmp_path)
    with TestClient(create_app(settings)) as c:
        ds = upload(c, b"1 1:1\n-1 2:1\n", "tiny.svm").json()["id"]
    job = _running_job(settings, ds, attempts=attempts, cancel_requested=cancel)
    with TestClient(create_app(settings)) as c:
        body = c.get(f"/v1/jobs/{job.id}").json()
    assert body["status"] == status and body["finished_at"] is not None
    if status == "failed":
        assert "gave up after 2 attempt(s)" in body["error"]


@pytest.mark.parametrize(
    ("died", "after"),
    [
        # Killed by the graceful stop (its job outlasted the grace): back, not charged.
        (WorkerDied(4242, -signal.SIGKILL, stopped=True), ("queued", 0)),
        # Died by itself: the attempt is charged, and the job re-queued (one of two).
        (WorkerDied(4242, -signal.SIGKILL), ("queued", 1)),
        # Another process's worker holds the run (a duplicate dispatch): not this death's job.
        (WorkerDied(1111, -signal.SIGKILL), ("running", 1)),
    ],
    ids=["stopped", "killed", "other-run"],
)
def test_a_dead_workers_job_is_settled_by_who_ended_it(tmp_path: Path, died: WorkerDied, after: tuple):
    settings = make_settings(tmp_path)
    with TestClient(create_app(settings)) as c:
        ds = upload(c, b"1 1:1\n-1 2:1\n", "tiny.svm").json()["id"]
    factory = make_session_factory(make_engine(settings.database_url))
    job = _running_job(settings, ds, attempts=1, worker_pid=4242)
    future: Future[str] = Future()
    future.set_exception(died)
    runner = JobRunner(settings, order=sorted)  # not started: settle() only writes the database
    PoolSupervisor(runner, factory, settings).settle(job.id, future)
    assert _jobs_in_db(settings.data_dir / "pgs.db")[job.id] == after


def _worker_pid(c: TestClient, job_id: int) -> int:
    with transaction(c.app.state.session_factory) as s:  # type: ignore[attr-defined]
        pid = s.get(Job, job_id).worker_pid
    assert pid is not None
    return int(pid)


def test_a_job_waiting_for_a_worker_loses_no_attempt_when_one_dies(tmp_path: Path, data_dir: Path):
    # One worker: the second job waits in the pool's queue when the first job's worker is killed.
    # Only the job the dead worker ran is charged, even with a single attempt allowed.
    # (tests/security/test_worker_faults.py: a job running on another worker goes on.)
    settings = make_settings(tmp_path, max_attempts=1, prestart_workers=True)
    with TestClient(create_app(settings)) as c:
        poll(c, "/readyz", lambda body: body.get("status") == "ready")
        ds = upload(c, data_dir / "heart_scale.svm").json()["id"]
        victim = create_job(c, dataset_id=ds, params=LONG, time_budget_s=600).json()["id"]
        waiting = create_job(c, dataset_id=ds, params=LONG, time_budget_s=1).json()["id"]
        wait_for(c, victim, lambda j: (j["progress"]["iteration"] or 0) > 0)
        assert c.get(f"/v1/jobs/{waiting}").json()["status"] == "queued"
        os.kill(_worker_pid(c, victim), signal.SIGKILL)
        failed, survived = wait_for(c, victim), wait_for(c, waiting)
    assert failed["status"] == "failed" and "gave up after 1 attempt(s)" in failed["error"]
    assert survived["status"] == "succeeded" and survived["attempts"] == 1, survived


def test_the_pool_is_replaced_after_a_jobs_last_attempt_dies(tmp_path: Path, data_dir: Path):
    # Nothing is resubmitted after the last attempt: the pool must be replaced anyway, or
    # /readyz (the container's health check) stays 503 until the next job arrives.
    settings = make_settings(tmp_path, max_attempts=1)
    with TestClient(create_app(settings)) as c:
        ds = upload(c, data_dir / "heart_scale.svm").json()["id"]
        job_id = create_job(c, dataset_id=ds, params=LONG, time_budget_s=600).json()["id"]
        wait_for(c, job_id, lambda j: (j["progress"]["iteration"] or 0) > 0)
        os.kill(_worker_pid(c, job_id), signal.SIGKILL)
        assert wait_for(c, job_id)["status"] == "failed"
        poll(c, "/readyz", lambda body: body.get("status") == "ready")


def test_a_second_server_on_the_same_data_dir_stops_before_recovery(tmp_path: Path, data_dir: Path):
    first = ApiServer(tmp_path / "var", tmp_path / "api-1.log", PGS_WORKERS="1").start()
    second = ApiServer(tmp_path / "var", tmp_path / "api-2.log", PGS_WORKERS="1")
    try:
        with first.client() as c:
            ds = _upload_heart(c, data_dir)
            job_id = c.post("/v1/jobs", json={"dataset_id": ds, "params": LONG, "time_budget_s": 3}).json()[
                "id"
            ]
            poll_job(c, job_id, lambda j: (j["progress"]["iteration"] or 0) > 0, timeout=JOB_TIMEOUT_S)
            with pytest.raises(AssertionError, match="in use by another server process"):
                second.start()
            # The first server's run was not taken for lost: it finishes on its first attempt.
            job = poll_job(c, job_id, timeout=JOB_TIMEOUT_S)
        assert job["status"] == "succeeded" and job["attempts"] == 1 and job["error"] is None
    finally:
        second.stop()
        first.stop()
