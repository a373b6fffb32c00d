"""A job's row weights: ``params.class_weight`` (classifiers) and ``weight_column`` (a column of a
CSV/Parquet data set), checked at the request so that bad weights are a 422, never a failed job.

The weight column is chosen per job, not at upload: a data set is stored as its columns with their
statistics (app/services/datasets/column_stats.py), so one upload serves jobs with and without
weights, and the stored minimum, maximum and count of missing values check the column without
reading a row. The column is not a feature: it joins the preprocessing's ``ignore`` columns, so the
model neither learns from it nor needs it at prediction (a row that carries it predicts the same).
The worker reads it from the raw rows (app/training/steps.py) and passes it to ``fit`` as
``sample_weight``; the evaluation rows' weights weigh the test score.
"""

from __future__ import annotations

import math
from typing import Any, NoReturn

import numpy as np

from app.core.config import Settings
from app.core.errors import field_error, invalid
from app.db.tables import Dataset
from app.schemas.jobs import JobCreate
from app.services.datasets.dataset_stats import stored_dataset_stats
from app.services.datasets.parse_base import json_label
from app.services.jobs.limits import data_bytes

COLUMN_LOC: list[str | int] = ["body", "weight_column"]
CLASS_WEIGHT_LOC: list[str | int] = ["body", "params", "class_weight"]


def check_request(
    body: JobCreate, task: str, datasets: list[Dataset], settings: Settings, in_memory: bool
) -> int | None:
    """The index of the job's weight column in its data sets (None without one), or a 422 naming
    the field and the rule it breaks. ``datasets``: the training set, then the test set if any."""
    _check_class_weight(body.params.get("class_weight"), task, datasets[0])
    if body.weight_column is None:
        return None
    j = column_index(body.weight_column, datasets[0])
    for dataset in datasets:
        _check_weight_values(settings, dataset, j, body.weight_column)
    if not in_memory:
        _check_fits_in_memory(datasets, settings.worker_memory_bytes)
    return j


def column_index(name: str, dataset: Dataset) -> int:
    """The index of the numeric column ``name`` (a header name) of ``dataset``, or a 422."""
    names = dataset.feature_names or []
    if dataset.format == "svmlight" or not names:
        _refuse(
            COLUMN_LOC,
            f"weight_column needs named columns: dataset {dataset.id} is {dataset.format} data "
            "without a header (upload a CSV or Parquet file with the weights as a column)",
        )
    if name not in names:
        _refuse(
            COLUMN_LOC,
            f"weight_column {name!r} is not a column of dataset {dataset.id}; its columns are "
            f"{', '.join(names[:50])}",
        )
    j = names.index(name)
    if j in (dataset.text_columns or []):
        _refuse(COLUMN_LOC, f"weight_column {name!r} is a text column; weights must be numbers")
    return j


def with_weight_column_ignored(resolved: dict[str, Any] | None, j: int | None, train: Dataset) -> Any:
    """The resolved preprocessing with column ``j`` among its ignored columns (raw features
    otherwise unchanged when the job asked for none)."""
    if j is None:
        return resolved
    if resolved is None:
        resolved = {"scaling": "none", "impute": False, "categorical": [], "ignore": [], "sparse": False}
    if j in resolved["ignore"]:
        return resolved
    if len(resolved["ignore"]) + 1 == train.n_features:
        _refuse(COLUMN_LOC, f"weight_column leaves none of dataset {train.id}'s columns as a feature")
    return resolved | {"ignore": sorted([*resolved["ignore"], j])}


def with_class_codes(estimator: Any, classes: np.ndarray | None) -> Any:
    """``estimator`` with its ``class_weight`` mapping keyed by class code, as the worker's labels
    are (``classes[code]`` is the label, as the request named it)."""
    class_weight = getattr(estimator, "class_weight", None)
    if not isinstance(class_weight, dict) or classes is None:
        return estimator
    code_of = {str(json_label(c)): code for code, c in enumerate(classes)}
    return estimator.set_params(class_weight={code_of[str(label)]: w for label, w in class_weight.items()})


def _check_class_weight(class_weight: Any, task: str, train: Dataset) -> None:
    """What the estimator's own validation cannot know: the task and the data set's labels (the
    values themselves, finite and >= 0, are checked with every other parameter)."""
    if class_weight is None:
        return
    if task == "regression":
        _refuse(CLASS_WEIGHT_LOC, "class_weight is for classification data sets; this one is regression")
    if isinstance(class_weight, dict):
        labels = {str(label) for label in train.classes or []}
        unknown = [label for label in class_weight if str(label) not in labels]
        if unknown:
            _refuse(
                CLASS_WEIGHT_LOC,
                f"class_weight names label(s) {', '.join(map(repr, unknown[:5]))} that dataset "
                f"{train.id} does not have; its labels are {', '.join(sorted(labels)[:20])}",
            )


def _check_weight_values(settings: Settings, dataset: Dataset, j: int, name: str) -> None:
    """Finite, >= 0, none missing, not all 0: from the data set's stored column statistics."""
    stats = stored_dataset_stats(settings.store, dataset.file_name)
    if stats is None:
        _refuse(
            COLUMN_LOC,
            f"dataset {dataset.id}'s column statistics are still being computed, and they check "
            "weight_column; retry in a moment",
        )
    at = int(np.searchsorted(stats.columns, j))
    if at == len(stats.columns) or stats.columns[at] != j:
        _refuse(
            COLUMN_LOC,
            f"weight_column {name!r} of dataset {dataset.id} is 0 in every row: no row would count",
        )
    missing, low, high = int(stats.missing[at]), float(stats.min[at]), float(stats.max[at])
    if missing:
        rule = f"has {missing} missing value(s); every row needs a weight"
    elif not (math.isfinite(low) and math.isfinite(high)):
        rule = "has values that are not finite; weights must be finite numbers"
    elif low < 0.0:
        rule = f"has negative values (the smallest is {low:g}); weights must be >= 0"
    elif high == 0.0:
        rule = "is 0 in every row: no row would count"
    else:
        return
    _refuse(COLUMN_LOC, f"weight_column {name!r} of dataset {dataset.id} {rule}")


def _check_fits_in_memory(datasets: list[Dataset], limit: int) -> None:
    """A weighted fit holds its rows and their weights in memory (shards carry no weights)."""
    size = sum(data_bytes(d) for d in datasets)
    if size > limit:
        _refuse(
            COLUMN_LOC,
            f"a weighted fit holds its rows in memory, and these data sets take {size} bytes, more "
            f"than the worker memory budget of {limit} bytes (PGS_WORKER_MEMORY_BYTES)",
        )


def _refuse(loc: list[str | int], msg: str) -> NoReturn:
    raise invalid(msg, [field_error(loc, msg)])
