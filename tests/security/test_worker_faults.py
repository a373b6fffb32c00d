"""Faults of the training worker processes, replayed against a real server (``python -m app``,
SQLite, the local pool): attack rows F1, F2 and F3 of the security review.

* F1: ``kill -9`` of the worker running a job: that job is re-run, then failed, under the
  attempt rules; a job running at the same time on the other worker goes on undisturbed (same
  run, same process, one attempt), and ``/readyz`` stays ready.
* F2: ``kill -9`` (and SIGTERM) of the API process alone, mid-job: within seconds no process of
  the service is left, and after a restart the job finishes and nothing is lost.
* F3: the same kill with idle workers that have run jobs: no process is left behind.

Only the API's pid is signalled, never its process group: what must end the workers, the
forkserver and multiprocessing's resource tracker is the API's death itself. The server runs
in a session of its own, so every process it started, however reparented, carries its session
id: that is what the tests look for.
"""

from __future__ import annotations

import os
import signal
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.cluster.harness import FINAL, ApiServer, poll_job, tiny_svmlight, wait_until

pytestmark = pytest.mark.system

# A fit that runs until its time budget (each job gives its own).
LONG = {"loss": "logistic", "sigma": 1e-4, "n_iter": 10**9, "random_state": 0}
# A kill must end the service's processes within this (they end in about a second; the margin
# is for a loaded machine).
GONE_WITHIN_S = 10.0
# The bystander must still be running when the victim's replacement worker has started and
# iterates: on a machine loaded by a parallel run, starting a worker process takes many seconds.
BYSTANDER_BUDGET_S = 40


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ApiServer]:
    api = ApiServer(tmp_path / "var", tmp_path / "api.log", PGS_WORKERS="2")
    yield api
    api.kill()


def _db(server: ApiServer) -> Path:
    return Path(server.env["PGS_DATA_DIR"]) / "pgs.db"


def _run_of(server: ApiServer, job_id: int) -> tuple[int, int | None, str | None]:
    """(attempts, worker pid, started_at) of a job, from the database."""
    with sqlite3.connect(_db(server)) as conn:
        row = conn.execute("SELECT attempts, worker_pid, started_at FROM jobs WHERE id = ?", (job_id,))
        attempts, pid, started_at = row.fetchone()
    return attempts, pid, started_at


def _job(c: httpx.Client, ds: int, budget_s: float) -> int:
    body = {"dataset_id": ds, "params": LONG, "time_budget_s": budget_s}
    return int(c.post("/v1/jobs", json=body).json()["id"])


def _iterating(c: httpx.Client, job_id: int, attempt: int = 1) -> dict[str, Any]:
    return poll_job(
        c,
        job_id,
        lambda j: (
            j["status"] in FINAL
            or (
                j["status"] == "running"
                and j["attempts"] == attempt
                and (j["progress"]["iteration"] or 0) > 0
            )
        ),
    )


def _session(sid: int) -> dict[int, str]:
    """The live (not zombie) processes of session ``sid``: pid -> command line."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue  # it ended meanwhile
        if int(stat[3]) == sid and stat[0] != "Z":
            found[int(entry.name)] = cmdline
    return found


def _signal_api_alone(server: ApiServer, sig: int) -> dict[int, str]:
    """Signal the API process (not its group); returns the processes the service had."""
    assert server.proc is not None
    api = server.proc.pid
    before = _session(api)
    kinds = " ".join(before.values())
    # The test means something only if all the kinds of children exist when the API goes.
    for kind in ("spawn_main", "forkserver", "resource_tracker"):
        assert kind in kinds, before
    os.kill(api, sig)
    server.proc.wait(timeout=60)
    wait_until(lambda: not _session(api), GONE_WITHIN_S, "no process of the service left")
    return before


def test_f1_a_killed_worker_stops_only_its_own_job(server: ApiServer):
    server.start()
    with server.client() as c:
        ds = c.post("/v1/datasets", files={"file": ("t.svm", tiny_svmlight())}).json()["id"]
        victim, bystander = _job(c, ds, 600), _job(c, ds, BYSTANDER_BUDGET_S)
        for job_id in (victim, bystander):
            assert _iterating(c, job_id)["status"] == "running"
        bystander_run = _run_of(server, bystander)
        for attempt in (1, 2):
            _, pid, _ = _run_of(server, victim)
            assert pid is not None and pid != bystander_run[1]
            os.kill(pid, signal.SIGKILL)
            if attempt == 1:
                rerun = _iterating(c, victim, attempt=2)
                assert rerun["status"] == "running", rerun
                # No pause in service: the dead worker is replaced while the other one works.
                assert c.get("/readyz").status_code == 200
                # The bystander's run is the same one, in the same process, still going.
                assert _run_of(server, bystander) == bystander_run
                assert c.get(f"/v1/jobs/{bystander}").json()["status"] == "running"
        failed, survived = poll_job(c, victim), poll_job(c, bystander)
    assert failed["status"] == "failed" and "gave up after 2 attempt(s)" in failed["error"], failed
    assert survived["status"] == "succeeded" and survived["stop_reason"] == "time_budget", survived
    assert survived["attempts"] == 1 and _run_of(server, bystander)[::2] == bystander_run[::2]


@pytest.mark.parametrize(
    ("sig", "attempts"),
    [
        (signal.SIGKILL, 2),  # the run died with the server: start-up recovery re-queues it
        (signal.SIGTERM, 1),  # a graceful stop gives the run back without charging it
    ],
    ids=["kill-9", "sigterm"],
)
def test_f2_the_api_dies_mid_job_its_processes_go_and_the_restart_loses_nothing(
    server: ApiServer, sig: int, attempts: int
):
    server.start()
    with server.client() as c:
        ds = c.post("/v1/datasets", files={"file": ("t.svm", tiny_svmlight())}).json()["id"]
        short = c.post("/v1/jobs", json={"dataset_id": ds, "params": {"n_iter": 200}}).json()
        done = poll_job(c, short["id"])
        assert done["status"] == "succeeded"
        # Busy in the solver when the server goes (a parse forkserver and the tracker around).
        running = _job(c, ds, 3)
        assert _iterating(c, running)["status"] == "running"
    before = _signal_api_alone(server, sig)
    assert any("spawn_main" in cmd for cmd in before.values())

    server.start()
    with server.client() as c:
        job = poll_job(c, running)
        assert job["status"] == "succeeded" and job["attempts"] == attempts, job
        assert job["stop_reason"] == "time_budget"
        # What existed before the death is all there and usable.
        assert c.get(f"/v1/datasets/{ds}").status_code == 200
        model = c.get(f"/v1/models/{done['model_id']}")
        assert model.status_code == 200
        assert c.post(f"/v1/models/{done['model_id']}/predict", json={"instances": [[0.1] * 20]}).is_success
        assert c.get(f"/v1/jobs/{done['id']}").json()["status"] == "succeeded"
    assert server.stop()


def test_f3_no_process_is_left_behind_after_a_kill_9_of_an_idle_server(server: ApiServer):
    server.start()
    with server.client() as c:
        ds = c.post("/v1/datasets", files={"file": ("t.svm", tiny_svmlight())}).json()["id"]
        # Two jobs at once: both workers start and run one, then wait for the next.
        jobs = [_job(c, ds, 1) for _ in range(2)]
        for job_id in jobs:
            assert poll_job(c, job_id)["status"] == "succeeded"
    before = _signal_api_alone(server, signal.SIGKILL)
    assert sum("spawn_main" in cmd for cmd in before.values()) == 2, before
