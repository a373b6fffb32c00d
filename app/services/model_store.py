"""Trained models on disk (arrays in .npz + JSON metadata, never pickle) and the in-memory LRU."""

from __future__ import annotations

import json
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from app.core.store import Store, as_store


def save_model_files(
    store: Store, meta: dict[str, Any], arrays: dict[str, np.ndarray]
) -> tuple[str, int]:
    """Write ``<stem>.npz`` then ``<stem>.json`` to the store; returns the stem (a key prefix,
    e.g. ``models/<uuid>``) and the total size. The JSON is written last, so a model whose .json
    exists is complete."""
    for name, arr in arrays.items():
        if np.asarray(arr).dtype.hasobject:
            raise TypeError(f"model array {name!r} has dtype object; it would need pickle")
    stem = f"models/{uuid.uuid4().hex}"
    npz_size = store.write(f"{stem}.npz", lambda fh: np.savez(fh, **arrays))  # type: ignore[arg-type]
    payload = json.dumps(meta, sort_keys=True).encode()

    def write_json(fh: IO[bytes]) -> None:
        fh.write(payload)

    json_size = store.write(f"{stem}.json", write_json)
    return stem, npz_size + json_size


def load_model_files(
    store: Store | Path, stem: str
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """``store``: the store, or the data dir of a local one."""
    store = as_store(store)
    with store.open(f"{stem}.json") as fh:
        meta = json.loads(fh.read())
    with store.open(f"{stem}.npz") as fh, np.load(fh, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    return meta, arrays


def stored_preprocessing(meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    """The LoadedModel fields of a model's preprocessing and names, rebuilt from its files."""
    from solver import load_preprocessor

    service = meta.get("service", {})
    settings = service.get("preprocessing")
    prefix = "preprocessing."
    preprocessor = None if settings is None else load_preprocessor(
        settings, {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)})
    return {"preprocessor": preprocessor, "preprocessing": settings,
            "feature_names": service.get("feature_names"), "label_name": service.get("label_name")}


def delete_model_files(store: Store | Path, stem: str) -> None:
    as_store(store).delete(f"{stem}.json", f"{stem}.npz")


@dataclass(frozen=True)
class LoadedModel:
    """What a prediction needs, all in memory."""

    model_id: int
    estimator: Any
    task: str
    n_features: int
    index_base: int
    # Original labels indexed by the integer codes the estimator was trained on.
    classes: np.ndarray | None
    # The fitted preprocessing (solver.make_preprocessor) and its settings; None: raw features.
    preprocessor: Any = None
    preprocessing: dict[str, Any] | None = None
    # The raw features' names (a CSV header): prediction rows may be keyed by them.
    feature_names: list[str] | None = None
    # The training CSV's label column: a CSV prediction body may carry it (it is left out).
    label_name: str | None = None

    @property
    def dense_input(self) -> bool:
        """Its preprocessing takes dense rows (CSV data): text, missing values, named columns."""
        return self.preprocessing is not None and not self.preprocessing["sparse"]

    @property
    def has_proba(self) -> bool:
        return hasattr(self.estimator, "predict_proba")


class ModelCache:
    """A thread-safe LRU of loaded models, so a prediction reads neither the disk nor the DB."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._items: OrderedDict[int, LoadedModel] = OrderedDict()
        self._lock = threading.Lock()
        # Counts evictions: a load that an eviction overtook is not cached (see get_or_load).
        self._evictions = 0
        self.hits = 0
        self.misses = 0

    def get(self, model_id: int) -> LoadedModel | None:
        with self._lock:
            item = self._items.get(model_id)
            if item is None:
                self.misses += 1
                return None
            self._items.move_to_end(model_id)
            self.hits += 1
            return item

    def get_or_load(self, model_id: int, load: Callable[[], LoadedModel]) -> LoadedModel:
        item = self.get(model_id)
        if item is not None:
            return item
        # Loading outside the lock: two racing first requests load twice, which is harmless.
        with self._lock:
            evictions = self._evictions
        item = load()
        with self._lock:
            if self._evictions != evictions:
                # A model was deleted while this one loaded: maybe this very one, after the load
                # had read it. Caching it would let a deleted model predict for ever; the
                # request in flight still gets its answer (it started before the delete ended).
                return item
            self._items[model_id] = item
            self._items.move_to_end(model_id)
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)
        return item

    def evict(self, model_id: int) -> None:
        """Forget a deleted model: call it after the deletion is committed."""
        with self._lock:
            self._items.pop(model_id, None)
            self._evictions += 1

    def __len__(self) -> int:
        return len(self._items)
