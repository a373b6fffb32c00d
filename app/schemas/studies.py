"""Time-to-accuracy studies (``/v1/studies``)."""

from __future__ import annotations

import datetime as dt
import math
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from app.schemas.common import PrintableName, Task, check_printable_name

# -- time-to-accuracy studies --------------------------------------------------------------------


class StudyRun(BaseModel):
    model_config = ConfigDict(extra="forbid")

    solver: str = Field(default="pgs", description="Training algorithm: a name of GET /v1/solvers")
    params: dict[str, Any] = Field(
        default_factory=dict, description="The solver's parameters, validated as for a job"
    )
    # A legend entry follows the rule of names: no control or format characters.
    label: Annotated[str, AfterValidator(check_printable_name)] | None = Field(
        default=None, max_length=80, description="Legend text; default: solver and loss/p"
    )


class SelectSigma(BaseModel):
    model_config = ConfigDict(extra="forbid")

    grid: list[float] = Field(min_length=1, max_length=20, description="Candidate sigmas (> 0)")
    validation_fraction: float = Field(
        default=0.2,
        gt=0.0,
        lt=1.0,
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
                        {
                            "solver": "pgs",
                            "params": {"loss": "logistic", "p": 2.0, "sigma": 1e-3, "n_iter": 20000},
                        },
                        {
                            "solver": "pgs",
                            "params": {"loss": "logistic", "p": 1.8, "sigma": 1e-3, "n_iter": 20000},
                        },
                    ],
                    "sizes": [50, 100, 200],
                    "repeats": 5,
                    "targets": [0.8, 0.84],
                    "seed": 0,
                }
            ]
        },
    )

    name: PrintableName | None = None
    dataset_id: int = Field(description="Training data set; sizes are subsamples of it")
    test_dataset_id: int | None = Field(default=None, description="Evaluation data set")
    test_fraction: float | None = Field(
        default=None,
        gt=0.0,
        lt=1.0,
        description="Hold out this fraction of the data set (seeded by seed) for evaluation",
    )
    runs: list[StudyRun] = Field(min_length=1, max_length=16)
    sizes: list[int] = Field(min_length=1, max_length=32, description="Training-set sizes m (distinct, >= 2)")
    repeats: int = Field(default=3, ge=1, le=100, description="Subsamples (and runs) per size")
    targets: list[float] = Field(
        min_length=1,
        max_length=16,
        description="Test accuracies (or RMSEs for regression) whose time-to-target is measured",
    )
    seed: int = Field(default=0, ge=0, le=2**31 - 1, description="Seed of the split and subsamples")
    time_budget_s: float | None = Field(
        default=None,
        gt=0.0,
        le=86400,
        description="Per job: stop after this many solver seconds, or as many of wall-clock time",
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
