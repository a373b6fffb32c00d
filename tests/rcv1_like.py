"""An RCV1-like data set written straight to shards in a store, for the tests that train on data
larger than a worker's memory budget (tests/app/training/test_larger_than_memory.py on the local store and
process pool, tests/cluster/test_cluster_s3.py on the S3 store and Dask).

40 non-zeros a row, a seeded sparse linear rule with label noise, generated block by block and
never whole in memory; its row in the database is the one an upload of the same rows leaves.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from app.core.storage.base import Store
from app.db.engine import SessionFactory
from app.db.tables import Dataset
from app.services.datasets.shards import Manifest, ShardWriter, open_dataset
from app.services.jobs.rows import split
from solver import PGSClassifier

N_FEATURES = 2**16
NNZ_PER_ROW = 40
BLOCK_ROWS = 100_000
# A row's stored bytes: its non-zeros (int32 column, float64 value), its indptr entry and label.
ROW_BYTES = NNZ_PER_ROW * 12 + 16


def rows_for(nbytes: int) -> int:
    """Rows that take at least ``nbytes`` once stored: 5% more than the bytes say, because a few
    of a row's 40 random columns coincide and are summed into one."""
    return int(1.05 * nbytes) // ROW_BYTES


def write_rcv1_like(store: Store, key: str, n_rows: int, shard_bytes: int, seed: int = 0) -> Manifest:
    """Rows of ``NNZ_PER_ROW`` positive, L2-normalised values at random columns, labelled by the
    sign of a sparse random linear rule, 5% of the labels flipped; written block by block."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(N_FEATURES) * (rng.random(N_FEATURES) < 0.1)
    writer = ShardWriter(store, key, shard_bytes=shard_bytes, max_bytes=2**62, over_limit=OverflowError)
    for start in range(0, n_rows, BLOCK_ROWS):
        rows = min(BLOCK_ROWS, n_rows - start)
        cols = np.sort(rng.integers(0, N_FEATURES, size=(rows, NNZ_PER_ROW), dtype=np.int32), 1)
        values = rng.random((rows, NNZ_PER_ROW))
        values /= np.linalg.norm(values, axis=1, keepdims=True)
        # Repeated columns in a row are summed by the CSR constructor's canonical form.
        X = sp.csr_matrix(
            (values.ravel(), cols.ravel(), np.arange(0, rows * NNZ_PER_ROW + 1, NNZ_PER_ROW)),
            shape=(rows, N_FEATURES),
        )
        X.sum_duplicates()
        y = np.where(X @ w > 0, 1.0, -1.0)
        y[rng.random(rows) < 0.05] *= -1
        writer.add(X, y)
    return writer.finish(N_FEATURES)


def insert_dataset(session_factory: SessionFactory, key: str, manifest: Manifest) -> int:
    """The data set's row, as an upload of the same rows leaves it; returns its id."""
    with session_factory() as s:
        row = Dataset(
            name="rcv1-like",
            format="svmlight",
            compressed=False,
            file_name=key,
            n_samples=manifest.n_samples,
            n_features=manifest.n_features,
            nnz=manifest.nnz,
            task="binary",
            classes=[-1, 1],
            label_kind="numeric",
            index_base=0,
            sha256="0" * 64,
            size_bytes=manifest.nbytes,
            stored_bytes=manifest.nbytes,
        )
        s.add(row)
        s.commit()
        return row.id


def in_memory_accuracy(
    store: Store, key: str, test_fraction: float, split_seed: int, params: dict[str, Any]
) -> float:
    """The test accuracy of a PGS fit on the training rows of a job's split, all in memory (the
    caller holds them whole; the worker that streamed them never did)."""
    train, test = split(open_dataset(store, key), N_FEATURES, test_fraction, split_seed)
    X, y = train.in_memory()
    X_test, y_test = test.in_memory()
    fitted = PGSClassifier(**params).fit(X, y)
    return float(np.mean(fitted.predict(X_test) == y_test))
