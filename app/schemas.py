"""Pydantic request and response models of the HTTP API (XCreate / XRead)."""

from __future__ import annotations

import datetime as dt
import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Task = Literal["binary", "multiclass", "regression"]
Label = int | float | str


class DatasetRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str
    format: Literal["svmlight", "csv"]
    compressed: bool
    n_samples: int
    n_features: int
    nnz: int
    task: Task
    classes: list[Label] | None = Field(description="Sorted distinct labels (classification)")
    index_base: int = Field(description="1 if svmlight feature indices in the file were 1-based")
    sha256: str = Field(description="SHA-256 of the file as uploaded")
    size_bytes: int = Field(description="Size of the file as uploaded")
    created_at: dt.datetime


class DatasetList(BaseModel):
    items: list[DatasetRead]
    next_cursor: str | None = Field(description="Pass as ?cursor= for the next page; null at the end")


class JobCreate(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "dataset_id": 1,
                    "test_fraction": 0.25,
                    "solver": "pgs",
                    "params": {"loss": "logistic", "sigma": 1e-4, "n_iter": 20000,
                               "random_state": 0},
                    "targets": [0.8, 0.84],
                }
            ]
        },
    )

    dataset_id: int = Field(description="Training data set")
    test_dataset_id: int | None = Field(default=None, description="Evaluation data set")
    test_fraction: float | None = Field(
        default=None, gt=0.0, lt=1.0, description="Hold out this fraction of the training set"
    )
    split_seed: int = Field(default=0, ge=0, description="Seed of the test_fraction split")
    solver: str = Field(default="pgs", description="Training algorithm (see the registry)")
    params: dict[str, Any] = Field(
        default_factory=dict,
        description="Estimator parameters (PGSClassifier / PGSRegressor), validated before queueing",
    )
    targets: list[float] = Field(
        default_factory=list, max_length=64,
        description="Test accuracies (or RMSEs for regression) whose time-to-target is recorded",
    )
    time_budget_s: float | None = Field(
        default=None, gt=0.0, le=7 * 86400, description="Stop after this many solver seconds"
    )

    @field_validator("targets")
    @classmethod
    def _finite_targets(cls, v: list[float]) -> list[float]:
        if not all(math.isfinite(t) for t in v):
            raise ValueError("targets must be finite numbers")
        return v

    @model_validator(mode="after")
    def _one_evaluation_source(self) -> JobCreate:
        if self.test_dataset_id is not None and self.test_fraction is not None:
            raise ValueError("give test_dataset_id or test_fraction, not both")
        return self


class JobProgress(BaseModel):
    iteration: int | None
    n_iter: int | None
    fraction: float | None = Field(description="iteration / n_iter")
    samples_seen: int | None


class JobRead(BaseModel):
    id: int
    status: Literal["queued", "running", "succeeded", "failed", "cancelled"]
    solver: str
    task: Task
    dataset_id: int | None
    test_dataset_id: int | None
    test_fraction: float | None
    split_seed: int
    params: dict[str, Any]
    targets: list[float]
    time_budget_s: float | None
    progress: JobProgress
    metrics: dict[str, Any] | None = Field(
        description="solver_seconds, objective, test_accuracy (classification) or test_rmse "
        "(regression), time_to_target: {target: solver seconds or null}"
    )
    stop_reason: str | None = Field(
        description="completed | target_score | time_budget | cancelled"
    )
    error: str | None
    model_id: int | None
    attempts: int
    cancel_requested: bool
    created_at: dt.datetime
    started_at: dt.datetime | None
    finished_at: dt.datetime | None


class JobList(BaseModel):
    items: list[JobRead]
    next_cursor: str | None


class TracePointRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    iteration: int
    samples_seen: int
    solver_seconds: float
    objective: float | None
    test_score: float | None


class TraceRead(BaseModel):
    job_id: int
    score_name: Literal["accuracy", "rmse"] | None
    points: list[TracePointRead]


class ModelRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    solver: str
    task: Task
    estimator: str
    params: dict[str, Any]
    n_features: int
    classes: list[Label] | None
    job_id: int | None
    dataset_id: int | None
    metrics: dict[str, Any] | None
    size_bytes: int
    created_at: dt.datetime


class ModelList(BaseModel):
    items: list[ModelRead]
    next_cursor: str | None


class SparseInstance(BaseModel):
    indices: list[int] = Field(description="0-based feature indices, distinct")
    values: list[float]


class PredictRequest(BaseModel):
    """Documentation of the JSON body; the route parses it by hand for speed."""

    instances: list[list[float] | SparseInstance] = Field(min_length=1)


class PredictResponse(BaseModel):
    predictions: list[Label]
    scores: list[float] | list[list[float]] = Field(
        description="Decision values: one per row (binary, regression) or one per class"
    )
    probabilities: list[list[float]] | None = Field(
        default=None, description="Class probabilities (logistic models only), columns = classes"
    )
