"""Trained models (``/v1/models``) and their predictions."""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
)

from app.schemas.coefficients import (
    COEFFICIENTS_DESCRIPTION,
    WARNINGS_DESCRIPTION,
    CoefficientSummary,
    FitWarning,
)
from app.schemas.common import Label, LabelsPatch, ModelName, Task
from app.schemas.jobs import ThresholdRead


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
    metrics: dict[str, Any] | None = Field(
        description="The job's final metrics (see JobRead.metrics), test among them"
    )
    nnz_weights: int | None = Field(
        default=None, description="Non-zero weights (support vectors for a kernel model)"
    )
    n_weights: int | None = Field(
        default=None,
        description="The linear predictor's weight count (features after one-hot encoding x outputs), "
        "the denominator of its density nnz_weights / n_weights; null for a kernel model",
    )
    threshold: ThresholdRead | None = Field(
        default=None,
        description="A binary classifier's decision threshold, used by /predict and batch predictions",
    )
    coefficients: CoefficientSummary | None = Field(default=None, description=COEFFICIENTS_DESCRIPTION)
    warnings: list[FitWarning] | None = Field(default=None, description=WARNINGS_DESCRIPTION)
    size_bytes: int
    partial: bool = Field(
        default=False,
        description="The last iterate of a run that was cancelled or reached "
        "the server's time limit, not a finished fit",
    )
    partial_reason: Literal["cancelled", "time_limit"] | None = None
    created_at: dt.datetime
    preprocessing: dict[str, Any] | None = Field(
        default=None,
        description="The fitted preprocessing's settings (as the job's); applied to every prediction",
    )
    feature_names: list[str] | None = Field(
        default=None, description="Names a prediction row may be keyed by (the CSV header)"
    )
    name: str | None = Field(default=None, description="The model name this is a version of")
    version: int | None = Field(default=None, description="Version number within the name")
    description: str | None = None
    tags: list[str] = []
    training_dataset: dict[str, Any] | None = Field(
        default=None, description="The training data set as it was, kept when it was deleted"
    )
    init_model_id: int | None = Field(
        default=None, description="The model its fit started from (its job's init_model); null: a cold start"
    )


class ModelPatch(LabelsPatch):
    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"examples": [{"name": "heart-clf", "description": "sigma 1e-4"}]}
    )

    name: ModelName | None = Field(
        default=None, description="Register as the next version of this name (null: no name)"
    )


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


# -- batch predictions ---------------------------------------------------------------------------

ExtraFeatures = Literal["fail", "ignore"]
