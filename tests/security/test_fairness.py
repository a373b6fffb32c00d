"""Fairness between owners (issue "Tenants, bounded imports and hostile clients"): with one
owner's 100 jobs queued and two slow imports of hers running, another owner's upload is stored
and his job starts within the time the longest running job takes to end, not after her queue.

A real server (``python -m app``) with two pool workers; the slow imports are downloads from a
local HTTP server that sends one byte every 50 ms and stops when the test ends.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.cluster.harness import poll_job, running_service, tiny_svmlight, wait_until
from tests.helpers import http_server

pytestmark = pytest.mark.system

ALICE, BOB = ({"Authorization": f"Bearer {k}"} for k in ("key-a", "key-b"))
ALICE_JOBS, WORKERS = 100, 2
# Each of alice's jobs runs for about a second: long enough that her queue would keep bob's job
# waiting for most of a minute, short enough that the worker bob waits for frees soon.
ALICE_JOB = {"params": {"loss": "logistic", "sigma": 1e-4, "n_iter": 10**9}, "time_budget_s": 1}
TRICKLE_STEP_S = 0.05


@pytest.fixture
def trickle() -> Iterator[str]:
    """A URL whose answer promises a megabyte and sends a byte every 50 ms, until the test ends."""
    stop = threading.Event()

    class Trickle(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", str(10**6))
            self.end_headers()
            try:
                while not stop.wait(TRICKLE_STEP_S):
                    self.wfile.write(b"1")
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass  # the service gave up on it

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with http_server(Trickle) as url:
        try:
            yield f"{url}/data/slow.svm"
        finally:
            stop.set()


def _started(job: dict[str, Any]) -> dt.datetime | None:
    return dt.datetime.fromisoformat(job["started_at"]) if job["started_at"] else None


def test_another_owners_upload_and_job_do_not_wait_for_a_full_queue(tmp_path: Path, trickle: str):
    env = {
        "PGS_API_KEYS": "alice:member:key-a,bob:member:key-b",
        "PGS_WORKERS": str(WORKERS),
        "PGS_MAX_QUEUED_JOBS_PER_OWNER": str(ALICE_JOBS + 10),
        "PGS_IMPORT_ROOTS": trickle.rsplit("/", 1)[0] + "/",
    }
    with (
        running_service(tmp_path, **env) as server,
        httpx.Client(base_url=server.base, headers=ALICE, timeout=60) as alice,
        httpx.Client(base_url=server.base, headers=BOB, timeout=60) as bob,
    ):
        alice_ds = alice.post("/v1/datasets", files={"file": ("a.svm", tiny_svmlight(200))}).json()["id"]
        imports = [alice.post("/v1/datasets/import", json={"source": trickle}) for _ in range(2)]
        assert all(r.status_code == 202 for r in imports), [r.text for r in imports]
        queued = [
            alice.post("/v1/jobs", json={"dataset_id": alice_ds, **ALICE_JOB}).json()["id"]
            for _ in range(ALICE_JOBS)
        ]
        wait_until(
            lambda: len(alice.get("/v1/jobs", params={"status": "running"}).json()["items"]) == WORKERS,
            60,
            "both workers busy with alice's jobs",
        )

        # Bob's upload is parsed and stored while alice's imports still trickle in.
        r = bob.post("/v1/datasets", files={"file": ("b.svm", tiny_svmlight(100, seed=1))})
        assert r.status_code == 201, r.text
        assert all(alice.get(i.headers["Location"]).json()["state"] == "parsing" for i in imports)
        job = bob.post("/v1/jobs", json={"dataset_id": r.json()["id"], "params": {"n_iter": 50}}).json()
        started = _started(poll_job(bob, job["id"], _started, timeout=60, interval=0.2))
        hers = [alice.get(f"/v1/jobs/{j}").json() for j in queued]

        # Bob's job started when one of alice's running jobs ended: after he submitted it, at most
        # one more of hers per worker started before his did; most of her queue is still waiting.
        submitted = dt.datetime.fromisoformat(job["created_at"])
        assert started is not None
        overtook = [j for j in hers if (s := _started(j)) is not None and submitted <= s <= started]
        assert len(overtook) <= WORKERS, [j["id"] for j in overtook]
        assert sum(j["status"] == "queued" for j in hers) >= ALICE_JOBS - 20

        for j in queued:
            alice.post(f"/v1/jobs/{j}/cancel")
