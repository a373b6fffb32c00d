"""The cluster path with an S3 store (moto on 127.0.0.1) and no shared directory: each Dask
worker has its own cache dir, each API process its own data dir; PostgreSQL holds the jobs and
the bucket holds data sets and models. Jobs train, a worker killed mid-job does not keep its job
from ending, and models load from the store in an API process that wrote none of them.

And a Dask worker keeps within PGS_WORKER_MEMORY_BYTES on a data set twice that size, streamed
from the bucket through its own cache. (tests/app/training/test_larger_than_memory.py trains on three times
the budget on the local pool; twice is enough here to tell streaming from holding the set whole,
or from keeping every shard's pages mapped, and each GiB through moto costs about a minute.)
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.core.storage.local import open_store
from app.db.engine import make_engine, make_session_factory
from app.services.datasets.shards import new_dataset_key
from bench.procs import reset_peak, status_bytes
from tests.rcv1_like import in_memory_accuracy, insert_dataset, rows_for, write_rcv1_like
from tests.s3 import S3Server

from .harness import ApiServer, DaskCluster, cluster_env, poll_job, tiny_svmlight, wait_until
from .test_cluster_faults import LONG, SHORT, _running, _worker_pid

MIB = 1024 * 1024
# A worker's budget: its resident memory after a first small job, plus this. Above that baseline
# a streaming job's peak was about 95 MiB here (docs/explanation/storage.md): its window of shards (an eighth
# of the budget: about 18 shards, 74 MiB) and a few shard-sized arrays besides.
HEADROOM = 160 * MIB
# Small shards keep the data set small in absolute terms and the window many shards wide.
SHARD_BYTES = 4 * MIB
BIG_PARAMS = {"n_iter": 300_000, "sigma": 1e-5, "random_state": 0}


@pytest.fixture
def s3_cluster(tmp_path: Path) -> Iterator[DaskCluster]:
    pytest.importorskip("distributed", reason="dask.distributed is not installed")
    cluster = DaskCluster(
        n_workers=2,
        log_dir=tmp_path / "dask",
        worker_env=lambda i: {"PGS_CACHE_DIR": str(tmp_path / f"worker-{i}")},
    )
    try:
        yield cluster.start()
    finally:
        cluster.stop()


def test_s3_store_without_a_shared_directory(
    tmp_path: Path, pg_url: str, s3: S3Server, s3_cluster: DaskCluster
):
    store = {"PGS_STORE_URL": s3.new_store_url(), "PGS_S3_ENDPOINT_URL": s3.endpoint_url}
    env = {**cluster_env(pg_url, s3_cluster), **store}
    a = ApiServer(tmp_path / "api-a", tmp_path / "api-a.log", **env).start()
    try:
        with a.client() as c:
            assert c.get("/readyz").json()["checks"]["store"] == "ok"
            ds = c.post("/v1/datasets", files={"file": ("t.svm", tiny_svmlight())}).json()["id"]
            ids = [
                c.post(
                    "/v1/jobs",
                    json={"dataset_id": ds, "params": SHORT, "split_seed": i, "test_fraction": 0.25},
                ).json()["id"]
                for i in range(4)
            ]
            done = [poll_job(c, j) for j in ids]
            assert [j["status"] for j in done] == ["succeeded"] * 4, done

            # A worker killed mid-job: the job's lease expires and attempt 2 ends it.
            job_id = c.post("/v1/jobs", json={"dataset_id": ds, "params": LONG, "time_budget_s": 1}).json()[
                "id"
            ]
            poll_job(c, job_id, _running)
            os.kill(_worker_pid(pg_url, job_id), signal.SIGKILL)
            killed = poll_job(c, job_id, timeout=90)
            assert killed["status"] == "succeeded" and killed["attempts"] == 2, killed
            done.append(killed)
    finally:
        a.kill()

    # The workers read the data set through caches of their own; nothing is shared on disk.
    copies = {
        i: sorted(p.name for p in (tmp_path / f"worker-{i}" / "datasets").glob("*"))
        for i in range(2)
        if (tmp_path / f"worker-{i}" / "datasets").is_dir()
    }
    assert copies, "the workers cached the data set in their own cache dirs"
    local = [p for d in ("datasets", "models") for p in (tmp_path / "api-a" / d).rglob("*")]
    assert local == [], "the API wrote the data set and read the models through the bucket"

    # Another API process, with a data dir of its own, serves every model from the bucket.
    b = ApiServer(tmp_path / "api-b", tmp_path / "api-b.log", **env).start()
    try:
        with b.client() as c:
            for job in done:
                p = c.post(f"/v1/models/{job['model_id']}/predict", json={"instances": [[0.1] * 20]})
                assert p.status_code == 200, p.text
    finally:
        clean = b.stop()
    assert clean
    b.assert_clean_log()
    wait_until(lambda: s3_cluster.worker_count() == 2, 60, "the killed Dask worker restarted")


def test_a_dask_worker_streams_twice_its_budget_from_the_bucket(tmp_path: Path, pg_url: str, s3: S3Server):
    pytest.importorskip("distributed", reason="dask.distributed is not installed")
    store = {"PGS_STORE_URL": s3.new_store_url(), "PGS_S3_ENDPOINT_URL": s3.endpoint_url}
    # Room in the worker's cache for the whole data set: a smaller cache would fetch each shard
    # again at every checkpoint (the held-out rows are in every shard, and the test score streams
    # over all of them).
    cluster = DaskCluster(
        n_workers=1,
        log_dir=tmp_path / "dask",
        worker_env=lambda _i: {
            "PGS_CACHE_DIR": str(tmp_path / "worker-cache"),
            "PGS_CACHE_BYTES": str(4096 * MIB),
        },
    )
    try:
        cluster.start()
        env = {**cluster_env(pg_url, cluster), **store}
        (pid,) = cluster.worker_pids()
        # The worker's baseline: what it holds after a first small job (Python, Dask, the app,
        # the loaded kernels, the store's connection), before any large data.
        a = ApiServer(tmp_path / "api-a", tmp_path / "api-a.log", **env).start()
        try:
            with a.client() as c:
                ds = c.post("/v1/datasets", files={"file": ("t.svm", tiny_svmlight())}).json()["id"]
                small = poll_job(c, c.post("/v1/jobs", json={"dataset_id": ds, "params": SHORT}).json()["id"])
                assert small["status"] == "succeeded", small
        finally:
            assert a.stop()
        budget = status_bytes(pid, "VmRSS") + HEADROOM

        # Written straight to the bucket; this process keeps its copies for the in-memory fit.
        writer = open_store(
            store["PGS_STORE_URL"],
            tmp_path / "writer",
            tmp_path / "writer-cache",
            2**62,
            {"endpoint_url": store["PGS_S3_ENDPOINT_URL"]},
        )
        key = new_dataset_key()
        manifest = write_rcv1_like(writer, key, rows_for(2 * budget), SHARD_BYTES)
        assert manifest.nbytes >= 2 * budget

        b = ApiServer(
            tmp_path / "api-b", tmp_path / "api-b.log", **env, PGS_WORKER_MEMORY_BYTES=str(budget)
        ).start()
        try:
            with b.client() as c:
                job = _train_streamed(c, pg_url, key, manifest, pid)
        finally:
            assert b.stop()
        b.assert_clean_log()
    finally:
        cluster.stop()
    # It streamed, interleaving as many shards as fit in an eighth of the budget.
    assert job["metrics"]["shard_window"] >= budget // (8 * SHARD_BYTES) >= 2
    peak = job["worker_peak"]
    assert peak < budget, f"worker peak {peak / MIB:.0f} MiB, budget {budget / MIB:.0f} MiB"

    expected = in_memory_accuracy(writer, key, 0.2, 1, BIG_PARAMS)
    # Different sample orders (shards in random order, a permutation within each): two
    # stochastic fits agree to well within a point of accuracy.
    assert job["metrics"]["test_accuracy"] == pytest.approx(expected, abs=0.01)


def _train_streamed(c: httpx.Client, pg_url: str, key: str, manifest: Any, pid: int) -> Any:
    """The job on the stored rows, run by the worker ``pid``, with its peak resident memory."""
    engine = make_engine(pg_url)
    try:
        dataset = insert_dataset(make_session_factory(engine), key, manifest)
    finally:
        engine.dispose()
    reset_peak(pid)
    job = poll_job(
        c,
        c.post(
            "/v1/jobs",
            json={
                "dataset_id": dataset,
                "solver": "pgs",
                "test_fraction": 0.2,
                "split_seed": 1,
                "params": BIG_PARAMS,
                "preprocessing": None,
            },
        ).json()["id"],
        timeout=600,
        interval=1,
    )
    assert job["status"] == "succeeded", job
    assert _worker_pid(pg_url, job["id"]) == pid
    return {**job, "worker_peak": status_bytes(pid, "VmHWM")}
