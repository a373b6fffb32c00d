"""What a linear model learned, by name (its weights per raw column), and warnings about a fit."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.schemas.common import Label


class Coefficient(BaseModel):
    name: str = Field(
        description="The raw column's name (CSV header; else its index as the data wrote it, an "
        "svmlight file's 1-based index), 'column=value' for a category of a text column"
    )
    column: int = Field(description="0-based raw column")
    category: str | None = Field(description="The category of a one-hot encoded text column")
    weight: float = Field(
        description="Per unit of the raw column (scaling undone; a category's weight applies to "
        "its 0/1 indicator)"
    )
    model_weight: float = Field(
        description="The solver's own weight on the preprocessed (scaled) feature: comparable "
        "across features, the order the lists follow"
    )


class OutputCoefficients(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    class_: Label | None = Field(
        alias="class",
        description="The class these weights score (a binary classifier's second class: a "
        "positive score predicts it); null for a regressor",
    )
    intercept: float = Field(
        description="Per unit of the raw columns (the centring of standard scaling moved in)"
    )
    nonzero: int = Field(description="Non-zero weights of this class")
    positive: list[Coefficient] = Field(description="The largest positive weights, largest first")
    negative: list[Coefficient] = Field(description="The most negative weights, most negative first")


class CoefficientSummary(BaseModel):
    top_k: int = Field(description="At most this many weights each side, per class")
    outputs: list[OutputCoefficients] = Field(description="One per class (multiclass), else one")


class CoefficientPage(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    class_: Label | None = Field(alias="class", description="The class these weights score")
    intercept: float
    items: list[Coefficient] = Field(description="By |model_weight|, largest first")
    total: int = Field(description="Non-zero weights of this class")
    offset: int
    limit: int


class FitWarning(BaseModel):
    code: Literal["zero_weights", "majority_class", "no_better_than_mean"] = Field(
        description="zero_weights: every weight is (near) zero; majority_class: the test accuracy "
        "is no better than always predicting the majority class; no_better_than_mean: test R^2 <= 0"
    )
    message: str


COEFFICIENTS_DESCRIPTION = (
    "What a linear model learned, by name: per class, the intercept and the top_k largest "
    "positive and most negative weights per unit of the raw columns (GET "
    "/v1/models/{id}/coefficients pages through all); null for a kernel model or one stored "
    "before coefficients were kept"
)
WARNINGS_DESCRIPTION = (
    "Warnings for a degenerate model found at the end of its fit: every weight (near) zero, or a "
    "test score no better than the majority class (R^2 <= 0 for regression); empty for a sound "
    "model, null before the fit ends"
)
