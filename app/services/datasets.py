"""Data sets in the store: CSR arrays in a .npz (no pickle); seeded splits."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import IO

import numpy as np
import scipy.sparse as sp

from app.core.store import Store
from app.services.parsing import infer_task


def csr_writer(X: sp.csr_matrix, y: np.ndarray,
               text: np.ndarray | None = None) -> Callable[[IO[bytes]], None]:
    """A writer of ``X`` as its CSR arrays plus labels ``y`` (for atomic_write or a Store), and
    the values of a CSV's text columns (n_samples, k), when it has some."""
    X = sp.csr_matrix(X)
    arrays = {
        "data": np.ascontiguousarray(X.data, dtype=np.float64),
        "indices": np.ascontiguousarray(X.indices),
        "indptr": np.ascontiguousarray(X.indptr),
        "shape": np.asarray(X.shape, dtype=np.int64),
        # Fixed-width unicode or float64: both load with allow_pickle=False.
        "y": np.asarray(y),
    }
    if arrays["y"].dtype.kind not in "fU":
        raise TypeError(f"labels must be float or unicode, got dtype {arrays['y'].dtype}")
    if text is not None and text.size:
        arrays["text"] = np.asarray(text, dtype=str)
    return lambda fh: np.savez(fh, **arrays)  # type: ignore[arg-type]


def load_csr(source: Path | IO[bytes]) -> tuple[sp.csr_matrix, np.ndarray]:
    """Read a data set written by :func:`csr_writer` from a path or a binary file (a store)."""
    X, y, _ = load_dataset(source)
    return X, y


def load_dataset(source: Path | IO[bytes]) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray | None]:
    """(X, y, the text columns' values or None): all :func:`csr_writer` wrote."""
    with np.load(source, allow_pickle=False) as f:
        shape = tuple(int(v) for v in f["shape"])
        X = sp.csr_matrix((f["data"], f["indices"], f["indptr"]), shape=shape)
        return X, f["y"], (f["text"] if "text" in f.files else None)


def new_dataset_key() -> str:
    """A fresh store key for a data set (the name the database keeps)."""
    return f"datasets/{uuid.uuid4().hex}.npz"


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


def task_from_labels(store: Store, key: str, label_kind: str,
                     task: str) -> tuple[str, list[int | float | str] | None]:
    """The task and classes of the stored data set ``key`` once declared ``task``
    ("classification" or "regression"): ParseError when its labels cannot be that."""
    with store.open(key) as fh:
        _, y = load_csr(fh)
    return infer_task(y, label_kind, task)
