"""Feature preprocessing learned with a model: scikit-learn transformers in a ColumnTransformer.

:func:`make_preprocessor` composes the parts a data set needs (mean imputation of missing values,
standardisation or max-abs scaling of the numeric columns, one-hot encoding of text columns,
ignored columns) from scikit-learn itself; the result goes in front of any estimator of this
library::

    from sklearn.pipeline import make_pipeline
    from solver import PGSClassifier, make_preprocessor

    model = make_pipeline(make_preprocessor(10, ignore=[0]), PGSClassifier(loss="logistic"))

:func:`export_preprocessor` writes the fitted parameters (means, scales, categories, column
lists) as JSON and plain arrays, and :func:`load_preprocessor` rebuilds the fitted transformer from
them: models are stored without pickle, and so is their preprocessing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import MaxAbsScaler, OneHotEncoder, StandardScaler
from sklearn.utils.validation import FLOAT_DTYPES, validate_data

__all__ = [
    "SCALINGS",
    "OnePassMaxAbsScaler",
    "export_preprocessor",
    "load_preprocessor",
    "make_preprocessor",
    "numeric_columns",
    "output_width",
    "transform_rows",
]

SCALINGS = ("standard", "maxabs", "none")
FORMAT = 1
# The fitted attributes that define each part's transform (all arrays or None).
_FITTED = {
    "impute": ("statistics_",),
    "scale": ("mean_", "var_", "scale_", "max_abs_"),
}


class OnePassMaxAbsScaler(MaxAbsScaler):
    """scikit-learn's ``MaxAbsScaler``, fitted on a CSR matrix in one pass over its values.

    ``MaxAbsScaler`` finds each column's minimum and maximum of a CSR matrix through two CSC
    copies of it: 0.42 s on 494,021 x 119 with 9.9 million values, where a scatter-max of the
    absolute values takes 0.05 s. The fitted attributes are the same (tests/solver/
    test_preprocessing.py), other input goes to ``MaxAbsScaler`` itself, and so does
    ``transform``.
    """

    max_abs_: np.ndarray
    scale_: np.ndarray
    n_samples_seen_: int

    def partial_fit(self, X, y=None):
        if not (sp.issparse(X) and X.format == "csr"):
            return super().partial_fit(X, y)
        self._validate_params()
        first_pass = not hasattr(self, "n_samples_seen_")
        X = validate_data(
            self, X, reset=first_pass, accept_sparse="csr", dtype=FLOAT_DTYPES, ensure_all_finite="allow-nan"
        )
        max_abs = np.zeros(X.shape[1], dtype=X.dtype)
        # fmax skips NaN, as MaxAbsScaler does; a column's implicit zeros leave it at 0 or more.
        np.fmax.at(max_abs, X.indices, np.abs(X.data))
        missing = np.isnan(X.data)
        if missing.any():
            # A column with a value in every row, all NaN, has no maximum: NaN, as in scikit-learn.
            stored = np.bincount(X.indices, minlength=X.shape[1])
            known = np.bincount(X.indices[~missing], minlength=X.shape[1])
            max_abs[(stored == X.shape[0]) & (known == 0)] = np.nan
        if first_pass:
            self.n_samples_seen_ = X.shape[0]
        else:
            max_abs = np.maximum(self.max_abs_, max_abs)
            self.n_samples_seen_ += X.shape[0]
        self.max_abs_ = max_abs
        # MaxAbsScaler's rule for a column of (nearly) zeros: scaled by 1, left as it is.
        scale = max_abs.copy()
        scale[scale < 10 * np.finfo(scale.dtype).eps] = 1.0
        self.scale_ = scale
        return self


def numeric_columns(
    n_features: int, categorical: Sequence[int] = (), ignore: Sequence[int] = ()
) -> slice | np.ndarray:
    """The raw columns the numeric part reads: every column but the text and ignored ones.

    A slice when that is all of them: a data set of 2^24 sparse features must not become a list
    of 2^24 column indices (a ColumnTransformer fancy-indexes its input by such a list, which took
    minutes; a slice is a view)."""
    skip = np.asarray(sorted(set(categorical) | set(ignore)), dtype=np.int64)
    if skip.size == 0:
        return slice(0, n_features)
    return np.setdiff1d(np.arange(n_features, dtype=np.int64), skip)


def _width(columns: slice | np.ndarray | Sequence[int], n_features: int) -> int:
    if isinstance(columns, slice):
        return len(range(*columns.indices(n_features)))
    return len(columns)


def make_preprocessor(
    n_features: int,
    *,
    scaling: str = "standard",
    impute: bool = True,
    categorical: Sequence[int] = (),
    ignore: Sequence[int] = (),
    sparse: bool = False,
    categories: list[np.ndarray] | str = "auto",
) -> ColumnTransformer:
    """An unfitted transformer of ``n_features`` raw columns into the model's features.

    Parameters
    ----------
    n_features : int
        Columns of the raw input (numeric and text).
    scaling : {"standard", "maxabs", "none"}
        Of the numeric columns: ``StandardScaler`` (without centring on sparse input, which it
        would densify) or ``MaxAbsScaler`` (keeps sparsity).
    impute : bool
        Replace missing (NaN) numeric values by the column's training mean (``SimpleImputer``).
    categorical : indices of text columns, one-hot encoded (``OneHotEncoder``); a category not
        seen in training encodes as all zeros.
    ignore : indices of columns dropped (an id column).
    sparse : bool
        The input is a scipy sparse matrix; the output then stays sparse.
    categories : the categories of each text column ("auto": learned by ``fit``).

    The output has the transformed numeric columns first, then one column per category.
    """
    if scaling not in SCALINGS:
        raise ValueError(f"scaling must be one of {SCALINGS}, got {scaling!r}")
    skip = set(categorical) | set(ignore)
    bad = sorted(j for j in skip if not 0 <= j < n_features)
    if bad:
        raise ValueError(f"column indices {bad} are outside 0..{n_features - 1}")
    numeric = numeric_columns(n_features, categorical, ignore)
    steps: list[tuple[str, Any]] = []
    if impute:
        # keep_empty_features: a column that is all missing in training stays (as zeros), so
        # the output width does not depend on which values happened to be missing.
        steps.append(("impute", SimpleImputer(strategy="mean", keep_empty_features=True)))
    if scaling == "standard":
        steps.append(("scale", StandardScaler(with_mean=not sparse)))
    elif scaling == "maxabs":
        steps.append(("scale", OnePassMaxAbsScaler()))
    parts: list[tuple[str, Any, Any]] = [
        ("numeric", Pipeline(steps) if steps else "passthrough", numeric),
    ]
    if categorical:
        parts.append(
            (
                "categorical",
                OneHotEncoder(
                    categories=categories, handle_unknown="ignore", sparse_output=sparse, dtype=np.float64
                ),
                sorted(categorical),
            )
        )
    return ColumnTransformer(
        parts, remainder="drop", sparse_threshold=1.0 if sparse else 0.0, verbose_feature_names_out=False
    )


def transform_rows(ct: ColumnTransformer, X: Any) -> Any:
    """``ct.transform(X)`` for a fitted :func:`make_preprocessor` result, each part's own
    ``transform`` called in this thread.

    ``ColumnTransformer.transform`` sends every part through joblib and checks the input again,
    which on the one row of a prediction request costs several times what the parts do; the parts
    and their order are the same, so the result is too (tests/solver/test_preprocessing.py).
    """
    blocks = []
    n = X.shape[1]
    for name, part, columns in ct.transformers_:
        if name == "remainder" or part == "drop" or _width(columns, n) == 0:
            continue
        block = X if _width(columns, n) == n else X[:, columns]
        blocks.append(block if part == "passthrough" else part.transform(block))
    if ct.sparse_output_:
        return sp.hstack(blocks, format="csr") if len(blocks) > 1 else sp.csr_matrix(blocks[0])
    return np.hstack(blocks) if len(blocks) > 1 else np.asarray(blocks[0], dtype=np.float64)


def output_width(ct: ColumnTransformer) -> int:
    """The number of columns a fitted :func:`make_preprocessor` result transforms rows into:
    the numeric ones read, then one per category of each text column."""
    n, width = int(ct.n_features_in_), 0
    for name, part, columns in ct.transformers_:
        if name == "remainder" or part == "drop":
            continue
        width += sum(len(c) for c in part.categories_) if name == "categorical" else _width(columns, n)
    return width


def _settings(ct: ColumnTransformer) -> dict[str, Any]:
    """The JSON settings of a :func:`make_preprocessor` result; the numeric columns are left out
    (:func:`numeric_columns` derives them from ``n_features``, ``categorical`` and ``ignore``)."""
    numeric_part, numeric = ct.transformers[0][1], ct.transformers[0][2]
    steps = dict(numeric_part.steps) if isinstance(numeric_part, Pipeline) else {}
    scaler = steps.get("scale")
    scaling = (
        "standard"
        if isinstance(scaler, StandardScaler)
        else "maxabs"
        if isinstance(scaler, MaxAbsScaler)
        else "none"
    )
    categorical = list(ct.transformers[1][2]) if len(ct.transformers) > 1 else []
    n_features = int(ct.n_features_in_) if hasattr(ct, "n_features_in_") else None
    ignore: list[int] = []
    if n_features is not None:
        unused = np.ones(n_features, dtype=bool)
        unused[numeric] = False
        unused[categorical] = False
        ignore = [int(j) for j in np.flatnonzero(unused)]
    return {
        "scaling": scaling,
        "impute": "impute" in steps,
        "categorical": [int(j) for j in categorical],
        "ignore": ignore,
        "sparse": ct.sparse_threshold == 1.0,
    }


def export_preprocessor(ct: ColumnTransformer) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """A fitted :func:`make_preprocessor` result as JSON-able settings and plain arrays (no
    object dtype: they load with ``allow_pickle=False``); :func:`load_preprocessor` reverses it."""
    meta = {"format": FORMAT, "n_features": int(ct.n_features_in_), **_settings(ct)}
    arrays: dict[str, np.ndarray] = {}
    numeric = ct.named_transformers_["numeric"]
    if isinstance(numeric, Pipeline):
        for step, attrs in _FITTED.items():
            part = numeric.named_steps.get(step)
            for attr in attrs:
                value = getattr(part, attr, None)
                if value is None:
                    continue
                if isinstance(part, MaxAbsScaler):
                    # Sparse data may be 2^24 columns wide, most never seen in training: their
                    # max_abs_ is 0 (scale_ 1, derived from it). Stored by its non-zeros.
                    if attr == "max_abs_":
                        nz = np.flatnonzero(value)
                        arrays["scale.max_abs_.indices"] = nz.astype(np.int64)
                        arrays["scale.max_abs_.values"] = np.asarray(value, np.float64)[nz]
                    continue
                arrays[f"{step}.{attr}"] = np.asarray(value, dtype=np.float64)
    if meta["categorical"]:
        for k, cats in enumerate(ct.named_transformers_["categorical"].categories_):
            arrays[f"categories.{k}"] = np.asarray(cats, dtype=str)
    return meta, arrays


def load_preprocessor(meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> ColumnTransformer:
    """The fitted transformer of :func:`export_preprocessor` output.

    scikit-learn keeps private state next to the documented fitted attributes, so the transformer
    is fitted on one synthetic row (the imputation means, the first category of each text
    column) and its fitted attributes are then set to the stored arrays.
    ValueError when the data do not describe a preprocessor of this format.
    """
    if meta.get("format") != FORMAT:
        raise ValueError(f"not a preprocessing format this version reads: {meta.get('format')!r}")
    n, categorical = int(meta["n_features"]), [int(j) for j in meta["categorical"]]
    categories = [np.asarray(arrays[f"categories.{k}"]) for k in range(len(categorical))]
    if any(c.ndim != 1 or c.size == 0 or c.dtype.kind != "U" for c in categories):
        raise ValueError("each text column needs a non-empty list of string categories")
    ct = make_preprocessor(
        n,
        scaling=meta["scaling"],
        impute=bool(meta["impute"]),
        categorical=categorical,
        ignore=[int(j) for j in meta["ignore"]],
        sparse=bool(meta["sparse"]),
        categories=categories if categorical else "auto",
    )
    width = _width(numeric_columns(n, categorical, meta["ignore"]), n)
    ct.fit(_synthetic_row(n, meta, arrays, categories))
    numeric = ct.named_transformers_["numeric"]
    arrays = _dense_max_abs(arrays, width)
    for key, value in arrays.items():
        step, _, attr = key.partition(".")
        if step in _FITTED:
            _restore(numeric, step, attr, value, width)
    return ct


def _dense_max_abs(arrays: dict[str, np.ndarray], width: int) -> dict[str, np.ndarray]:
    """``arrays`` with a max-abs scaler's sparse ``max_abs_`` expanded (and its ``scale_``, which
    scikit-learn derives the same way: 1 where the maximum is 0)."""
    if "scale.max_abs_.indices" not in arrays:
        return arrays
    out = {k: v for k, v in arrays.items() if not k.startswith("scale.max_abs_.")}
    idx = np.asarray(arrays["scale.max_abs_.indices"])
    vals = np.asarray(arrays["scale.max_abs_.values"], dtype=np.float64)
    if (
        idx.shape != vals.shape
        or idx.dtype.kind not in "iu"
        or (idx.size and (idx.min() < 0 or idx.max() >= width))
    ):
        raise ValueError("scale.max_abs_ indices must be distinct columns of the numeric part")
    max_abs = np.zeros(width)
    max_abs[idx] = vals
    out["scale.max_abs_"] = max_abs
    out["scale.scale_"] = np.where(max_abs == 0, 1.0, max_abs)
    return out


def _restore(numeric: BaseEstimator, step: str, attr: str, value: np.ndarray, width: int) -> None:
    part = numeric.named_steps.get(step) if isinstance(numeric, Pipeline) else None
    if part is None or attr not in _FITTED[step] or not hasattr(part, attr):
        raise ValueError(f"array {step}.{attr} does not belong to this preprocessing")
    value = np.asarray(value, dtype=np.float64)
    if value.shape != (width,) or not np.isfinite(value).all():
        raise ValueError(f"{step}.{attr} must be {width} finite numbers")
    setattr(part, attr, value)


def _synthetic_row(
    n: int, meta: dict[str, Any], arrays: dict[str, np.ndarray], categories: list[np.ndarray]
) -> Any:
    numeric = numeric_columns(n, meta["categorical"], meta["ignore"])
    row = np.zeros((1, n), dtype=object if categories else np.float64)
    means = arrays.get("impute.statistics_")
    if means is not None and np.shape(means) == (_width(numeric, n),):
        row[0, numeric] = means
    for j, cats in zip(meta["categorical"], categories, strict=True):
        row[0, int(j)] = str(cats[0])
    return sp.csr_matrix(row.astype(np.float64)) if meta["sparse"] else row
