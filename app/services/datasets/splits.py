"""Data sets in the store (their shards: app/services/datasets/shards.py): seeded splits, the task."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from app.core.storage.base import Store
from app.services.datasets.parse_base import LabelTally, infer_task
from app.services.datasets.shards import open_dataset


def widen(X: sp.csr_matrix, n_features: int) -> sp.csr_matrix:
    """Give ``X`` ``n_features`` columns (svmlight test files may miss trailing features)."""
    if X.shape[1] == n_features:
        return X
    if X.shape[1] > n_features:
        raise ValueError(f"{X.shape[1]} features, more than the model's {n_features}")
    return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_features))


def held_out_rows(n: int, fraction: float) -> int:
    """How many of ``n`` rows a split with ``fraction`` sets apart: ``round(n * fraction)``. The
    one rule of every split (a job's evaluation split, a study's, the sigma selection's
    validation split); ValueError when it leaves either side without rows."""
    n_held_out = round(n * fraction)
    if not 1 <= n_held_out < n:
        raise ValueError(f"a fraction of {fraction} of {n} rows leaves one side of the split empty")
    return n_held_out


def split_indices(n: int, test_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A seeded shuffle split: the same (n, fraction, seed) always gives the same rows."""
    n_test = held_out_rows(n, test_fraction)
    perm = np.random.default_rng(seed).permutation(n)
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


class ShardSplit:
    """A seeded split of a sharded data set that never needs all its rows at once: how many of
    the held-out rows fall in each shard is one multivariate hypergeometric draw (exactly the
    counts of a uniformly random set of ``held_out_rows(n, fraction)`` rows), then each shard
    draws its own with a generator seeded by (seed, shard). The same (shard sizes, fraction,
    seed) always give the same rows."""

    def __init__(self, shard_rows: Sequence[int], fraction: float, seed: int) -> None:
        self.seed = seed
        self.shard_rows = list(shard_rows)
        n_held_out = held_out_rows(sum(self.shard_rows), fraction)
        self.held_out = np.random.default_rng(seed).multivariate_hypergeometric(self.shard_rows, n_held_out)

    def held_out_mask(self, shard: int) -> np.ndarray:
        """Which rows of shard ``shard`` are held out (boolean, one per row)."""
        rows = self.shard_rows[shard]
        chosen = np.random.default_rng([self.seed, shard]).choice(
            rows, size=int(self.held_out[shard]), replace=False
        )
        mask = np.zeros(rows, dtype=bool)
        mask[chosen] = True
        return mask


def task_from_labels(
    store: Store, key: str, label_kind: str, task: str
) -> tuple[str, list[int | float | str] | None]:
    """The task and classes of the stored data set ``key`` once declared ``task``
    ("classification" or "regression"): ParseError when its labels cannot be that."""
    tally = LabelTally()
    for y in open_dataset(store, key).labels():
        tally.add(y)
    return infer_task(tally, label_kind, task)
