"""Data sets (``/v1/datasets``)."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    computed_field,
    model_validator,
)

from app.schemas.common import Label, LabelsPatch, PrintableName, Task

# What a data set without labels is for, as its answer and the refusals say.
NO_LABELS_USE = (
    "it was uploaded with labelled=false, to predict its rows in a batch "
    "(POST /v1/models/{model_id}/predictions); no job can train on or evaluate it"
)


class DatasetRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str
    format: Literal["svmlight", "csv", "parquet", "arrow"]
    compressed: bool
    n_samples: int
    n_features: int
    nnz: int
    labelled: bool = Field(
        default=True,
        description="false: rows without labels (uploaded with labelled=false) to predict in a "
        "batch; no job trains on or evaluates them",
    )
    task: Task | None = Field(description="binary, multiclass or regression; null without labels")
    classes: list[Label] | None = Field(description="Sorted distinct labels (classification)")
    index_base: int = Field(description="1 if svmlight feature indices in the file were 1-based")
    sha256: str = Field(description="SHA-256 of the file as uploaded")
    size_bytes: int = Field(description="Size of the file as uploaded")
    created_at: dt.datetime
    feature_names: list[str] | None = Field(
        default=None,
        description="The feature columns' names: a CSV header's, a Parquet or Arrow file's (null for "
        "CSV without a header)",
    )
    label_name: str | None = Field(
        default=None, description="The label column's name (CSV header, Parquet, Arrow)"
    )
    text_columns: list[int] | None = Field(
        default=None,
        description="0-based feature columns holding text (CSV, Parquet, Arrow; one-hot encoded by a "
        "job's preprocessing)",
    )
    n_missing: int = Field(
        default=0,
        description="Missing numeric cells: CSV cells that are empty or a na_values marker, Parquet "
        "and Arrow nulls (imputed by a job's preprocessing)",
    )
    na_values: list[str] | None = Field(
        default=None,
        description="CSV: the cells its upload read as missing besides the empty one; its models read "
        "a CSV sent to /predict with the same markers (null: another format)",
    )
    description: str | None = None
    tags: list[str] = []
    task_source: Literal["guessed", "declared"] = Field(
        description="Whether the task was guessed from the labels or declared (upload or PATCH)"
    )

    @model_validator(mode="after")
    def _no_task_without_labels(self) -> DatasetRead:
        # The row keeps a task for its stored zeros; the data set has none to show.
        if not self.labelled:
            self.task, self.classes = None, None
        return self

    @computed_field(description="How the task was chosen, and how to change it")
    def task_note(self) -> str:
        if not self.labelled:
            return f"no labels: {NO_LABELS_USE}"
        change = f'PATCH /v1/datasets/{self.id} with {{"task": "%s"}} if they are %s'
        if self.task_source == "declared":
            return f"{self.task}, as declared"
        if self.task == "regression":
            return (
                "regression, guessed: the labels are not all integers, or there are more "
                "than 20 distinct ones; " + change % ("classification", "classes")
            )
        return f"{self.task}, guessed from {len(self.classes or [])} distinct label(s); " + change % (
            "regression",
            "values to regress",
        )

    @computed_field(description="What the data set cannot be used for (stored all the same)")
    def warnings(self) -> list[str]:
        if not self.labelled:
            return [f"the data set has no labels: {NO_LABELS_USE}"]
        if self.task != "regression" and len(self.classes or []) < 2:
            # Kept: it can still evaluate a model (test_dataset_id), but no job can train on it.
            return [
                f"the data set has a single class ({(self.classes or ['?'])[0]!r}): no "
                "classifier can be trained on it; it can serve as evaluation data"
            ]
        return []


class CategoryCount(BaseModel):
    value: str = Field(description="The category (the empty string: an empty or missing cell)")
    count: int = Field(description="Rows with this value")


class ColumnStatsRead(BaseModel):
    """One column's statistics over every row of the data set, as the shard writer computed them
    while parsing (what a job's default preprocessing is fitted from)."""

    index: int = Field(description="0-based feature column (an svmlight file's 1-based index minus 1)")
    name: str | None = Field(description="The column's name (CSV header, Parquet, Arrow)")
    kind: Literal["numeric", "text"]
    count: int = Field(
        description="Rows with a value: numeric, every row but the missing cells (a sparse row's "
        "implicit zeros are values); text, every row but the empty or missing cells"
    )
    missing: int = Field(description="Rows whose cell is missing (numeric) or empty (text)")
    mean: float | None = Field(description="Mean of the present values (numeric)")
    std: float | None = Field(description="Population standard deviation of the present values (numeric)")
    min: float | None = Field(description="Smallest present value (numeric)")
    max: float | None = Field(description="Largest present value (numeric)")
    max_abs: float | None = Field(description="Largest absolute present value (numeric)")
    distinct: int | None = Field(
        description="Distinct values (text); a lower bound when categories_truncated"
    )
    categories_truncated: bool | None = Field(
        description="More distinct values than the statistics keep (1000): the most frequent are "
        "counted, and a job reads this column's categories from its rows (text)"
    )
    top_categories: list[CategoryCount] | None = Field(
        description="The most frequent values, most frequent first (text, at most 10)"
    )


class ColumnPage(BaseModel):
    items: list[ColumnStatsRead]
    total: int = Field(description="Columns listed: every column, or for svmlight those that occur")
    offset: int
    limit: int
    listed: Literal["all", "occurring"] = Field(
        description="'occurring' (svmlight): only the columns with a value in some row are listed, "
        "every other column is all zeros; 'all': every column, in order"
    )


class DatasetDetail(DatasetRead):
    columns: ColumnPage | None = Field(
        description="The first columns' statistics (GET /v1/datasets/{id}/columns pages through all "
        "of them); null unless columns_status is 'ready'"
    )
    columns_status: Literal["ready", "pending", "unavailable"] = Field(
        description="'ready': columns holds the statistics; 'pending': the data set was stored "
        "before the service kept column statistics and they are being computed in the background "
        "(ask again shortly); 'unavailable': the data set's files cannot be read from the store"
    )


class DatasetPatch(LabelsPatch):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"name": "heart", "tags": ["medical"], "task": "classification"}]},
    )

    name: PrintableName | None = None
    task: Literal["classification", "regression"] | None = Field(
        default=None, description="Correct a guessed task; classes are derived from the labels"
    )


class DatasetList(BaseModel):
    items: list[DatasetRead]
    next_cursor: str | None = Field(description="Pass as ?cursor= for the next page; null at the end")
