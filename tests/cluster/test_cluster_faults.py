"""Faults on the cluster path (PostgreSQL + Dask): each ends with nothing lost and nothing stuck.

The local-pool twins live in tests/app/training/test_runner.py (a worker process SIGKILLed mid-job, the
server SIGKILLed with a queued and a running job, graceful restarts); they are not repeated here.
"""

from __future__ import annotations

import hashlib
import os
import signal
import time
from pathlib import Path

import numpy as np
from sqlalchemy import create_engine, text

from app.core.storage.local import LocalDirStore
from app.services.datasets.shards import open_dataset

from .harness import ApiServer, DaskCluster, cluster_env, poll_job, tiny_svmlight, wait_until

LONG = {"loss": "logistic", "sigma": 1e-4, "n_iter": 10**9, "random_state": 0}
SHORT = {"loss": "logistic", "sigma": 1e-3, "n_iter": 5000, "random_state": 0}
# FAST_LEASES: a lost run is noticed after 3 s; these bound the whole recovery.
RECOVERY_S = 60
# Long enough for a poll to see the job iterating before its budget ends it, on a loaded machine
# (a one-second budget could end between two polls while the other test process was busy).
KILLED_JOB_BUDGET_S = 5


def _running(job: dict) -> bool:
    return job["status"] == "running" and (job["progress"]["iteration"] or 0) > 0


def _worker_pid(pg_url: str, job_id: int) -> int:
    engine = create_engine(pg_url)
    try:
        with engine.connect() as conn:
            return int(
                conn.execute(text("SELECT worker_pid FROM jobs WHERE id = :i"), {"i": job_id}).scalar_one()
            )
    finally:
        engine.dispose()


def test_dask_worker_killed_mid_job_reruns_the_job(tmp_path: Path, pg_url: str, dask_cluster: DaskCluster):
    api = ApiServer(tmp_path / "var", tmp_path / "api.log", **cluster_env(pg_url, dask_cluster))
    api.start()
    try:
        with api.client() as c:
            ds = c.post("/v1/datasets", files={"file": ("t.svm", tiny_svmlight())}).json()["id"]
            body = {"dataset_id": ds, "params": LONG, "time_budget_s": KILLED_JOB_BUDGET_S}
            job_id = c.post("/v1/jobs", json=body).json()["id"]
            poll_job(c, job_id, _running)
            pid = _worker_pid(pg_url, job_id)
            assert pid in dask_cluster.worker_pids()
            killed_at = time.monotonic()
            os.kill(pid, signal.SIGKILL)
            # The scheduler retries the task elsewhere, finds the job running and skips it; the
            # job's lease expires and a sweep re-queues and dispatches it: attempt 2 finishes.
            job = poll_job(c, job_id, timeout=RECOVERY_S)
            took = time.monotonic() - killed_at
            assert job["status"] == "succeeded" and job["attempts"] == 2, job
            assert job["stop_reason"] == "time_budget"
            assert took < 30, f"recovery took {took:.1f} s"
            assert c.get("/readyz").status_code == 200
    finally:
        clean = api.stop()
    assert clean
    api.assert_clean_log()
    # The nanny restarted the killed worker: the cluster is whole again for other tests.
    wait_until(
        lambda: dask_cluster.worker_count() == dask_cluster.n_workers, 60, "the killed Dask worker restarted"
    )


def _store_checksums(data_dir: Path) -> dict[str, str]:
    # A data set is a directory of shards: every file under it counts.
    return {
        str(p.relative_to(data_dir)): hashlib.sha256(p.read_bytes()).hexdigest()
        for sub in ("datasets", "models")
        for p in sorted((data_dir / sub).rglob("*"))
        if p.is_file()
    }


def _assert_store_consistent(data_dir: Path, pg_url: str) -> None:
    """Every row has its complete files, and no partial (temp) file is left in the store."""
    partial = [
        p.name
        for sub in ("datasets", "models")
        for p in (data_dir / sub).rglob("*")
        if p.name.startswith(".") or p.suffix == ".tmp"
    ]
    assert partial == [], partial
    engine = create_engine(pg_url)
    try:
        with engine.connect() as conn:
            ds_files = conn.execute(text("SELECT file_name FROM datasets")).scalars().all()
            stems = conn.execute(text("SELECT file_stem FROM models")).scalars().all()
    finally:
        engine.dispose()
    store = LocalDirStore(data_dir)
    for key in ds_files:
        shards = open_dataset(store, key)  # reads the manifest, written last: complete
        for i in range(len(shards.shard_rows)):
            X, y = shards.shard(i)
            assert X.indptr[-1] == X.data.size and X.shape[0] == y.size
    for stem in stems:
        assert (data_dir / f"{stem}.json").is_file()
        with np.load(data_dir / f"{stem}.npz", allow_pickle=False) as f:
            assert f.files


def test_api_killed_and_restarted_with_jobs_queued_and_running(
    tmp_path: Path, pg_url: str, dask_cluster: DaskCluster
):
    data = tmp_path / "var"
    env = cluster_env(pg_url, dask_cluster)
    api = ApiServer(data, tmp_path / "api.log", **env).start()
    try:
        with api.client() as c:
            ds = [
                c.post("/v1/datasets", files={"file": (f"t{i}.svm", tiny_svmlight(seed=i))}).json()
                for i in range(2)
            ]
            first = poll_job(
                c, c.post("/v1/jobs", json={"dataset_id": ds[0]["id"], "params": SHORT}).json()["id"]
            )
            assert first["status"] == "succeeded"
            before = _store_checksums(data)
            # Two long jobs occupy both Dask workers; three more wait in the queue.
            running = [
                c.post(
                    "/v1/jobs", json={"dataset_id": ds[i]["id"], "params": LONG, "time_budget_s": 3}
                ).json()["id"]
                for i in range(2)
            ]
            queued = [
                c.post(
                    "/v1/jobs", json={"dataset_id": ds[i % 2]["id"], "params": SHORT, "split_seed": i}
                ).json()["id"]
                for i in range(3)
            ]
            for j in running:
                poll_job(c, j, _running)
    finally:
        api.kill()

    # A new API process (another port, as after a container restart) takes over.
    api = ApiServer(data, tmp_path / "api-2.log", **env).start()
    try:
        with api.client() as c:
            jobs = {j: poll_job(c, j, timeout=RECOVERY_S) for j in running + queued}
            assert {j["status"] for j in jobs.values()} == {"succeeded"}, jobs
            # The running jobs kept running on their Dask workers through the API's death.
            assert all(jobs[j]["attempts"] == 1 for j in running), jobs
            for job in jobs.values():
                assert c.get(f"/v1/models/{job['model_id']}").status_code == 200
            for d in ds:
                assert c.get(f"/v1/datasets/{d['id']}").json()["sha256"] == d["sha256"]
    finally:
        clean = api.stop()
    assert clean
    api.assert_clean_log()
    after = _store_checksums(data)
    assert {k: after[k] for k in before} == before, "files present before the kill are unchanged"
    assert len(after) == len(before) + 2 * 5, "five new models, two files each"
    _assert_store_consistent(data, pg_url)
