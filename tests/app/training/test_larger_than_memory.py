"""A data set three times larger than a worker's memory budget trains through the real app and
process pool: the job streams its shards, the worker's peak resident memory (VmHWM, which counts
the mapped shard pages it touched) stays under PGS_WORKER_MEMORY_BYTES, and its accuracy matches
an in-memory fit of the same rows.

The budget is honest about what a worker is before it reads any data: its resident memory after
a first small job (Python, NumPy, SciPy, scikit-learn, the compiled kernels), plus 256 MiB. The
data set is RCV1-like (40 non-zeros a row, a seeded sparse linear rule with label noise),
generated block by block straight into shards, never whole in memory.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.db.tables import Job
from app.main import create_app
from app.services.datasets.shards import new_dataset_key
from bench.procs import reset_peak, status_bytes
from tests.helpers import create_job, make_settings, upload, wait_for
from tests.rcv1_like import in_memory_accuracy, insert_dataset, rows_for, write_rcv1_like

MIB = 1024 * 1024
HEADROOM = 256 * MIB
# A streaming job holds its window of shards (an eighth of the budget: two here) and about four
# more above the worker's baseline (the copy of its selected rows, the next one while the sampler
# hands over, an evaluation shard): 32 MiB shards keep that inside the headroom.
SHARD_BYTES = 32 * MIB
PARAMS = {"n_iter": 1_000_000, "sigma": 1e-5, "random_state": 0}


def _worker_pid(client: TestClient, job_id: int) -> int:
    with client.app.state.session_factory() as s:  # type: ignore[attr-defined]
        job = s.get(Job, job_id)
        assert job is not None and job.worker_pid is not None
        return job.worker_pid


def _baseline_rss(tmp_path: Path, data_dir: Path) -> int:
    """A worker's resident memory after a small job: what it holds before any large data."""
    settings = make_settings(tmp_path / "baseline", workers=1)
    with TestClient(create_app(settings)) as c:
        dataset = upload(c, data_dir / "heart_scale.svm").json()["id"]
        job = wait_for(
            c,
            create_job(
                c, dataset_id=dataset, solver="pgs", test_fraction=0.25, params=PARAMS | {"n_iter": 1000}
            ).json()["id"],
        )
        assert job["status"] == "succeeded", job
        return status_bytes(_worker_pid(c, job["id"]), "VmRSS")


@pytest.mark.large
def test_a_data_set_three_times_the_worker_budget_trains_within_it(tmp_path: Path, data_dir: Path):
    budget = _baseline_rss(tmp_path, data_dir) + HEADROOM
    n_rows = rows_for(3 * budget)
    settings = make_settings(tmp_path / "big", workers=1, worker_memory_bytes=budget)
    settings.datasets_dir.mkdir(parents=True)
    key = new_dataset_key()
    manifest = write_rcv1_like(settings.store, key, n_rows, SHARD_BYTES)
    on_disk = sum(p.stat().st_size for p in (settings.data_dir / key).iterdir())
    assert on_disk >= 3 * budget and manifest.nbytes >= 3 * budget

    with TestClient(create_app(settings)) as c:
        dataset = insert_dataset(c.app.state.session_factory, key, manifest)  # type: ignore[attr-defined]
        # Raw features (no preprocessing), as the in-memory fit below takes them.
        job_request = {
            "dataset_id": dataset,
            "solver": "pgs",
            "test_fraction": 0.2,
            "split_seed": 1,
            "params": PARAMS,
            "preprocessing": None,
        }
        # A solver that needs all rows at once is refused, naming the budget.
        refused = create_job(c, **job_request | {"solver": "lbfgs"})
        assert refused.status_code == 422 and "PGS_WORKER_MEMORY_BYTES" in refused.text
        # The pool's worker starts (a small job), then its peak is reset for the large one.
        small = upload(c, data_dir / "heart_scale.svm").json()["id"]
        warm = wait_for(
            c, create_job(c, dataset_id=small, solver="pgs", params=PARAMS | {"n_iter": 1000}).json()["id"]
        )
        pid = _worker_pid(c, warm["id"])
        reset_peak(pid)
        job = wait_for(c, create_job(c, **job_request).json()["id"], timeout=600)
        assert job["status"] == "succeeded", job
        assert _worker_pid(c, job["id"]) == pid
        # It streamed, interleaving as many shards as fit in an eighth of the budget (two).
        assert job["metrics"]["shard_window"] >= budget // (8 * SHARD_BYTES) >= 2
        peak = status_bytes(pid, "VmHWM")
    assert peak < budget, f"worker peak {peak / MIB:.0f} MiB, budget {budget / MIB:.0f} MiB"

    # The same rows fitted in memory (this process holds them whole; the worker never did).
    expected = in_memory_accuracy(settings.store, key, 0.2, 1, PARAMS)
    # Different sample orders (shards in random order, a permutation within each): two
    # stochastic fits of a million steps agree to well within a point of accuracy.
    assert job["metrics"]["test_accuracy"] == pytest.approx(expected, abs=0.01)
