"""A model as one portable file (npz or JSON) that another installation imports: the document's
schema and the export.

Both forms carry the same document and arrays: the model's files (the estimator's export and the
service's metadata, as :mod:`app.services.model_registry.artifacts` keeps them) plus what its database row
says. The npz holds the document as a 0-d unicode array (``__model__``), so it loads with
``allow_pickle=False``; the JSON holds each array as ``{"dtype", "shape", "data"}``. An import is
read by import_read.py, checked by import_checks.py and rebuilt by import_rebuild.py.
"""

from __future__ import annotations

import io
import json
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from app.db.tables import Model
from app.services.datasets.create import MAX_NA_CHARS, MAX_NA_MARKERS

FORMAT = "pgs-model"
VERSION = 1
DOC_KEY = "__model__"
Label = int | float | str
# Strict: an import's "13" or 13.0 is not the integer 13, nor true the integer 1.
STRICT = ConfigDict(extra="forbid", strict=True)


class ModelFacts(BaseModel):
    """What the database row of a model says; checked against its arrays on import."""

    model_config = STRICT

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


class PreprocessingSettings(BaseModel):
    """The preprocessing's settings (``solver.export_preprocessor``); its fitted arrays are the
    document's ``preprocessing.*`` arrays."""

    model_config = STRICT

    format: Literal[1]
    n_features: int = Field(ge=1)
    scaling: Literal["standard", "maxabs", "none"]
    impute: bool
    categorical: list[int]
    ignore: list[int]
    sparse: bool


class EstimatorFiles(BaseModel):
    """The estimator's export (``export_model`` of solver/estimators): what ``load_model`` reads."""

    model_config = STRICT

    format: Literal[1]
    estimator: str = Field(max_length=64)
    params: dict[str, Any]
    n_features_in: int = Field(ge=1)
    n_iter: int = Field(ge=0)
    # The integer codes 0..k-1 the estimator was trained on (ModelFacts.classes are the labels).
    classes: list[int] | None
    nnz_weights: int | None = Field(default=None, ge=0)
    # Kernel models only.
    n_support: int | None = Field(default=None, ge=0)
    gamma: float | None = None


class ServiceFiles(BaseModel):
    """The service's metadata of a model (app/training/steps.py, ``package_model``)."""

    model_config = STRICT

    preprocessing: dict[str, Any] | None = None
    feature_names: list[str] | None = None
    label_name: str | None = None
    # The training CSV's missing markers (app/services/datasets/create.py bounds an upload's).
    na_values: list[Annotated[str, Field(min_length=1, max_length=MAX_NA_CHARS)]] | None = Field(
        default=None, max_length=MAX_NA_MARKERS
    )
    solver: str | None = None
    task: str | None = None
    n_features: int | None = None
    index_base: int | None = None
    classes: list[Label] | None = None
    job_id: int | None = None
    partial: bool = False
    partial_reason: str | None = None
    # A binary classifier's decision threshold (app/services/metrics/threshold.py).
    threshold: dict[str, Any] | None = None


class ModelFiles(BaseModel):
    model_config = STRICT

    estimator: EstimatorFiles
    service: ServiceFiles = Field(default_factory=ServiceFiles)


class PortableDoc(BaseModel):
    model_config = STRICT

    format: Literal["pgs-model"]
    version: Literal[1]
    model: ModelFacts
    files: ModelFiles = Field(description="the model's metadata: estimator, service")


def facts_of(row: Model) -> dict[str, Any]:
    return ModelFacts(
        solver=row.solver,
        task=row.task,  # type: ignore[arg-type]
        estimator=row.estimator,
        params=row.params,
        n_features=row.n_features,
        classes=row.classes,
        index_base=row.index_base,  # type: ignore[arg-type]
        metrics=exported_metrics(row.metrics),
        preprocessing=row.preprocessing,
        feature_names=row.feature_names,
    ).model_dump()


def exported_metrics(metrics: dict[str, Any] | None) -> dict[str, Any] | None:
    """A model's metrics as its export carries them: without its named coefficients, which
    derive from its arrays (an import computes them again rather than trusting them)."""
    if metrics is None:
        return None
    return {k: v for k, v in metrics.items() if k != "coefficients"}


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
