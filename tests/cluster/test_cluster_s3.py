"""The cluster path with an S3 store (moto on 127.0.0.1) and no shared directory: each Dask
worker has its own cache dir, each API process its own data dir; PostgreSQL holds the jobs and
the bucket holds data sets and models. Jobs train, a worker killed mid-job does not keep its job
from ending, and models load from the store in an API process that wrote none of them."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.s3 import S3Server

from .harness import ApiServer, DaskCluster, cluster_env, poll_job, tiny_svmlight, wait_until
from .test_cluster_faults import LONG, SHORT, _running, _worker_pid


@pytest.fixture
def s3_cluster(tmp_path: Path) -> Iterator[DaskCluster]:
    pytest.importorskip("distributed", reason="dask.distributed is not installed")
    cluster = DaskCluster(n_workers=2, log_dir=tmp_path / "dask",
                          worker_env=lambda i: {"PGS_CACHE_DIR": str(tmp_path / f"worker-{i}")})
    try:
        yield cluster.start()
    finally:
        cluster.stop()


def test_s3_store_without_a_shared_directory(tmp_path: Path, pg_url: str, s3: S3Server,
                                             s3_cluster: DaskCluster):
    store = {"PGS_STORE_URL": s3.new_store_url(), "PGS_S3_ENDPOINT_URL": s3.endpoint_url}
    env = {**cluster_env(pg_url, s3_cluster), **store}
    a = ApiServer(tmp_path / "api-a", tmp_path / "api-a.log", **env).start()
    try:
        with a.client() as c:
            assert c.get("/readyz").json()["checks"]["store"] == "ok"
            ds = c.post("/v1/datasets", files={"file": ("t.svm", tiny_svmlight())}).json()["id"]
            ids = [c.post("/v1/jobs", json={"dataset_id": ds, "params": SHORT, "split_seed": i,
                                            "test_fraction": 0.25}).json()["id"]
                   for i in range(4)]
            done = [poll_job(c, j) for j in ids]
            assert [j["status"] for j in done] == ["succeeded"] * 4, done

            # A worker killed mid-job: the job's lease expires and attempt 2 ends it.
            job_id = c.post("/v1/jobs", json={"dataset_id": ds, "params": LONG,
                                              "time_budget_s": 1}).json()["id"]
            poll_job(c, job_id, _running)
            os.kill(_worker_pid(pg_url, job_id), signal.SIGKILL)
            killed = poll_job(c, job_id, timeout=90)
            assert killed["status"] == "succeeded" and killed["attempts"] == 2, killed
            done.append(killed)
    finally:
        a.kill()

    # The workers read the data set through caches of their own; nothing is shared on disk.
    copies = {i: sorted(p.name for p in (tmp_path / f"worker-{i}" / "datasets").glob("*"))
              for i in range(2) if (tmp_path / f"worker-{i}" / "datasets").is_dir()}
    assert copies, "the workers cached the data set in their own cache dirs"
    local = [p for d in ("datasets", "models") for p in (tmp_path / "api-a" / d).rglob("*")]
    assert local == [], "the API wrote the data set and read the models through the bucket"

    # Another API process, with a data dir of its own, serves every model from the bucket.
    b = ApiServer(tmp_path / "api-b", tmp_path / "api-b.log", **env).start()
    try:
        with b.client() as c:
            for job in done:
                p = c.post(f"/v1/models/{job['model_id']}/predict",
                           json={"instances": [[0.1] * 20]})
                assert p.status_code == 200, p.text
    finally:
        clean = b.stop()
    assert clean
    b.assert_clean_log()
    wait_until(lambda: s3_cluster.worker_count() == 2, 60, "the killed Dask worker restarted")
