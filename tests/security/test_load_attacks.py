"""The load attacks of the security review (rows L1, L2, L3 and L6), replayed: each test is one
attack and asserts the outcome that must hold.

* L1: 200 concurrent ``POST /v1/jobs`` from one key: the owner's queue quota answers the excess
  with 429 and Retry-After, nothing half-created, another owner unaffected.
* L2: a study of 200 jobs, more than the owner's quota of 100: a 422 saying it can never fit,
  not a 429 a client would retry forever.
* L3: concurrent multipart uploads (20 of 2 MB here, the review's 50 of 8 MB scaled to the test's
  budget): all stored or cleanly refused, no temporary file left, the API's memory bounded.
* L6: 300 clients long-polling ``GET /v1/jobs/{id}?wait=30``: /readyz and a plain read keep
  answering, every poll answers when its job ends, and the polls past the owner's cap answer at
  once.

L1, L3 and L6 run against one real server (``python -m app``, one pool worker), each attack with
owners of its own; L2 needs no server process.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from bench import procs
from tests.cluster.harness import ApiServer, running_service, tiny_svmlight
from tests.helpers import assert_problem, make_settings, metric, run_async

KEYS = {
    "flood": "flood:member:key-flood",
    "other": "other:member:key-other",
    "uploader": "uploader:member:key-uploader",
    "poller": "poller:member:key-poller",
}
LONG = {"loss": "logistic", "sigma": 1e-4, "n_iter": 10**9, "random_state": 0}
SHORT = {"n_iter": 50}
QUOTA = 100  # PGS_MAX_QUEUED_JOBS_PER_OWNER's default
POLLS, POLLS_PAST_CAP = 300, 10
UPLOADS, UPLOAD_ROWS = 20, 40_000  # about 2 MB each


def _auth(name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {KEYS[name].rsplit(':', 1)[-1]}"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    env = {
        "PGS_API_KEYS": ",".join(KEYS.values()),
        "PGS_MAX_LONG_POLLS_PER_OWNER": str(POLLS),
        # Every client here is 127.0.0.1: the per-address cap (test_slow_clients.py) stays out of
        # the way of the per-owner limits these attacks meet.
        "PGS_MAX_CONNECTIONS_PER_CLIENT": "1000",
    }
    with running_service(tmp_path_factory.mktemp("load"), **env) as api:
        yield api


def _client(server: ApiServer, owner: str, connections: int = 10) -> httpx.AsyncClient:
    # Idle connections are dropped well before the server's keep-alive timeout (5 s): one reused
    # just as the server closes it would be a ReadError that says nothing about the attack.
    limits = httpx.Limits(
        max_connections=connections, max_keepalive_connections=connections, keepalive_expiry=1
    )
    return httpx.AsyncClient(base_url=server.base, headers=_auth(owner), timeout=120, limits=limits)


async def _dataset(c: httpx.AsyncClient) -> int:
    r = await c.post("/v1/datasets", files={"file": ("t.svm", tiny_svmlight(200))})
    assert r.status_code == 201, r.text
    return int(r.json()["id"])


async def _until_running(c: httpx.AsyncClient, job_id: int) -> None:
    for _ in range(600):  # bounds a hang at about a minute; measures nothing
        if (await c.get(f"/v1/jobs/{job_id}")).json()["status"] == "running":
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"job {job_id} did not start")


async def _cancel_all(c: httpx.AsyncClient) -> None:
    for status in ("queued", "running"):
        jobs = (await c.get("/v1/jobs", params={"status": status, "limit": 200})).json()["items"]
        for job in jobs:
            await c.post(f"/v1/jobs/{job['id']}/cancel")


# -- L1: a burst of jobs from one key --------------------------------------------------------------


@pytest.mark.system
def test_l1_a_burst_of_jobs_meets_the_queue_quota_and_spares_other_owners(server: ApiServer):
    async def attack() -> None:
        async with _client(server, "flood", 200) as flood, _client(server, "other") as other:
            ds = await _dataset(flood)
            # The one worker is busy: every job of the burst stays queued, so exactly the quota fits.
            blocker = (await flood.post("/v1/jobs", json={"dataset_id": ds, "params": LONG})).json()["id"]
            await _until_running(flood, blocker)
            answers = await asyncio.gather(
                *(flood.post("/v1/jobs", json={"dataset_id": ds, "params": SHORT}) for _ in range(200))
            )
            accepted = [r for r in answers if r.status_code == 202]
            refused = [r for r in answers if r.status_code != 202]
            assert len(accepted) == QUOTA and len(refused) == 200 - QUOTA
            for r in refused:
                body = assert_problem(r, 429)
                assert r.headers["retry-after"].isdigit(), r.headers
                assert "PGS_MAX_QUEUED_JOBS_PER_OWNER" in body["detail"]
            # Nothing half-created: the owner's queue holds exactly the accepted jobs.
            queued = (await flood.get("/v1/jobs", params={"status": "queued", "limit": 200})).json()["items"]
            assert {j["id"] for j in queued} == {r.json()["id"] for r in accepted}
            # Another owner has a quota of its own, and the server answers.
            other_ds = await _dataset(other)
            r = await other.post("/v1/jobs", json={"dataset_id": other_ds, "params": SHORT})
            assert r.status_code == 202, r.text
            assert (await other.get("/readyz")).status_code == 200
            await _cancel_all(flood)
            await _cancel_all(other)

    run_async(attack())


# -- L2: a study larger than the quota -------------------------------------------------------------


def test_l2_a_study_that_can_never_fit_the_quota_is_a_422(tmp_path: Path, data_dir: Path):
    with TestClient(create_app(make_settings(tmp_path))) as c:
        heart = (data_dir / "heart_scale.svm").read_bytes()
        ds = c.post("/v1/datasets", files={"file": ("heart.svm", heart)}).json()["id"]
        study = {
            "dataset_id": ds,
            "test_fraction": 0.25,
            "runs": [
                {"params": {"loss": "logistic", "sigma": 0.001, "n_iter": 1000}},
                {"params": {"loss": "logistic", "sigma": 0.001, "n_iter": 1000, "p": 1.8}},
            ],
            "sizes": [20, 30, 40, 50, 60, 70, 80, 90, 100, 110],
            "repeats": 10,
            "targets": [0.7],
        }
        r = c.post("/v1/studies", json=study)
        body = assert_problem(r, 422)
        assert "retry-after" not in r.headers
        assert "200 jobs can never be queued at once" in body["detail"]
        assert f"the limit is {QUOTA} (PGS_MAX_QUEUED_JOBS_PER_OWNER)" in body["detail"]
        assert c.get("/v1/studies").json()["items"] == [] and c.get("/v1/jobs").json()["items"] == []


# -- L3: concurrent multipart uploads --------------------------------------------------------------


@pytest.mark.system
def test_l3_concurrent_uploads_are_stored_or_refused_with_bounded_memory(server: ApiServer, tmp_path: Path):
    content = tiny_svmlight(UPLOAD_ROWS, seed=3)
    assert 1_500_000 < len(content) < 3_000_000
    assert server.proc is not None
    procs.reset_peak(server.proc.pid)
    rss_before = procs.status_bytes(server.proc.pid, "VmHWM")

    async def attack() -> list[httpx.Response]:
        async with _client(server, "uploader", UPLOADS) as c:
            return await asyncio.gather(
                *(c.post("/v1/datasets", files={"file": (f"u{i}.svm", content)}) for i in range(UPLOADS))
            )

    answers = run_async(attack())
    growth = procs.status_bytes(server.proc.pid, "VmHWM") - rss_before
    stored = [r.json() for r in answers if r.status_code == 201]
    for r in answers:
        if r.status_code != 201:
            assert_problem(r, r.status_code)
            assert 400 <= r.status_code < 500, r.text
    assert stored, [r.text for r in answers]
    assert all(d["n_samples"] == UPLOAD_ROWS for d in stored)
    with httpx.Client(base_url=server.base, headers=_auth("uploader"), timeout=60) as c:
        listed = c.get("/v1/datasets", params={"limit": 200}).json()["items"]
        assert {d["id"] for d in listed} == {d["id"] for d in stored}
        assert c.get("/readyz").status_code == 200
    assert list((Path(server.env["PGS_DATA_DIR"]) / "tmp").glob("upload-*")) == []
    # Each upload is streamed to disk and parsed in a child process: the API's peak memory grows
    # by less than the bytes sent at once (about 15 MiB for the 40 MB here).
    assert growth < UPLOADS * len(content), f"the API grew by {growth / 2**20:.0f} MiB"


# -- L6: many long polls ---------------------------------------------------------------------------


@pytest.mark.system
def test_l6_long_polls_leave_the_service_responsive_and_answer_when_their_job_ends(server: ApiServer):
    probe = httpx.Client(base_url=server.base, headers=_auth("poller"), timeout=60)

    async def waiting() -> float:
        return await asyncio.to_thread(metric, probe, "pgs_long_polls_waiting")

    async def attack() -> None:
        async with (
            _client(server, "poller", POLLS + POLLS_PAST_CAP) as pollers,
            _client(server, "poller") as c,
        ):
            ds = await _dataset(c)
            running = (await c.post("/v1/jobs", json={"dataset_id": ds, "params": LONG})).json()["id"]
            await _until_running(c, running)
            # Behind the running job on the one worker.
            queued = (await c.post("/v1/jobs", json={"dataset_id": ds, "params": SHORT})).json()["id"]
            polls = [
                asyncio.create_task(pollers.get(f"/v1/jobs/{(running, queued)[i % 2]}", params={"wait": 30}))
                for i in range(POLLS + POLLS_PAST_CAP)
            ]
            await _until(waiting, POLLS)

            async def answered_now() -> int:
                return sum(t.done() for t in polls)

            # Past the owner's cap a poll answers at once, with the job as it is (its answer may
            # still be on its way when the server counts the others waiting).
            await _until(answered_now, POLLS_PAST_CAP)
            answered = [t.result() for t in polls if t.done()]
            assert len(answered) == POLLS_PAST_CAP
            for r in answered:
                assert r.status_code == 200 and r.headers["retry-after"].isdigit(), r.headers
                assert r.json()["status"] in ("running", "queued")
            # The service answers while the polls wait.
            for _ in range(20):
                assert (await c.get("/readyz")).status_code == 200
                assert (await c.get(f"/v1/jobs/{running}")).json()["status"] == "running"
            # A queued job cancelled, a running job stopped by its worker: each wakes its polls.
            for job in (queued, running):
                assert (await c.post(f"/v1/jobs/{job}/cancel")).status_code in (200, 202)
            ended = await asyncio.wait_for(asyncio.gather(*polls), 60)  # bounds a hang
            waited = [r for r in ended if "retry-after" not in r.headers]
            assert len(waited) == POLLS
            assert all(r.status_code == 200 and r.json()["status"] == "cancelled" for r in waited)
            assert await waiting() == 0

    with probe:
        run_async(attack())


async def _until(read: Any, value: float) -> None:
    for _ in range(600):  # bounds a hang at about a minute; measures nothing
        if await read() == value:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"never {value}")
