"""The cluster path, without Docker: PostgreSQL + a Dask scheduler and two workers + the API.

Two API processes share one PostgreSQL database and one Dask cluster; a data set goes from
upload to training on a Dask worker to predictions. Below that, the row locking that makes
several API processes and workers safe is checked directly against PostgreSQL.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select, text

from app.db.engine import make_engine, make_session_factory, run_migrations, transaction
from app.db.tables import Job, utcnow
from app.services.jobs import leases
from app.services.jobs import state as jobs

from .harness import ApiServer, DaskCluster, cluster_env, poll_job, tiny_svmlight


def worker_pids_of_jobs(pg_url: str) -> dict[int, int | None]:
    engine = create_engine(pg_url)
    try:
        with engine.connect() as conn:
            return dict(conn.execute(text("SELECT id, worker_pid FROM jobs")).all())
    finally:
        engine.dispose()


def test_upload_train_predict_with_two_api_processes(tmp_path: Path, pg_url: str, dask_cluster: DaskCluster):
    env = cluster_env(pg_url, dask_cluster)
    a = ApiServer(tmp_path / "var", tmp_path / "api-a.log", **env).start()
    b = ApiServer(tmp_path / "var", tmp_path / "api-b.log", **env).start()
    try:
        with a.client() as ca, b.client() as cb:
            assert ca.get("/readyz").json()["checks"] == {
                "database": "ok",
                "store": "ok",
                "disk": "ok",
                "workers": "ok",
            }
            r = ca.post("/v1/datasets", files={"file": ("tiny.svm", tiny_svmlight())})
            assert r.status_code == 201, r.text
            ds = r.json()
            assert cb.get(f"/v1/datasets/{ds['id']}").json()["sha256"] == ds["sha256"]

            body = {
                "dataset_id": ds["id"],
                "test_fraction": 0.25,
                "targets": [0.6],
                "params": {"loss": "logistic", "sigma": 1e-3, "n_iter": 20000, "random_state": 0},
            }
            # Jobs posted to both API processes, all on the one Dask cluster.
            ids = [
                (ca if i % 2 else cb).post("/v1/jobs", json={**body, "split_seed": i}).json()["id"]
                for i in range(6)
            ]
            done = [poll_job(ca, i) for i in ids]
            assert [j["status"] for j in done] == ["succeeded"] * 6, done
            assert all(j["attempts"] == 1 for j in done), "each job was claimed exactly once"
            assert all(j["metrics"]["test_accuracy"] > 0.75 for j in done), done
            assert all(j["metrics"]["time_to_target"]["0.6"] is not None for j in done)

            # They ran in the Dask worker processes, not in either API process.
            ran_on = set(worker_pids_of_jobs(pg_url).values())
            assert ran_on <= set(dask_cluster.worker_pids()), ran_on

            model_id = done[0]["model_id"]
            rows = [{"indices": [0, 3, 7], "values": [0.5, -1.0, 2.0]}, [0.1] * 20]
            for c in (ca, cb):  # either API process serves the model from the shared store
                p = c.post(f"/v1/models/{model_id}/predict", json={"instances": rows})
                assert p.status_code == 200, p.text
                assert len(p.json()["predictions"]) == 2
                assert set(p.json()["predictions"]) <= {-1, 1}
            metrics = ca.get("/metrics").text
            assert "pgs_workers 2.0" in metrics

            # Cancellation reaches a Dask worker cooperatively, between solver chunks.
            long = {"dataset_id": ds["id"], "params": {**body["params"], "n_iter": 10**9}}
            job_id = cb.post("/v1/jobs", json=long).json()["id"]
            poll_job(ca, job_id, lambda j: (j["progress"]["iteration"] or 0) > 0)
            asked = time.monotonic()
            assert ca.post(f"/v1/jobs/{job_id}/cancel").status_code == 202
            assert poll_job(cb, job_id)["status"] == "cancelled"
            assert time.monotonic() - asked < 5

            # One API process dies holding queued jobs (Dask drops a departed client's queue);
            # the other one dispatches them once their dispatch mark is older than the lease.
            busy = [cb.post("/v1/jobs", json={**long, "time_budget_s": 2}).json()["id"] for _ in range(2)]
            for j in busy:
                poll_job(cb, j, lambda j: j["status"] == "running")
            orphans = [
                ca.post("/v1/jobs", json={**body, "split_seed": 10 + i}).json()["id"] for i in range(2)
            ]
            a.kill()
            settled = [poll_job(cb, j, timeout=60) for j in busy + orphans]
            assert [j["status"] for j in settled] == ["succeeded"] * 4, settled
            assert all(j["attempts"] == 1 for j in settled)
    finally:
        a.kill()
        clean = b.stop()
    assert clean, "the surviving API process stops cleanly"
    b.assert_clean_log()
    taken_over = b.log_path.read_text()
    assert all(f"job {j}: dispatching again" in taken_over for j in orphans), taken_over[-2000:]


# -- row locking, directly against PostgreSQL ------------------------------------------------


@pytest.fixture
def pg_factory(pg_url: str):
    engine = make_engine(pg_url)
    run_migrations(engine)
    yield make_session_factory(engine)
    engine.dispose()


def _queued_jobs(factory, n: int, **values) -> list[int]:
    with transaction(factory) as s:
        rows = [
            Job(status="queued", solver="pgs", task="binary", params={}, targets=[], **values)
            for _ in range(n)
        ]
        s.add_all(rows)
        s.flush()
        return [r.id for r in rows]


def _race(n_threads: int, fn) -> list:
    results: list = []
    lock = threading.Lock()
    barrier = threading.Barrier(n_threads)

    def run(k: int) -> None:
        barrier.wait()
        out = fn(k)
        with lock:
            results.append(out)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return results


def test_every_job_is_claimed_exactly_once_under_contention(pg_factory):
    ids = _queued_jobs(pg_factory, 40)
    # Eight claimers (API processes / workers) race for every job, in different orders.
    claims = _race(
        8, lambda k: [(j, jobs.claim(pg_factory, j, pid=1000 + k)) for j in (ids if k % 2 else ids[::-1])]
    )
    won = [j for per_thread in claims for j, token in per_thread if token is not None]
    assert sorted(won) == ids, "each job exactly once"
    with pg_factory() as s:
        assert set(s.scalars(select(Job.attempts))) == {1}


def test_sweeps_split_the_work_and_reap_only_expired_leases(pg_factory):
    old = utcnow() - dt.timedelta(minutes=5)
    orphans = _queued_jobs(pg_factory, 30, dispatched_at=old)
    _queued_jobs(pg_factory, 5, dispatched_at=utcnow())  # held by a live API process
    taken = _race(4, lambda _k: leases.claim_undispatched(pg_factory, lease_s=30, held=()))
    flat = [j for ids in taken for j in ids]
    assert sorted(flat) == orphans, "every orphan dispatched once, by exactly one sweeper"

    lost, alive = _queued_jobs(pg_factory, 2)
    for job_id in (lost, alive):
        assert jobs.claim(pg_factory, job_id, pid=1) == 1
    with transaction(pg_factory) as s:
        s.get(Job, lost).heartbeat_at = old
    requeued = _race(3, lambda _k: leases.reap_lost(pg_factory, lease_s=30, max_attempts=2))
    assert sorted(j for r in requeued for j in r) == [lost]
    with pg_factory() as s:
        assert s.get(Job, lost).status == "queued" and "heartbeats" in s.get(Job, lost).error
        assert s.get(Job, alive).status == "running"
    # The old run of the lost job can no longer write: its fencing token is stale.
    assert leases.heartbeat(pg_factory, lost, token=1) is False
    assert leases.heartbeat(pg_factory, alive, token=1) is True
