"""A job's ``preprocessing``: resolved against its data set when the job is created, fitted on the
training rows by the worker (``solver.make_preprocessor``), stored with the model.

The resolved form, kept on the job and the model, is what ``solver.make_preprocessor`` takes:
``{"scaling", "impute", "categorical", "ignore", "sparse"}`` with column indices.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from app.core.errors import field_error, invalid
from app.db.tables import Dataset
from app.schemas.jobs import Preprocessing

LOC: list[str | int] = ["body", "preprocessing"]


def resolve(options: Preprocessing | None, train: Dataset) -> dict[str, Any] | None:
    """The preprocessing a job on ``train`` fits, or a 422 naming what does not fit the data."""
    text = list(train.text_columns or [])
    if options is None:
        if text or train.n_missing:
            msg = (
                f"dataset {train.id} has text columns or missing values, which need "
                "preprocessing (one-hot encoding, imputation); leave preprocessing out for the "
                "defaults"
            )
            raise invalid(msg, [field_error(LOC, msg)])
        return None
    if not options.impute and train.n_missing:
        msg = f"dataset {train.id} has {train.n_missing} missing values: impute must be true"
        raise invalid(msg, [field_error([*LOC, "impute"], msg)])
    ignore = sorted({_column_index(c, k, train) for k, c in enumerate(options.ignore)})
    if len(ignore) == train.n_features:
        msg = f"ignore leaves none of dataset {train.id}'s {train.n_features} columns"
        raise invalid(msg, [field_error([*LOC, "ignore"], msg)])
    sparse = train.format == "svmlight"
    scaling = options.scaling
    if scaling == "auto":
        # Centring would densify sparse data; max-abs scaling keeps it sparse.
        scaling = "maxabs" if sparse else "standard"
    return {
        "scaling": scaling,
        "impute": options.impute and not sparse,
        "categorical": [j for j in text if j not in ignore],
        "ignore": ignore,
        "sparse": sparse,
    }


def _column_index(column: int | str, k: int, train: Dataset) -> int:
    names = train.feature_names or []
    if isinstance(column, str):
        if column in names:
            return names.index(column)
        known = f"its columns are {', '.join(names)}" if names else "it has no header"
        msg = f"ignore: dataset {train.id} has no column {column!r}; {known}"
    elif 0 <= column < train.n_features:
        return column
    else:
        msg = f"ignore: column {column} is outside 0..{train.n_features - 1} (0-based)"
    raise invalid(msg, [field_error([*LOC, "ignore", k], msg)])


def raw_matrix(
    X: sp.csr_matrix, text: np.ndarray | None, text_columns: list[int], resolved: dict[str, Any]
) -> Any:
    """The preprocessor's input: ``X`` itself for sparse data, else dense, with the values of the
    data set's ``text_columns`` in their places (an object array) when some are encoded."""
    if resolved["sparse"]:
        return X
    dense = X.toarray()
    if not resolved["categorical"]:
        return dense
    if text is None or text.shape != (X.shape[0], len(text_columns)):
        raise ValueError("the data set's stored text columns do not match its rows")
    mixed = dense.astype(object)
    mixed[:, text_columns] = text
    return mixed
