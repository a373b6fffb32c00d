"""Pydantic request and response models of the HTTP API (XCreate / XRead)."""

from __future__ import annotations

import datetime as dt
import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field, field_validator, model_validator

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
    feature_names: list[str] | None = Field(
        default=None, description="The CSV header's feature columns (null without a header)")
    label_name: str | None = Field(default=None, description="The CSV header's label column")
    text_columns: list[int] | None = Field(
        default=None, description="0-based feature columns holding text (CSV; one-hot encoded "
        "by a job's preprocessing)")
    n_missing: int = Field(default=0, description="Empty numeric CSV cells (imputed by a job's "
                           "preprocessing)")

    @computed_field(description="What the data set cannot be used for (stored all the same)")
    def warnings(self) -> list[str]:
        if self.task != "regression" and len(self.classes or []) < 2:
            # Kept: it can still evaluate a model (test_dataset_id), but no job can train on it.
            return [f"the data set has a single class ({(self.classes or ['?'])[0]!r}): no "
                    "classifier can be trained on it; it can serve as evaluation data"]
        return []


class DatasetList(BaseModel):
    items: list[DatasetRead]
    next_cursor: str | None = Field(description="Pass as ?cursor= for the next page; null at the end")


class Preprocessing(BaseModel):
    """Learned on the training rows only (never the held-out split), stored with the model and
    applied at prediction, so callers always send raw features."""

    model_config = ConfigDict(extra="forbid")

    scaling: Literal["auto", "standard", "maxabs", "none"] = Field(
        default="auto",
        description="auto: standard (zero mean, unit variance) for CSV data, maxabs (keeps "
        "sparsity) for svmlight data",
    )
    impute: bool = Field(
        default=True, description="Missing numeric CSV values become the training mean"
    )
    ignore: list[int | str] = Field(
        default_factory=list, max_length=10_000,
        description="Columns left out (an id column): CSV header names or 0-based feature indices",
    )


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
    preprocessing: Preprocessing | None = Field(
        default_factory=Preprocessing,
        description="Scaling, imputation, one-hot encoding of text columns and ignored columns, "
        "fitted on the training rows; null: the raw features as they are",
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
    model_config = ConfigDict(from_attributes=True)

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
    preprocessing: dict[str, Any] | None = Field(
        default=None, description="The resolved preprocessing: scaling, impute, categorical "
        "(one-hot encoded columns), ignore (column indices), sparse; null: raw features")
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
    # Set for the jobs of a study (null otherwise); see StudyCreate.
    study_id: int | None = None
    study_run: int | None = Field(default=None, description="Index of the study's run")
    study_repeat: int | None = None
    train_size: int | None = Field(
        default=None, description="Trained on a seeded subsample of this many training rows"
    )
    subsample_seed: int | None = None
    select_sigma: dict[str, Any] | None = Field(
        default=None, description="Sigma grid searched on a validation split of the training rows"
    )


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
    nnz_weights: int | None = None
    data_accesses: int | None = None


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
    nnz_weights: int | None = None
    size_bytes: int
    created_at: dt.datetime
    preprocessing: dict[str, Any] | None = Field(
        default=None, description="The fitted preprocessing's settings (as the job's); applied "
        "to every prediction")
    feature_names: list[str] | None = Field(
        default=None, description="Names a prediction row may be keyed by (the CSV header)")


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


# -- time-to-accuracy studies --------------------------------------------------------------------


class StudyRun(BaseModel):
    model_config = ConfigDict(extra="forbid")

    solver: str = Field(default="pgs", description="Training algorithm (see the registry)")
    params: dict[str, Any] = Field(
        default_factory=dict, description="Estimator parameters, validated as for a job"
    )
    label: str | None = Field(
        default=None, max_length=80, description="Legend text; default: solver and loss/p"
    )


class SelectSigma(BaseModel):
    model_config = ConfigDict(extra="forbid")

    grid: list[float] = Field(min_length=1, max_length=20, description="Candidate sigmas (> 0)")
    validation_fraction: float = Field(
        default=0.2, gt=0.0, lt=1.0,
        description="Part of each job's m training rows held out to score the grid",
    )

    @field_validator("grid")
    @classmethod
    def _positive_distinct(cls, v: list[float]) -> list[float]:
        if not all(math.isfinite(s) and s > 0 for s in v):
            raise ValueError("grid values must be finite and > 0")
        if len(set(v)) != len(v):
            raise ValueError("grid values must be distinct")
        return v


class StudyCreate(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "dataset_id": 1,
                    "test_fraction": 0.25,
                    "runs": [
                        {"solver": "pgs", "params": {"loss": "logistic", "p": 2.0,
                                                     "sigma": 1e-3, "n_iter": 20000}},
                        {"solver": "pgs", "params": {"loss": "logistic", "p": 1.8,
                                                     "sigma": 1e-3, "n_iter": 20000}},
                    ],
                    "sizes": [50, 100, 200],
                    "repeats": 5,
                    "targets": [0.8, 0.84],
                    "seed": 0,
                }
            ]
        },
    )

    name: str | None = Field(default=None, max_length=255)
    dataset_id: int = Field(description="Training data set; sizes are subsamples of it")
    test_dataset_id: int | None = Field(default=None, description="Evaluation data set")
    test_fraction: float | None = Field(
        default=None, gt=0.0, lt=1.0,
        description="Hold out this fraction of the data set (seeded by seed) for evaluation",
    )
    runs: list[StudyRun] = Field(min_length=1, max_length=16)
    sizes: list[int] = Field(
        min_length=1, max_length=32, description="Training-set sizes m (distinct, >= 2)"
    )
    repeats: int = Field(default=3, ge=1, le=100, description="Subsamples (and runs) per size")
    targets: list[float] = Field(
        min_length=1, max_length=16,
        description="Test accuracies (or RMSEs for regression) whose time-to-target is measured",
    )
    seed: int = Field(default=0, ge=0, le=2**31 - 1, description="Seed of the split and subsamples")
    time_budget_s: float | None = Field(
        default=None, gt=0.0, le=86400, description="Per job: stop after this many solver seconds"
    )
    select_sigma: SelectSigma | None = Field(
        default=None, description="Choose sigma per job on a validation split of its m rows"
    )

    @field_validator("targets")
    @classmethod
    def _finite_targets(cls, v: list[float]) -> list[float]:
        if not all(math.isfinite(t) for t in v):
            raise ValueError("targets must be finite numbers")
        if len(set(v)) != len(v):
            raise ValueError("targets must be distinct")
        return v

    @field_validator("sizes")
    @classmethod
    def _sizes(cls, v: list[int]) -> list[int]:
        if any(m < 2 for m in v):
            raise ValueError("sizes must be at least 2")
        if len(set(v)) != len(v):
            raise ValueError("sizes must be distinct")
        return v

    @model_validator(mode="after")
    def _one_evaluation_source(self) -> StudyCreate:
        if (self.test_dataset_id is None) == (self.test_fraction is None):
            raise ValueError("give exactly one of test_dataset_id and test_fraction")
        return self


StudyStatus = Literal["queued", "running", "succeeded", "failed", "cancelled", "partial"]


class StudyProgress(BaseModel):
    total: int = Field(description="Jobs of the study")
    done: int = Field(description="Jobs in a terminal state")
    fraction: float
    queued: int
    running: int
    succeeded: int
    failed: int
    cancelled: int


class StudyRow(BaseModel):
    run: int = Field(description="Index into runs")
    solver: str
    label: str
    m: int = Field(description="Training-set size")
    target: float
    repeats: int = Field(description="Succeeded jobs of this run and size (the sample)")
    reached: int = Field(description="How many of them reached the target")
    median_seconds: float | None = Field(
        description="Median solver seconds to the target; a run that never reached it counts "
        "as infinitely slow, so this is null when half or more did not"
    )
    min_seconds: float | None = Field(description="Fastest run that reached the target")
    max_seconds: float | None = Field(description="Slowest run that reached the target")
    median_iterations: float | None = Field(description="Same rule as median_seconds")
    min_iterations: int | None
    max_iterations: int | None
    selected_sigmas: list[float] | None = Field(
        description="Sigma chosen by each repeat's validation split (select_sigma only)"
    )


class StudyRead(BaseModel):
    id: int
    name: str | None
    status: StudyStatus = Field(
        description="From its jobs: queued, running, succeeded, failed, cancelled, or partial "
        "(all finished, in more than one way)"
    )
    task: Task
    score_name: Literal["accuracy", "rmse"]
    dataset_id: int | None
    test_dataset_id: int | None
    test_fraction: float | None
    seed: int
    n_train: int = Field(description="Rows of the training part the sizes are drawn from")
    runs: list[StudyRun]
    sizes: list[int]
    repeats: int
    targets: list[float]
    time_budget_s: float | None
    select_sigma: SelectSigma | None
    cancel_requested: bool
    progress: StudyProgress
    created_at: dt.datetime
    finished_at: dt.datetime | None = Field(description="When its last job ended, once all have")
    table: list[StudyRow] | None = Field(
        default=None, description="One row per (run, m, target); left out of listings"
    )


class StudyList(BaseModel):
    items: list[StudyRead]
    next_cursor: str | None
