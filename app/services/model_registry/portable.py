"""A model as one portable file (npz or JSON) that another installation imports, checked strictly.

Both forms carry the same document and arrays: the model's files (the estimator's export and the
service's metadata, as :mod:`app.services.model_registry.artifacts` keeps them) plus what its database row
says. The npz holds the document as a 0-d unicode array (``__model__``), so it loads with
``allow_pickle=False``; the JSON holds each array as ``{"dtype", "shape", "data"}``.
"""

from __future__ import annotations

import io
import json
import math
import zipfile
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.core.errors import field_error, invalid
from app.db.tables import Model
from app.services.model_registry.artifacts import LoadedModel, stored_preprocessing
from app.services.model_registry.predict import predict

FORMAT = "pgs-model"
VERSION = 1
DOC_KEY = "__model__"
# Array dtypes a model has: weights and statistics (float64), categories (unicode), counts.
DTYPES = {"float64", "int64", "int32"}
Label = int | float | str


class ModelFacts(BaseModel):
    """What the database row of a model says; checked against its arrays on import."""

    model_config = ConfigDict(extra="forbid")

    solver: str = Field(max_length=32)
    task: Literal["binary", "multiclass", "regression"]
    estimator: str = Field(max_length=64)
    params: dict[str, Any]
    n_features: int = Field(ge=1, le=2**31 - 1)
    classes: list[Label] | None
    index_base: Literal[0, 1]
    metrics: dict[str, Any] | None = None
    preprocessing: dict[str, Any] | None = None
    feature_names: list[str] | None = None


class PortableDoc(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: Literal["pgs-model"]
    version: Literal[1]
    model: ModelFacts
    files: dict[str, Any] = Field(description="the model's metadata: estimator, service")


def facts_of(row: Model) -> dict[str, Any]:
    return ModelFacts(
        solver=row.solver,
        task=row.task,  # type: ignore[arg-type]
        estimator=row.estimator,
        params=row.params,
        n_features=row.n_features,
        classes=row.classes,
        index_base=row.index_base,  # type: ignore[arg-type]
        metrics=row.metrics,
        preprocessing=row.preprocessing,
        feature_names=row.feature_names,
    ).model_dump()


def document(facts: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    return {"format": FORMAT, "version": VERSION, "model": facts, "files": meta}


def to_npz(doc: dict[str, Any], arrays: dict[str, np.ndarray]) -> bytes:
    buf = io.BytesIO()
    payload = {DOC_KEY: np.asarray(json.dumps(doc)), **arrays}
    np.savez_compressed(buf, **payload)  # type: ignore[arg-type]
    return buf.getvalue()


def to_json(doc: dict[str, Any], arrays: dict[str, np.ndarray]) -> bytes:
    encoded = {
        name: {
            "dtype": "str" if a.dtype.kind == "U" else a.dtype.name,
            "shape": list(a.shape),
            "data": a.ravel().tolist(),
        }
        for name, a in arrays.items()
    }
    return json.dumps({**doc, "arrays": encoded}, allow_nan=False).encode()


# -- import -------------------------------------------------------------------------------------


def _refuse(message: str) -> Exception:
    return invalid(f"not a model export: {message}", [field_error(["body"], message)])


def from_npz(body: bytes, max_bytes: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The document and arrays of an npz export; its members may inflate to ``max_bytes`` in
    all (a small compressed file could otherwise claim gigabytes)."""
    try:
        with zipfile.ZipFile(io.BytesIO(body)) as archive:
            inflated = sum(info.file_size for info in archive.infolist())
        if inflated > max_bytes:
            raise _refuse(
                f"its arrays inflate to {inflated} bytes; the limit is {max_bytes} "
                "(PGS_MAX_DECOMPRESSED_BYTES)"
            )
        with np.load(io.BytesIO(body), allow_pickle=False) as f:
            arrays = {k: f[k] for k in f.files}
    except (
        ValueError,
        OSError,
        EOFError,
        zipfile.BadZipFile,
        KeyError,
        NotImplementedError,
        RuntimeError,
    ) as exc:
        # RuntimeError: an encrypted member; NotImplementedError: an unknown compression.
        raise _refuse(f"not a readable .npz file ({exc})") from exc
    text = arrays.pop(DOC_KEY, None)
    if text is None or text.dtype.kind != "U" or text.ndim != 0:
        raise _refuse(f"the .npz has no {DOC_KEY} document")
    return _json_object(str(text)), arrays


def from_json(body: bytes) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    doc = _json_object(body)
    encoded = doc.pop("arrays", None)
    if not isinstance(encoded, dict):
        raise _refuse("the JSON has no 'arrays' object")
    return doc, {name: _array(name, spec) for name, spec in encoded.items()}


def _json_object(text: str | bytes) -> dict[str, Any]:
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise _refuse(f"invalid JSON ({exc})") from exc
    if not isinstance(doc, dict):
        raise _refuse("the document is not a JSON object")
    return doc


def _array(name: str, spec: Any) -> np.ndarray:
    if not isinstance(spec, dict) or set(spec) != {"dtype", "shape", "data"}:
        raise _refuse(f"array {name!r} must be an object with dtype, shape and data")
    dtype, shape, data = spec["dtype"], spec["shape"], spec["data"]
    if dtype not in DTYPES | {"str"}:
        raise _refuse(f"array {name!r}: dtype {dtype!r} is not one of {sorted(DTYPES | {'str'})}")
    if not isinstance(shape, list) or len(shape) > 2 or not all(isinstance(d, int) and d >= 0 for d in shape):
        raise _refuse(f"array {name!r}: shape must be a list of at most 2 sizes")
    if not isinstance(data, list) or len(data) != math.prod(shape):
        raise _refuse(f"array {name!r}: data must be a list of {math.prod(shape)} values")
    kind = str if dtype == "str" else (float if dtype == "float64" else int)
    if not all(type(v) is kind or (kind is float and type(v) is int) for v in data):
        raise _refuse(f"array {name!r}: every value must be a {kind.__name__}")
    return np.asarray(data, dtype=str if dtype == "str" else dtype).reshape(shape)


def checked_import(doc: dict[str, Any], arrays: dict[str, np.ndarray]) -> tuple[PortableDoc, LoadedModel]:
    """The document and the model it describes, loaded and run on one row: anything that would
    fail a prediction later fails the import now (a 422)."""
    try:
        parsed = PortableDoc.model_validate(doc)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise _refuse(f"{where}: {first['msg']}") from exc
    for name, a in arrays.items():
        if a.dtype.kind not in "fiU":
            raise _refuse(f"array {name!r} has dtype {a.dtype}")
    from solver import load_model

    facts = parsed.model
    try:
        estimator = load_model(parsed.files["estimator"], arrays)
        loaded = LoadedModel(
            model_id=0,
            owner="",  # not stored yet: only checked here
            estimator=estimator,
            task=facts.task,
            n_features=facts.n_features,
            index_base=facts.index_base,
            classes=None if facts.classes is None else np.asarray(facts.classes),
            **stored_preprocessing(parsed.files, arrays),
        )
        _check_facts(facts, loaded)
        predict(loaded, _one_row(loaded))
    except (ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
        raise _refuse(f"the model cannot be rebuilt or does not predict: {exc}") from exc
    return parsed, loaded


def _check_facts(facts: ModelFacts, loaded: LoadedModel) -> None:
    n_outputs = len(getattr(loaded.estimator, "classes_", []))
    if facts.task == "regression":
        if facts.classes is not None:
            raise ValueError("a regression model has no classes")
    elif facts.classes is None or len(facts.classes) != n_outputs or n_outputs < 2:
        raise ValueError(f"classes must list the estimator's {n_outputs} classes")
    if loaded.preprocessing is not None and loaded.preprocessing["n_features"] != facts.n_features:
        raise ValueError("the preprocessing's width is not n_features")
    if loaded.preprocessing is None and loaded.estimator.n_features_in_ != facts.n_features:
        raise ValueError("the estimator's width is not n_features")
    if facts.feature_names is not None and len(facts.feature_names) != facts.n_features:
        raise ValueError("feature_names must name n_features columns")


def _one_row(model: LoadedModel) -> Any:
    prep = model.preprocessing
    if prep is not None and prep["sparse"]:
        return sp.csr_matrix((1, model.n_features))
    if prep is None or not prep["categorical"]:
        return np.zeros((1, model.n_features))
    row = np.zeros((1, model.n_features), dtype=object)
    row[0, prep["categorical"]] = "x"  # an unseen category encodes as zeros
    return row
