"""A fit from memory-mapped shards keeps a worker's resident memory to a few shards, whatever the
data set's size: the peak RSS (VmHWM) of a fresh process that trains on ten shards."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

N_FEATURES = 1000
SHARD_ROWS = 100_000
ROW_NNZ = 20
N_SHARDS = 10

FIT = r"""
import json, sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from solver import PGSClassifier, ShardedMatrix

root = Path(sys.argv[1])
rows, n_features = json.loads(sys.argv[2]), int(sys.argv[3])


def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024


def open_shard(i):
    def load(part):
        return np.load(root / f"shard-{i:05d}.{part}.npy", mmap_mode="r")
    X = sp.csr_matrix((load("data"), load("indices"), load("indptr")), shape=(rows[i], n_features))
    return X, load("y")


def fit(shards):
    sharded = ShardedMatrix(n_features, rows[:shards], open_shard)
    # One epoch; a few checkpoints, whose objective streams over every shard.
    est = PGSClassifier(random_state=0, sigma=1e-4, n_iter=sum(rows[:shards]), checkpoint_growth=8.0,
                        checkpoint_interval=None)
    return est.fit(sharded, None, trace=True)


fit(2)  # loads the kernels and the libraries a fit uses, then lets its shards go
baseline = status("VmRSS")
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # VmHWM := VmRSS
model = fit(len(rows))
print(json.dumps({"baseline": baseline, "peak": status("VmHWM"),
                  "accuracy": float(model.score(*open_shard(0)))}))
"""


def _write_shards(root: Path) -> int:
    """Ten shards of sparse rows whose labels a linear model predicts well; returns the bytes of
    one shard."""
    rng = np.random.default_rng(0)
    w = rng.normal(size=N_FEATURES)
    for i in range(N_SHARDS):
        # ROW_NNZ strictly increasing columns per row: canonical CSR, as the service stores it.
        cols = np.sort(rng.integers(0, N_FEATURES - ROW_NNZ, size=(SHARD_ROWS, ROW_NNZ)), axis=1)
        cols += np.arange(ROW_NNZ)
        parts = {
            "indptr": np.arange(0, SHARD_ROWS * ROW_NNZ + 1, ROW_NNZ, dtype=np.int64),
            "indices": cols.astype(np.int32).ravel(),
            "data": rng.random(SHARD_ROWS * ROW_NNZ),
        }
        X = sp.csr_matrix((parts["data"], parts["indices"], parts["indptr"]), shape=(SHARD_ROWS, N_FEATURES))
        parts["y"] = np.where(X @ w + 0.5 * rng.normal(size=SHARD_ROWS) > 0.0, 1.0, -1.0)
        for name, array in parts.items():
            np.save(root / f"shard-{i:05d}.{name}.npy", array)
    return sum(os.path.getsize(root / f"shard-00000.{name}.npy") for name in parts)


@pytest.mark.slow
def test_a_fit_from_mmapped_shards_stays_within_a_few_shards_of_memory(tmp_path):
    root = tmp_path / "shards"
    root.mkdir()
    try:
        shard_bytes = _write_shards(root)
        out = subprocess.run(
            [sys.executable, "-c", FIT, str(root), json.dumps([SHARD_ROWS] * N_SHARDS), str(N_FEATURES)],
            capture_output=True,
            text=True,
            check=True,
            env=os.environ.copy(),
        )
    finally:
        shutil.rmtree(root)
    result = json.loads(out.stdout)
    growth = result["peak"] - result["baseline"]
    # The data is ten shards, over 3x this bound: the fit may hold two at once (one being left,
    # one being opened), plus the engine's state and the objective's scores at checkpoints.
    assert growth < 3 * shard_bytes, (growth, shard_bytes)
    assert result["accuracy"] > 0.7
