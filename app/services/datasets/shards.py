"""Data sets in the store as memory-mappable CSR shards: written block by block, read a shard at
a time.

A data set's store key is a prefix, ``datasets/<uuid>``, under which live

- ``manifest.json``: ``{"format": "pgs-shards/1", "n_samples", "n_features", "nnz",
  "label_dtype", "shards": [{"rows": r, "nnz": k}, ...]}``, written last: a data set exists once
  its manifest does, so a parse that fails half-way never looks like a data set;
- per shard ``i``, raw NumPy files ``shard-{i:05d}.indptr.npy`` (int64, r + 1 entries from 0),
  ``.indices.npy`` (int32), ``.data.npy`` (float64) and ``.y.npy`` (float64, or fixed-width
  unicode for CSV string labels), and for a CSV with text columns (the manifest's ``"text"``:
  how many, k) ``.text.npy`` (fixed-width unicode, r x k: their values, zeros in the CSR);
- ``stats.npz``: the columns' statistics (:mod:`app.services.datasets.column_stats`), computed
  shard by shard as they are written and stored just before the manifest. A data set stored
  before them gets them after the service starts, or from its first job
  (:mod:`app.services.datasets.dataset_stats`).

Shards are cut at whole rows once their CSR arrays reach ``shard_bytes`` (PGS_SHARD_BYTES), so a
writer holds at most one shard and a reader maps one shard at a time (``np.load(mmap_mode="r")``
on ``Store.local_path``): neither ever holds a whole data set. Data sets stored before the shards
were one ``datasets/<uuid>.npz``; :func:`open_dataset` still reads those until the start-up
conversion (:mod:`app.services.datasets.shard_migration`) has replaced them.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Any

import numpy as np
import scipy.sparse as sp

from app.core.storage.base import Store
from app.services.datasets.column_stats import ColumnStats
from app.services.model_registry.npy_stream import NpyRowWriter

FORMAT = "pgs-shards/1"
ARRAYS = ("indptr", "indices", "data", "y")
# CSR bytes of one stored non-zero (float64 value, int32 column) and of one row (int64 pointer).
NNZ_BYTES = 12
ROW_BYTES = 8
# Rows in memory: CSR, labels, the text columns' values (None without any).
StoredRows = tuple[sp.csr_matrix, np.ndarray, np.ndarray | None]


def new_dataset_key() -> str:
    """A fresh store key for a data set (the prefix the database keeps)."""
    return f"datasets/{uuid.uuid4().hex}"


def manifest_key(key: str) -> str:
    return f"{key}/manifest.json"


def stats_key(key: str) -> str:
    return f"{key}/stats.npz"


def shard_key(key: str, shard: int, array: str) -> str:
    return f"{key}/shard-{shard:05d}.{array}.npy"


def is_npz(key: str) -> bool:
    """A data set stored before the shards (one .npz of the whole CSR)."""
    return key.endswith(".npz")


@dataclass(frozen=True)
class Manifest:
    n_samples: int
    n_features: int
    nnz: int
    label_dtype: str
    shard_rows: tuple[int, ...]
    shard_nnz: tuple[int, ...]
    # A CSV's text columns: how many (k), and the dtype of their values (fixed-width unicode).
    text_columns: int = 0
    text_dtype: str = "<U1"

    @property
    def n_shards(self) -> int:
        return len(self.shard_rows)

    @property
    def shard_nbytes(self) -> tuple[int, ...]:
        """Bytes of each shard's arrays in the store (what a reader maps of it)."""
        row_bytes = (
            np.dtype(self.label_dtype).itemsize + np.dtype(self.text_dtype).itemsize * self.text_columns
        )
        return tuple(
            k * NNZ_BYTES + (r + 1) * ROW_BYTES + r * row_bytes
            for r, k in zip(self.shard_rows, self.shard_nnz, strict=True)
        )

    @property
    def nbytes(self) -> int:
        """Bytes of the data set's arrays: what its shards take in the store, and (within a few
        bytes a shard) what it takes in memory as one CSR matrix with its labels."""
        return sum(self.shard_nbytes)

    @property
    def arrays(self) -> tuple[str, ...]:
        return (*ARRAYS, "text") if self.text_columns else ARRAYS

    def keys(self, key: str) -> list[str]:
        """Every store key of the data set, the manifest last."""
        shards = [shard_key(key, i, a) for i in range(self.n_shards) for a in self.arrays]
        return [*shards, stats_key(key), manifest_key(key)]

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "n_samples": self.n_samples,
            "n_features": self.n_features,
            "nnz": self.nnz,
            "label_dtype": self.label_dtype,
            "text": self.text_columns,
            "text_dtype": self.text_dtype,
            "shards": [{"rows": r, "nnz": k} for r, k in zip(self.shard_rows, self.shard_nnz, strict=True)],
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Manifest:
        if doc.get("format") != FORMAT:
            raise ValueError(f"not a {FORMAT} manifest: format {doc.get('format')!r}")
        return cls(
            n_samples=int(doc["n_samples"]),
            n_features=int(doc["n_features"]),
            nnz=int(doc["nnz"]),
            label_dtype=str(doc["label_dtype"]),
            shard_rows=tuple(int(s["rows"]) for s in doc["shards"]),
            shard_nnz=tuple(int(s["nnz"]) for s in doc["shards"]),
            text_columns=int(doc.get("text", 0)),
            text_dtype=str(doc.get("text_dtype", "<U1")),
        )


# -- writing ---------------------------------------------------------------------------------


def _save_npy(fh: IO[bytes], array: np.ndarray) -> None:
    """``array`` as a .npy file, written by Python's file object: np.save's C-level write turns
    a full disk into an OSError without its errno ("N requested and M written"), which could
    not be answered as the 507 it is."""
    writer = NpyRowWriter(fh, array.shape[0])
    writer.write(array)
    writer.close()


class ShardWriter:
    """Takes CSR rows and their labels block by block and writes a shard to ``store`` under
    ``key`` each time ``shard_bytes`` of CSR arrays are gathered; :meth:`finish` writes the last
    shard and the manifest. ``over_limit(n)`` is raised (an exception it returns) as soon as the
    data set would take more than ``max_bytes`` in the store."""

    def __init__(
        self,
        store: Store,
        key: str,
        *,
        shard_bytes: int,
        max_bytes: int,
        over_limit: Callable[[int], Exception],
    ) -> None:
        self.store, self.key = store, key
        self.shard_bytes, self.max_bytes, self.over_limit = shard_bytes, max_bytes, over_limit
        self.pending: list[tuple[sp.csr_matrix, np.ndarray, np.ndarray | None]] = []
        self.pending_bytes = 0
        self.shard_rows: list[int] = []
        self.shard_nnz: list[int] = []
        self.stored_bytes = 0
        self.label_dtype: np.dtype | None = None
        self.text_dtype: np.dtype | None = None
        self.text_columns = 0
        self.stats = ColumnStats(0)
        self.written: list[str] = []

    def add(self, X: sp.csr_matrix, y: np.ndarray, text: np.ndarray | None = None) -> None:
        """Rows ``X`` (any width: the data set's is given to :meth:`finish`), labels ``y`` and,
        for a CSV with text columns, their values ``text`` (rows x k, unicode)."""
        if y.dtype.kind not in "fU":
            raise TypeError(f"labels must be float or unicode, got dtype {y.dtype}")
        X = sp.csr_matrix(X)
        self.label_dtype = (
            y.dtype if self.label_dtype is None else np.promote_types(self.label_dtype, y.dtype)
        )
        text_row_bytes = 0
        if text is not None and text.shape[1]:
            text = np.asarray(text, dtype=str)
            self.text_columns = text.shape[1]
            self.text_dtype = (
                text.dtype if self.text_dtype is None else np.promote_types(self.text_dtype, text.dtype)
            )
            text_row_bytes = text.itemsize * text.shape[1]
        else:
            text = None
        while X.shape[0]:
            # Bytes of the first k rows of X: the cut that fills the current shard.
            cum = X.indptr[1:] * NNZ_BYTES + np.arange(1, X.shape[0] + 1) * (
                ROW_BYTES + y.itemsize + text_row_bytes
            )
            take = int(np.searchsorted(cum, self.shard_bytes - self.pending_bytes, "right"))
            if take == 0 and not self.pending:
                take = 1  # a row larger than a shard is a shard of its own
            if take:
                self._check_room(int(cum[take - 1]))
                self.pending.append((X[:take], y[:take], None if text is None else text[:take]))
                self.pending_bytes += int(cum[take - 1])
                X, y = X[take:], y[take:]
                text = None if text is None else text[take:]
            if X.shape[0] or self.pending_bytes >= self.shard_bytes:
                self._flush()

    def _check_room(self, more: int) -> None:
        total = self.stored_bytes + self.pending_bytes + more
        if total > self.max_bytes:
            raise self.over_limit(total)

    def shift_indices(self, delta: int) -> None:
        """Add ``delta`` to every column index written so far (an svmlight file found to be
        0-based after its first blocks were taken as 1-based)."""
        for X, _, _ in self.pending:
            X.indices += delta
        self.stats = self.stats.shifted(delta)
        for i in range(len(self.shard_rows)):
            key = shard_key(self.key, i, "indices")
            with self.store.open(key) as fh:
                indices = np.load(fh, allow_pickle=False)
            # Keys are write-once: the old indices go first. No reader sees the gap: the data
            # set does not exist before its manifest, written last.
            self.store.delete(key)
            self._write(key, indices + np.int32(delta))

    def _write(self, key: str, array: np.ndarray) -> None:
        if key not in self.written:
            self.written.append(key)
        self.store.write(key, lambda fh: _save_npy(fh, array))

    def _flush(self) -> None:
        if not self.pending:
            return
        i = len(self.shard_rows)
        lengths = np.concatenate([np.diff(X.indptr) for X, _, _ in self.pending])
        arrays = {
            "indptr": np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]),
            "indices": np.concatenate([X.indices for X, _, _ in self.pending]).astype(np.int32),
            "data": np.concatenate([X.data for X, _, _ in self.pending]).astype(np.float64),
            "y": np.concatenate([y for _, y, _ in self.pending]),
        }
        if self.text_columns:
            arrays["text"] = np.concatenate([t for _, _, t in self.pending if t is not None])
        self.pending, self.pending_bytes = [], 0
        shard = ColumnStats.of_values(
            len(lengths), arrays["indices"], arrays["data"], arrays.get("text"), arrays["y"]
        )
        self.stats = self.stats.merge(shard)
        for name, array in arrays.items():
            self._write(shard_key(self.key, i, name), array)
            self.stored_bytes += array.nbytes
        self.shard_rows.append(len(lengths))
        self.shard_nnz.append(int(arrays["indptr"][-1]))

    def finish(self, n_features: int) -> Manifest:
        """Write the last shard, the statistics and the manifest: from here on the data set
        exists."""
        self._flush()
        body = self.stats.to_bytes()
        self.written.append(stats_key(self.key))
        self.store.write(stats_key(self.key), lambda fh: _write_all(fh, body))
        manifest = Manifest(
            n_samples=sum(self.shard_rows),
            n_features=n_features,
            nnz=sum(self.shard_nnz),
            label_dtype=str(self.label_dtype or np.dtype(np.float64)),
            shard_rows=tuple(self.shard_rows),
            shard_nnz=tuple(self.shard_nnz),
            text_columns=self.text_columns,
            text_dtype=str(self.text_dtype or np.dtype("<U1")),
        )
        body = json.dumps(manifest.to_json()).encode()
        self.written.append(manifest_key(self.key))
        self.store.write(manifest_key(self.key), lambda fh: _write_all(fh, body))
        return manifest

    def abort(self) -> None:
        """Remove every key written so far and start again empty (a parse that failed leaves
        nothing behind; a CSV file read again with string labels starts over)."""
        self.store.delete(*self.written)
        self.written, self.pending, self.pending_bytes = [], [], 0
        self.shard_rows, self.shard_nnz, self.stored_bytes, self.label_dtype = [], [], 0, None
        self.text_dtype, self.text_columns, self.stats = None, 0, ColumnStats(0)


def _write_all(fh: IO[bytes], body: bytes) -> None:
    fh.write(body)


def write_dataset(
    store: Store,
    key: str,
    X: sp.csr_matrix,
    y: np.ndarray,
    text: np.ndarray | None = None,
    *,
    shard_bytes: int,
) -> Manifest:
    """Store rows already in memory (a conversion, a test) as a sharded data set."""
    writer = ShardWriter(
        store, key, shard_bytes=shard_bytes, max_bytes=np.iinfo(np.int64).max, over_limit=OverflowError
    )
    try:
        writer.add(X, np.asarray(y), text)
        return writer.finish(X.shape[1])
    except BaseException:
        writer.abort()
        raise


# -- reading ---------------------------------------------------------------------------------


class DatasetShards:
    """A stored data set, read one shard at a time. Shards are memory-mapped through
    ``store.local_path``; a data set still in the old .npz form is one shard read whole."""

    def __init__(self, store: Store, key: str, manifest: Manifest, whole: StoredRows | None = None) -> None:
        self.store, self.key, self.manifest, self._whole = store, key, manifest, whole

    @property
    def shard_rows(self) -> Sequence[int]:
        return self.manifest.shard_rows

    def shard(self, i: int) -> tuple[sp.csr_matrix, np.ndarray]:
        """Shard ``i``'s rows (CSR over memory-mapped arrays) and labels."""
        if self._whole is not None:
            if i != 0:
                raise IndexError(i)
            return self._whole[:2]
        indptr, indices, data, y = (self._map(shard_key(self.key, i, a)) for a in ARRAYS)
        X = sp.csr_matrix(
            (data, indices, indptr), shape=(len(indptr) - 1, self.manifest.n_features), copy=False
        )
        return X, y

    def text(self, i: int) -> np.ndarray | None:
        """Shard ``i``'s text column values (rows x k, memory-mapped), None without any."""
        if self._whole is not None:
            if i != 0:
                raise IndexError(i)
            return self._whole[2]
        return self._map(shard_key(self.key, i, "text")) if self.manifest.text_columns else None

    def _map(self, key: str) -> np.ndarray:
        return np.load(self.store.local_path(key), mmap_mode="r", allow_pickle=False)

    def labels(self) -> Iterator[np.ndarray]:
        for i in range(self.manifest.n_shards):
            yield self.shard(i)[1]


def read_manifest(store: Store, key: str) -> Manifest:
    with store.open(manifest_key(key)) as fh:
        return Manifest.from_json(json.loads(fh.read()))


def load_npz(store: Store, key: str) -> StoredRows:
    """A data set in the form stored before the shards: the CSR arrays in one .npz, its labels
    and (a CSV with text columns) the text values."""
    with store.open(key) as fh, np.load(fh, allow_pickle=False) as f:
        shape = tuple(int(v) for v in f["shape"])
        X = sp.csr_matrix((f["data"], f["indices"], f["indptr"]), shape=shape)
        return X, f["y"], (f["text"] if "text" in f.files else None)


def open_dataset(store: Store, key: str) -> DatasetShards:
    """The one reader of stored data sets (training, evaluation, studies, predictions, labels)."""
    if not is_npz(key):
        return DatasetShards(store, key, read_manifest(store, key))
    X, y, text = load_npz(store, key)
    manifest = Manifest(
        n_samples=X.shape[0],
        n_features=X.shape[1],
        nnz=int(X.nnz),
        label_dtype=str(y.dtype),
        shard_rows=(X.shape[0],),
        shard_nnz=(int(X.nnz),),
        text_columns=0 if text is None else text.shape[1],
        text_dtype="<U1" if text is None else str(text.dtype),
    )
    return DatasetShards(store, key, manifest, whole=(X, y, text))


def delete_dataset(store: Store, key: str) -> None:
    """Remove a stored data set's keys (the manifest first: a half-deleted data set is none).
    Without a manifest (a parse process killed half-way) its shards are found one by one."""
    if is_npz(key):
        store.delete(key)
        return
    try:
        keys = read_manifest(store, key).keys(key)
    except FileNotFoundError:
        keys = _unlisted_shard_keys(store, key)
    store.delete(keys[-1])
    store.delete(*keys[:-1])


def _unlisted_shard_keys(store: Store, key: str) -> list[str]:
    """The keys of the shards written before the manifest: shards are written in order, each
    starting with its indptr."""
    keys: list[str] = []
    i = 0
    while True:
        try:
            with store.open(shard_key(key, i, "indptr")):
                pass
        except FileNotFoundError:
            return [*keys, stats_key(key), manifest_key(key)]
        keys += [shard_key(key, i, a) for a in (*ARRAYS, "text")]  # a missing key is ignored
        i += 1
