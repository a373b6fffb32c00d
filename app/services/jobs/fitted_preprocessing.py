"""A job's preprocessing fitted from its training rows' column statistics, without the rows.

Every fitted parameter of ``solver.make_preprocessor`` is a function of
:class:`app.services.datasets.column_stats.ColumnStats`, so they are computed from those and
handed to ``solver.load_preprocessor`` (which rebuilds a fitted transformer from plain arrays, as
for a stored model). The result equals ``fit`` on the rows to float rounding
(tests/app/jobs/test_fitted_preprocessing.py):

- imputation: the mean of each column's present values (0 for a column without any);
- standardisation after imputation: that mean, and the variance M2 / rows (the imputed cells add
  no deviation); on sparse rows (never imputed) the mean and variance over all rows, implicit zeros
  included, as ``StandardScaler(with_mean=False)`` has them; a column of (nearly) constant values
  is scaled by 1, by scikit-learn's own rule;
- max-abs scaling: the largest absolute present value, or the imputed mean when larger;
- one-hot encoding: each text column's categories, sorted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.preprocessing._data import _handle_zeros_in_scale, _is_constant_feature

from app.services.datasets.column_stats import ColumnStats
from solver.preprocessing import FORMAT, load_preprocessor, numeric_columns


def fitted_preprocessor(
    resolved: dict[str, Any],
    n_features: int,
    stats: ColumnStats,
    text_columns: Sequence[int],
    categories: dict[int, np.ndarray] | None = None,
) -> Any:
    """The preprocessing ``resolved`` (app/services/jobs/preprocessing.py) fitted on the rows of
    ``stats``, of a data set of ``n_features`` columns whose text columns are ``text_columns``
    (in the order of ``stats.text``). ``categories`` replaces the counted categories of the text
    columns it names (those ``truncated`` in ``stats``, read from the rows)."""
    categorical = sorted(int(j) for j in resolved["categorical"])
    ignore = [int(j) for j in resolved["ignore"]]
    meta = {
        "format": FORMAT,
        "n_features": n_features,
        "scaling": resolved["scaling"],
        "impute": bool(resolved["impute"]),
        "categorical": categorical,
        "ignore": ignore,
        "sparse": bool(resolved["sparse"]),
    }
    arrays = _numeric_arrays(meta, stats, numeric_columns(n_features, categorical, ignore))
    for k, j in enumerate(categorical):
        found = (categories or {}).get(j)
        if found is None:
            found = stats.text[list(text_columns).index(j)].values
        arrays[f"categories.{k}"] = np.asarray(found, dtype=str)
    return load_preprocessor(meta, arrays)


def _numeric_arrays(
    meta: dict[str, Any], stats: ColumnStats, numeric: slice | np.ndarray
) -> dict[str, np.ndarray]:
    if not meta["impute"] and meta["scaling"] == "none":
        return {}
    n = stats.n_rows
    listed, at = _positions(stats.columns, numeric)
    count, mean = stats.count[listed], np.where(stats.count[listed] > 0, stats.mean[listed], 0.0)
    width = numeric.stop - numeric.start if isinstance(numeric, slice) else len(numeric)
    arrays: dict[str, np.ndarray] = {}

    def spread(values: np.ndarray) -> np.ndarray:
        """Over every numeric column: an unlisted one is all zeros."""
        out = np.zeros(width)
        out[at] = values
        return out

    if meta["impute"]:
        arrays["impute.statistics_"] = spread(mean)
    if meta["scaling"] == "standard":
        # Imputed cells equal the mean: the deviations are the present values' over all rows.
        rows = np.full(len(count), n) if meta["impute"] else count
        with np.errstate(invalid="ignore", divide="ignore"):
            var = spread(np.where(rows > 0, stats.m2[listed] / rows, 0.0))
        means = spread(mean)
        arrays["scale.mean_"], arrays["scale.var_"] = means, var
        constant = _is_constant_feature(var, means, n)
        arrays["scale.scale_"] = _handle_zeros_in_scale(np.sqrt(var), copy=False, constant_mask=constant)
    elif meta["scaling"] == "maxabs":
        max_abs = np.where(count > 0, stats.max_abs[listed], 0.0)
        if meta["impute"]:
            imputed = stats.missing[listed] > 0
            max_abs[imputed] = np.maximum(max_abs[imputed], np.abs(mean[imputed]))
        nonzero = max_abs != 0
        arrays["scale.max_abs_.indices"] = at[nonzero].astype(np.int64)
        arrays["scale.max_abs_.values"] = max_abs[nonzero]
    return arrays


def _positions(columns: np.ndarray, numeric: slice | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(which of the listed ``columns`` the numeric part reads, their positions in it)."""
    if isinstance(numeric, slice):
        listed = np.flatnonzero((columns >= numeric.start) & (columns < numeric.stop))
        return listed, columns[listed] - numeric.start
    at = np.searchsorted(numeric, columns)
    inside = at < len(numeric)
    inside[inside] = numeric[at[inside]] == columns[inside]
    listed = np.flatnonzero(inside)
    return listed, at[listed]
