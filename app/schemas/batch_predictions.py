"""Batch predictions over a stored data set (``/v1/models/{id}/batch-predictions``)."""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
)

from app.schemas.models import ExtraFeatures


class BatchPredictionCreate(BaseModel):
    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"examples": [{"dataset_id": 1, "extra_features": "fail"}]}
    )

    dataset_id: int = Field(ge=1, description="Predict every row of this data set")
    extra_features: ExtraFeatures = Field(
        default="fail", description="Features beyond the model's width: fail, or ignore them"
    )


class BatchProgress(BaseModel):
    rows_done: int
    n_rows: int
    fraction: float


class BatchPredictionRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    model_id: int | None
    dataset_id: int | None
    extra_features: ExtraFeatures
    status: Literal["queued", "running", "succeeded", "failed", "cancelled"]
    progress: BatchProgress
    outputs: list[str] | None = Field(description="What the result holds: predictions, scores, probabilities")
    metrics: dict[str, Any] | None = Field(
        default=None,
        description="Once succeeded: the predictions' metrics against the data set's labels, the "
        "same set as a job's metrics.test (at the model's decision threshold); null when the "
        "labels are not of the model's kind, or there are none (metrics_note says which)",
    )
    metrics_note: str | None = Field(
        default=None,
        description="Once succeeded without metrics: why (the data set has no labels, or labels "
        "of another kind than the model's)",
    )
    error: str | None
    attempts: int
    cancel_requested: bool
    created_at: dt.datetime
    started_at: dt.datetime | None
    finished_at: dt.datetime | None


class BatchPredictionList(BaseModel):
    items: list[BatchPredictionRead]
    next_cursor: str | None
