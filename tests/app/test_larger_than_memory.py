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

import numpy as np
import pytest
import scipy.sparse as sp
from fastapi.testclient import TestClient

from app.core.store import Store
from app.main import create_app
from app.models import Dataset, Job
from app.services.job_rows import split
from app.services.shards import Manifest, ShardWriter, new_dataset_key, open_dataset
from solver import PGSClassifier
from tests.helpers import create_job, make_settings, upload, wait_for

MIB = 1024 * 1024
N_FEATURES = 2**16
NNZ_PER_ROW = 40
BLOCK_ROWS = 100_000
HEADROOM = 256 * MIB
# A streaming job holds its window of shards (an eighth of the budget: two here) and about four
# more above the worker's baseline (the copy of its selected rows, the next one while the sampler
# hands over, an evaluation shard): 32 MiB shards keep that inside the headroom.
SHARD_BYTES = 32 * MIB
PARAMS = {"n_iter": 1_000_000, "sigma": 1e-5, "random_state": 0}


def write_rcv1_like(store: Store, key: str, n_rows: int, seed: int = 0) -> Manifest:
    """Rows of ``NNZ_PER_ROW`` positive, L2-normalised values at random columns, labelled by the
    sign of a sparse random linear rule, 5% of the labels flipped; written block by block."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(N_FEATURES) * (rng.random(N_FEATURES) < 0.1)
    writer = ShardWriter(store, key, shard_bytes=SHARD_BYTES, max_bytes=2**62,
                         over_limit=OverflowError)
    for start in range(0, n_rows, BLOCK_ROWS):
        rows = min(BLOCK_ROWS, n_rows - start)
        cols = np.sort(rng.integers(0, N_FEATURES, size=(rows, NNZ_PER_ROW), dtype=np.int32), 1)
        values = rng.random((rows, NNZ_PER_ROW))
        values /= np.linalg.norm(values, axis=1, keepdims=True)
        # Repeated columns in a row are summed by the CSR constructor's canonical form.
        X = sp.csr_matrix((values.ravel(), cols.ravel(),
                           np.arange(0, rows * NNZ_PER_ROW + 1, NNZ_PER_ROW)),
                          shape=(rows, N_FEATURES))
        X.sum_duplicates()
        y = np.where(X @ w > 0, 1.0, -1.0)
        y[rng.random(rows) < 0.05] *= -1
        writer.add(X, y)
    return writer.finish(N_FEATURES)


def _status_bytes(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field} for process {pid}")


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
        job = wait_for(c, create_job(c, dataset_id=dataset, solver="pgs", test_fraction=0.25,
                                     params=PARAMS | {"n_iter": 1000}).json()["id"])
        assert job["status"] == "succeeded", job
        return _status_bytes(_worker_pid(c, job["id"]), "VmRSS")


def _insert(client: TestClient, key: str, manifest: Manifest) -> int:
    """The data set's row, as an upload of the same rows leaves it."""
    with client.app.state.session_factory() as s:  # type: ignore[attr-defined]
        row = Dataset(name="rcv1-like", format="svmlight", compressed=False, file_name=key,
                      n_samples=manifest.n_samples, n_features=manifest.n_features,
                      nnz=manifest.nnz, task="binary", classes=[-1, 1], label_kind="numeric",
                      index_base=0, sha256="0" * 64, size_bytes=manifest.nbytes,
                      stored_bytes=manifest.nbytes)
        s.add(row)
        s.commit()
        return row.id


@pytest.mark.slow
def test_a_data_set_three_times_the_worker_budget_trains_within_it(tmp_path: Path,
                                                                  data_dir: Path):
    budget = _baseline_rss(tmp_path, data_dir) + HEADROOM
    # 5% over 3x: a few of a row's 40 random columns coincide and are summed into one.
    n_rows = int(3.15 * budget) // (NNZ_PER_ROW * 12 + 16)
    settings = make_settings(tmp_path / "big", workers=1, worker_memory_bytes=budget)
    settings.datasets_dir.mkdir(parents=True)
    key = new_dataset_key()
    manifest = write_rcv1_like(settings.store, key, n_rows)
    on_disk = sum(p.stat().st_size for p in (settings.data_dir / key).iterdir())
    assert on_disk >= 3 * budget and manifest.nbytes >= 3 * budget

    with TestClient(create_app(settings)) as c:
        dataset = _insert(c, key, manifest)
        # Raw features (no preprocessing), as the in-memory fit below takes them.
        job_request = {"dataset_id": dataset, "solver": "pgs", "test_fraction": 0.2,
                       "split_seed": 1, "params": PARAMS, "preprocessing": None}
        # A solver that needs all rows at once is refused, naming the budget.
        refused = create_job(c, **job_request | {"solver": "lbfgs"})
        assert refused.status_code == 422 and "PGS_WORKER_MEMORY_BYTES" in refused.text
        # The pool's worker starts (a small job), then its peak is reset for the large one.
        small = upload(c, data_dir / "heart_scale.svm").json()["id"]
        warm = wait_for(c, create_job(c, dataset_id=small, solver="pgs",
                                      params=PARAMS | {"n_iter": 1000}).json()["id"])
        pid = _worker_pid(c, warm["id"])
        Path(f"/proc/{pid}/clear_refs").write_text("5")  # resets VmHWM (Linux)
        job = wait_for(c, create_job(c, **job_request).json()["id"], timeout=600)
        assert job["status"] == "succeeded", job
        assert _worker_pid(c, job["id"]) == pid
        # It streamed, interleaving as many shards as fit in an eighth of the budget (two).
        assert job["metrics"]["shard_window"] >= budget // (8 * SHARD_BYTES) >= 2
        peak = _status_bytes(pid, "VmHWM")
    assert peak < budget, f"worker peak {peak / MIB:.0f} MiB, budget {budget / MIB:.0f} MiB"

    # The same rows fitted in memory (this process holds them whole; the worker never did).
    train, test = split(open_dataset(settings.store, key), N_FEATURES, 0.2, 1)
    X, y = train.in_memory()
    X_test, y_test = test.in_memory()
    in_memory = PGSClassifier(**PARAMS).fit(X, y)
    expected = float(np.mean(in_memory.predict(X_test) == y_test))
    # Different sample orders (shards in random order, a permutation within each): two
    # stochastic fits of a million steps agree to well within a point of accuracy.
    assert job["metrics"]["test_accuracy"] == pytest.approx(expected, abs=0.01)
