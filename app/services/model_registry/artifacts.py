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

from app.core.errors import not_found
from app.core.storage.base import Store
from app.core.storage.local import as_store
from app.db.engine import transaction
from app.db.tables import Model


def save_model_files(store: Store, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> tuple[str, int]:
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

    try:
        json_size = store.write(f"{stem}.json", write_json)
    except BaseException:  # a full disk: no half model left behind
        store.delete(f"{stem}.npz")
        raise
    return stem, npz_size + json_size


def load_model_files(store: Store | Path, stem: str) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
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
    preprocessor = (
        None
        if settings is None
        else load_preprocessor(
            settings, {k[len(prefix) :]: v for k, v in arrays.items() if k.startswith(prefix)}
        )
    )
    return {
        "preprocessor": preprocessor,
        "preprocessing": settings,
        "feature_names": service.get("feature_names"),
        "label_name": service.get("label_name"),
        "na_values": service.get("na_values"),
    }


def delete_model_files(store: Store | Path, stem: str) -> None:
    as_store(store).delete(f"{stem}.json", f"{stem}.npz")


@dataclass(frozen=True)
class LoadedModel:
    """What a prediction needs, all in memory."""

    model_id: int
    # Whose model it is (app/core/tenants.py): a cached model is checked against the caller.
    owner: str
    estimator: Any
    task: str
    n_features: int
    index_base: int
    # Original labels indexed by the integer codes the estimator was trained on.
    classes: np.ndarray | None
    # The bytes of the estimator's arrays: what holding it in the cache costs.
    nbytes: int = 0
    # The fitted preprocessing (solver.make_preprocessor) and its settings; None: raw features.
    preprocessor: Any = None
    preprocessing: dict[str, Any] | None = None
    # The raw features' names (a CSV header): prediction rows may be keyed by them.
    feature_names: list[str] | None = None
    # The training CSV's label column: a CSV prediction body may carry it (it is left out).
    label_name: str | None = None
    # The training CSV's missing markers besides the empty cell; None: the upload defaults.
    na_values: list[str] | None = None
    # A binary classifier's decision threshold as stored (app/services/metrics/threshold.py);
    # None: the default (a model trained before thresholds, or not a binary classifier).
    threshold: dict[str, Any] | None = None

    @property
    def dense_input(self) -> bool:
        """Its preprocessing takes dense rows (CSV data): text, missing values, named columns."""
        return self.preprocessing is not None and not self.preprocessing["sparse"]

    @property
    def has_proba(self) -> bool:
        return hasattr(self.estimator, "predict_proba")


def estimator_nbytes(estimator: Any) -> int:
    """The bytes of an estimator's array attributes (dense or scipy.sparse): its memory, less a
    few hundred bytes of Python objects."""
    total = 0
    for value in vars(estimator).values():
        if isinstance(value, np.ndarray):
            total += value.nbytes
        elif hasattr(value, "data") and hasattr(value, "indices") and hasattr(value, "indptr"):
            total += value.data.nbytes + value.indices.nbytes + value.indptr.nbytes
    return total


class ModelCache:
    """A thread-safe LRU of loaded models, bounded by their bytes (``capacity_bytes``), so a
    prediction reads neither the disk nor the DB. A model larger than the whole capacity is
    not cached: each prediction loads it again rather than evicting every other model."""

    def __init__(self, capacity_bytes: int) -> None:
        self.capacity_bytes = capacity_bytes
        self._items: OrderedDict[int, LoadedModel] = OrderedDict()
        self._bytes = 0
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
            if self._evictions != evictions or item.nbytes > self.capacity_bytes:
                # A model was deleted while this one loaded: maybe this very one, after the load
                # had read it. Caching it would let a deleted model predict for ever; the
                # request in flight still gets its answer (it started before the delete ended).
                # Or the model alone is larger than the cache: it would evict every other one.
                return item
            self._put(item)
        return item

    def _put(self, item: LoadedModel) -> None:
        previous = self._items.pop(item.model_id, None)
        if previous is not None:
            self._bytes -= previous.nbytes
        self._items[item.model_id] = item
        self._bytes += item.nbytes
        while self._bytes > self.capacity_bytes:
            _, oldest = self._items.popitem(last=False)
            self._bytes -= oldest.nbytes

    def evict(self, model_id: int) -> None:
        """Forget a deleted model: call it after the deletion is committed."""
        with self._lock:
            item = self._items.pop(model_id, None)
            if item is not None:
                self._bytes -= item.nbytes
            self._evictions += 1

    @property
    def nbytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._items)


def load_for_prediction(store: Store, factory: Any, model_id: int) -> LoadedModel:
    """The model ``model_id`` read from the database and the store (what the cache holds): the
    same for /predict and for batch predictions."""
    from solver import load_model  # the solver imports Numba: not at this module's import

    with transaction(factory) as s:
        row = s.get(Model, model_id)
        if row is None:
            raise not_found("model", model_id)
        stem, classes, task, owner = row.file_stem, row.classes, row.task, row.owner
        n_features, index_base = row.n_features, row.index_base
    try:
        meta, arrays = load_model_files(store, stem)
    except FileNotFoundError:
        # A DELETE committed between the row read above and the file read: the model is gone.
        raise not_found("model", model_id) from None
    estimator = load_model(meta["estimator"], arrays)
    return LoadedModel(
        model_id=model_id,
        owner=owner,
        estimator=estimator,
        task=task,
        n_features=n_features,
        index_base=index_base,
        classes=None if classes is None else np.asarray(classes),
        nbytes=estimator_nbytes(estimator),
        threshold=meta.get("service", {}).get("threshold"),
        **stored_preprocessing(meta, arrays),
    )
