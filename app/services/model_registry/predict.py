"""Prediction inputs (dense rows, sparse rows, svmlight text) to a matrix, and model outputs."""

from __future__ import annotations

import csv
import io
import itertools
import math
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.special import expit, softmax
from sklearn.datasets import load_svmlight_file

from app.core.errors import ProblemError, field_error, invalid
from app.services.datasets.parse_base import DEFAULT_NA_VALUES
from app.services.metrics.threshold import Threshold
from app.services.model_registry.artifacts import LoadedModel

MAX_REPORTED_ERRORS = 20
# The category of a missing text cell: the one a data set's text column stores for it.
MISSING_TEXT = ""
# The CSV cells that are missing for a model that does not name its own (not trained on a CSV,
# or before data sets kept theirs): an upload's defaults.
CSV_MISSING = frozenset(DEFAULT_NA_VALUES)


def _array(values: list[Any]) -> np.ndarray | None:
    """``values`` as an array, or None where NumPy refuses them: lists nested to uneven depths
    (``[[1], 0, 0]``) are a ValueError, not an array of objects."""
    try:
        return np.asarray(values)
    except (ValueError, TypeError):
        return None


def _numeric(values: Any) -> np.ndarray | None:
    """A 1-D float64 array if ``values`` is a list of JSON numbers (not bools, not strings)."""
    if not isinstance(values, list):
        return None
    if not values:
        return np.empty(0, dtype=np.float64)
    arr = _array(values)
    if arr is None or arr.ndim != 1 or arr.dtype.kind not in "iuf":
        return None
    return arr.astype(np.float64, copy=False)


def beyond_width(index: int, index_base: int, n_features: int) -> str:
    """The message for a feature index past the model's width (``index`` as the caller sent
    it, ``index_base``-based)."""
    return (
        f"feature index {index} ({index_base}-based) is beyond the model's width of "
        f"{n_features} features; pass extra_features=ignore to leave such features out"
    )


def _sparse_row(
    row: dict[str, Any], i: int, n_features: int, errors: list[dict[str, Any]], ignore_extra: bool
) -> tuple[np.ndarray, np.ndarray] | None:
    loc: list[str | int] = ["body", "instances", i]
    if set(row) != {"indices", "values"}:
        errors.append(field_error(loc, "a sparse instance has exactly the keys indices and values"))
        return None
    idx, val = _numeric(row["indices"]), _numeric(row["values"])
    if idx is None or (idx.size and not np.all(idx == np.floor(idx))):
        errors.append(field_error([*loc, "indices"], "indices must be a list of integers"))
        return None
    if val is None:
        errors.append(field_error([*loc, "values"], "values must be a list of numbers"))
        return None
    if idx.size != val.size:
        errors.append(field_error(loc, f"{idx.size} indices but {val.size} values"))
        return None
    if idx.size and idx.min() < 0:
        errors.append(field_error([*loc, "indices"], "indices are 0-based: none is negative"))
        return None
    if idx.size and idx.max() >= n_features:
        if not ignore_extra:
            errors.append(field_error([*loc, "indices"], beyond_width(int(idx.max()), 0, n_features)))
            return None
        keep = idx < n_features
        idx, val = idx[keep], val[keep]
    order = np.argsort(idx, kind="stable")
    idx, val = idx[order].astype(np.int32), val[order]
    if idx.size > 1 and np.any(idx[1:] == idx[:-1]):
        errors.append(field_error([*loc, "indices"], "indices must be distinct"))
        return None
    if not np.isfinite(val).all():
        errors.append(field_error([*loc, "values"], "values must be finite (no NaN or infinity)"))
        return None
    return idx, val


def instances_to_matrix(payload: Any, model: LoadedModel, ignore_extra: bool = False) -> Any:
    """Validate ``{"instances": [...]}``; every bad row is named in the 422 problem.

    Sparse rows with indices at or beyond the model's width fail, or with ``ignore_extra`` lose
    those entries (dense rows always have exactly ``n_features`` values)."""
    n_features = model.n_features
    if not isinstance(payload, dict) or "instances" not in payload:
        raise invalid(
            "the JSON body must be an object with an 'instances' list",
            [field_error(["body", "instances"], "Field required", "missing")],
        )
    extra = sorted(set(payload) - {"instances"})
    if extra:
        raise invalid(
            f"unknown field(s): {', '.join(extra)}",
            [field_error(["body", k], "Extra inputs are not permitted", "extra_forbidden") for k in extra],
        )
    rows = payload["instances"]
    if not isinstance(rows, list) or not rows:
        raise invalid(
            "'instances' must be a non-empty list",
            [field_error(["body", "instances"], "must be a non-empty list")],
        )
    errors: list[dict[str, Any]] = []
    if model.dense_input or any(_is_named(r) for r in rows):
        return typed_rows(rows, model)
    if all(isinstance(r, list) for r in rows):
        dense = _dense_rows(rows, n_features, errors)
        if errors:
            raise invalid(_summary(errors), errors[:MAX_REPORTED_ERRORS])
        assert dense is not None
        return dense
    fast = _all_sparse_fast(rows, n_features, ignore_extra)
    if fast is not None:
        return fast
    return _mixed_rows(rows, n_features, ignore_extra)


def _is_named(row: Any) -> bool:
    return isinstance(row, dict) and set(row) != {"indices", "values"}


def _named_to_list(
    row: dict[str, Any], i: int, model: LoadedModel, errors: list[dict[str, Any]]
) -> list[Any] | None:
    names = model.feature_names
    loc: list[str | int] = ["body", "instances", i]
    if names is None:
        errors.append(
            field_error(
                loc,
                "this model has no feature names (its data had no header): send lists or {indices, values}",
            )
        )
        return None
    # The label column is left out, as a CSV body's is (rows of the training file work as they are).
    unknown = sorted(set(row) - set(names) - {model.label_name})
    if unknown:
        errors.append(
            field_error(
                [*loc, unknown[0]],
                f"unknown feature {unknown[0]!r}; the model's features are {', '.join(names)}",
            )
        )
        return None
    # An absent feature is missing, as null is: a text column's empty category; a numeric one
    # imputed when the model imputes, refused otherwise.
    return [row.get(name) for name in names]


def _cell(value: Any, j: int, kinds: dict[int, str], impute: bool) -> tuple[Any, str | None]:
    """A raw feature value for column ``j`` and None, or None and what is wrong with it."""
    kind = kinds.get(j, "numeric")
    if kind == "ignored":
        return 0.0, None
    if kind == "text":
        if value is None:
            # Missing text is the empty category, as a data set stores a missing text cell.
            return MISSING_TEXT, None
        return (value, None) if isinstance(value, str) else (None, "must be a string (a text column)")
    if value is None:
        return (np.nan, None) if impute else (None, "is missing and this model does not impute")
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None, "must be a finite number" + (" or null (missing)" if impute else "")
    return float(value), None


def typed_rows(rows: list[Any], model: LoadedModel) -> np.ndarray:
    """Rows for a model whose preprocessing takes dense input: lists of n_features values,
    objects keyed by feature name, or {indices, values}; text columns take strings and numeric
    ones numbers; null (or an absent name) is missing: a text column's empty category, a
    numeric value imputed. An object array when the model has text columns."""
    prep = model.preprocessing or {"categorical": [], "ignore": [], "impute": False}
    kinds = {j: "text" for j in prep["categorical"]} | {j: "ignored" for j in prep["ignore"]}
    n = model.n_features
    out = np.zeros((len(rows), n), dtype=object if prep["categorical"] else np.float64)
    errors: list[dict[str, Any]] = []
    for i, row in enumerate(rows):
        if len(errors) >= MAX_REPORTED_ERRORS:
            break
        values = _row_values(row, i, model, errors)
        if values is None:
            continue
        if len(values) != n:
            errors.append(field_error(["body", "instances", i], f"expected {n} values, got {len(values)}"))
            continue
        for j, v in enumerate(values):
            cell, problem = _cell(v, j, kinds, prep["impute"])
            if problem is not None:
                name = model.feature_names[j] if model.feature_names else j
                errors.append(field_error(["body", "instances", i, name], f"feature {name!r} {problem}"))
                break
            out[i, j] = cell
    if errors:
        raise invalid(_summary(errors), errors[:MAX_REPORTED_ERRORS])
    return out


def _row_values(row: Any, i: int, model: LoadedModel, errors: list[dict[str, Any]]) -> list[Any] | None:
    if isinstance(row, list):
        return row
    if _is_named(row):
        return _named_to_list(row, i, model, errors)
    piece = _one_row(row, i, model.n_features, errors, ignore_extra=False)
    if piece is None:
        return None
    dense = np.zeros(model.n_features)
    dense[piece[0]] = piece[1]
    return dense.tolist()


def _one_row(
    row: Any, i: int, n_features: int, errors: list[dict[str, Any]], ignore_extra: bool
) -> tuple[np.ndarray, np.ndarray] | None:
    """A dense or sparse row as (indices, values), or None with its errors recorded."""
    if isinstance(row, list):
        d = _dense_rows([row], n_features, errors, offset=i)
        if d is None:
            return None
        nz = np.flatnonzero(d[0])
        return nz.astype(np.int32), d[0, nz]
    if isinstance(row, dict):
        return _sparse_row(row, i, n_features, errors, ignore_extra)
    errors.append(
        field_error(["body", "instances", i], "an instance is a list of numbers or {indices, values}")
    )
    return None


def _mixed_rows(rows: list[Any], n_features: int, ignore_extra: bool) -> sp.csr_matrix:
    """Dense and sparse rows mixed, checked one by one (the bad ones are named)."""
    errors: list[dict[str, Any]] = []
    indptr = [0]
    all_idx: list[np.ndarray] = []
    all_val: list[np.ndarray] = []
    for i, row in enumerate(rows):
        if len(errors) >= MAX_REPORTED_ERRORS:
            break
        piece = _one_row(row, i, n_features, errors, ignore_extra)
        if piece is not None:
            all_idx.append(piece[0])
            all_val.append(piece[1])
            indptr.append(indptr[-1] + piece[0].size)
    if errors:
        raise invalid(_summary(errors), errors[:MAX_REPORTED_ERRORS])
    return sp.csr_matrix(
        (np.concatenate(all_val), np.concatenate(all_idx), np.asarray(indptr, dtype=np.int64)),
        shape=(len(rows), n_features),
    )


def _all_sparse_fast(rows: list[Any], n_features: int, ignore_extra: bool) -> sp.csr_matrix | None:
    """Batches of well-formed sparse rows, checked in bulk (a per-row loop costs ~40 us a row).

    Returns None when anything is off; the per-row path then names the offending row.
    """
    if not all(type(r) is dict and len(r) == 2 and "indices" in r and "values" in r for r in rows):
        return None
    idx_lists = [r["indices"] for r in rows]
    val_lists = [r["values"] for r in rows]
    if not all(
        type(a) is list and type(b) is list and len(a) == len(b)
        for a, b in zip(idx_lists, val_lists, strict=True)
    ):
        return None
    lengths = np.fromiter((len(a) for a in idx_lists), dtype=np.int64, count=len(rows))
    idx = _array(list(itertools.chain.from_iterable(idx_lists)))
    val = _array(list(itertools.chain.from_iterable(val_lists)))
    if idx is None or val is None:
        return None
    if idx.size == 0:
        idx, val = idx.astype(np.int32), val.astype(np.float64)
    elif idx.dtype.kind not in "iu" or val.dtype.kind not in "iuf":
        return None
    if idx.size and (idx.min() < 0 or (idx.max() >= n_features and not ignore_extra)):
        return None
    val = val.astype(np.float64, copy=False)
    if not np.isfinite(val).all():
        return None
    row_of = np.repeat(np.arange(len(rows)), lengths)
    if idx.size and idx.max() >= n_features:
        keep = idx < n_features
        idx, val, row_of = idx[keep], val[keep], row_of[keep]
        lengths = np.bincount(row_of, minlength=len(rows))
    order = np.lexsort((idx, row_of))
    idx, val, row_of = idx[order], val[order], row_of[order]
    if idx.size > 1 and np.any((idx[1:] == idx[:-1]) & (row_of[1:] == row_of[:-1])):
        return None
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    return sp.csr_matrix((val, idx.astype(np.int32), indptr), shape=(len(rows), n_features))


def _dense_rows(
    rows: list[Any], n_features: int, errors: list[dict[str, Any]], offset: int = 0
) -> np.ndarray | None:
    bad = False
    for i, r in enumerate(rows):
        if len(r) != n_features:
            errors.append(
                field_error(["body", "instances", offset + i], f"expected {n_features} values, got {len(r)}")
            )
            bad = True
            if len(errors) >= MAX_REPORTED_ERRORS:
                return None
    if bad:
        return None
    arr = _array(rows) if rows else np.empty((0, n_features))
    if arr is None or arr.ndim != 2 or arr.dtype.kind not in "iuf":
        for i, r in enumerate(rows):
            if _numeric(r) is None:
                # null is a missing value: only a model trained on CSV or Parquet columns takes one.
                msg = "is missing (null), which this model cannot take" if None in r else "is not a number"
                errors.append(
                    field_error(
                        ["body", "instances", offset + i],
                        f"a dense instance is a list of numbers: a value {msg}",
                    )
                )
        return None
    arr = arr.astype(np.float64, copy=False)
    finite = np.isfinite(arr).all(axis=1)
    if not finite.all():
        for i in np.flatnonzero(~finite)[:MAX_REPORTED_ERRORS]:
            errors.append(
                field_error(
                    ["body", "instances", offset + int(i)], "values must be finite (no NaN or infinity)"
                )
            )
        return None
    return arr


def _summary(errors: list[dict[str, Any]]) -> str:
    first = errors[0]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"invalid instance at {first['field']}: {first['msg']}{more}"


def svmlight_to_matrix(
    body: bytes, n_features: int, index_base: int, ignore_extra: bool = False
) -> sp.csr_matrix:
    """svmlight lines; the label in front is optional (ignored), indices as in the training file.
    Indices beyond the model's width fail, or with ``ignore_extra`` are left out."""
    lines = [ln.strip() for ln in body.splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith(b"#")]
    if not lines:
        raise invalid("the text/plain body has no svmlight lines", [field_error(["body"], "empty")])
    # A line whose first token is "index:value" has no label; give it one for the parser.
    fixed = [b"0 " + ln if b":" in ln.split(None, 1)[0] else ln for ln in lines]
    try:
        # Indices as written (zero_based=True keeps them); the width is checked below.
        X, _ = load_svmlight_file(io.BytesIO(b"\n".join(fixed)), dtype=np.float64, zero_based=True)
    except ValueError as exc:
        raise invalid(f"not valid svmlight text: {exc}", [field_error(["body"], str(exc))]) from exc
    X = sp.csr_matrix(X)
    if index_base == 1:
        if X.nnz and X.indices.min() == 0:
            raise invalid(
                "feature indices are 1-based for this model; found index 0",
                [field_error(["body"], "index 0 in a 1-based file")],
            )
        X = sp.csr_matrix((X.data, X.indices - 1, X.indptr), shape=(X.shape[0], max(X.shape[1] - 1, 0)))
    if X.shape[1] > n_features:
        if not ignore_extra:
            msg = beyond_width(int(X.indices.max()) + index_base, index_base, n_features)
            raise invalid(msg, [field_error(["body"], msg)])
        X = sp.csr_matrix(X[:, :n_features])
    X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_features))
    if not np.isfinite(X.data).all():
        raise invalid(
            "values must be finite (no NaN or infinity)", [field_error(["body"], "NaN or infinity")]
        )
    return X


def csv_to_payload(body: bytes, model: LoadedModel) -> dict[str, Any]:
    """A text/csv body (a header, then one row per instance) as the JSON payload it stands for:
    rows keyed by the header when the model knows its feature names (the label column, if
    present, is left out), else positional rows of n_features values. Empty cells and the
    training CSV's missing markers (``na_values`` of its upload; else the defaults ``NA``,
    ``NaN``, ``null``, ...) are missing."""
    missing = CSV_MISSING if model.na_values is None else frozenset(["", *model.na_values])
    try:
        lines = list(csv.reader(io.StringIO(body.decode("utf-8"))))
    except (UnicodeDecodeError, csv.Error) as exc:
        raise invalid(f"not valid CSV text: {exc}", [field_error(["body"], str(exc))]) from exc
    lines = [row for row in lines if any(cell.strip() for cell in row)]
    if len(lines) < 2:
        msg = "a text/csv body has a header row and at least one data row"
        raise invalid(msg, [field_error(["body"], msg)])
    header = [h.strip() for h in lines[0]]
    text = set((model.preprocessing or {}).get("categorical", []))
    if model.feature_names is None:
        rows: list[Any] = [[_csv_cell(c, j in text, missing) for j, c in enumerate(r)] for r in lines[1:]]
        return {"instances": rows}
    position = {name: j for j, name in enumerate(model.feature_names)}
    unknown = sorted(set(header) - set(position) - {model.label_name})
    if unknown:
        msg = (
            f"unknown column(s) {', '.join(map(repr, unknown))}; the model's features are "
            f"{', '.join(model.feature_names)}"
        )
        raise invalid(msg, [field_error(["body", "header"], msg)])
    rows = []
    for i, r in enumerate(lines[1:]):
        if len(r) != len(header):
            msg = f"row {i + 1} has {len(r)} fields; the header has {len(header)}"
            raise invalid(msg, [field_error(["body", "instances", i], msg)])
        rows.append(
            {
                h: _csv_cell(c, position[h] in text, missing)
                for h, c in zip(header, r, strict=True)
                if h in position
            }
        )
    return {"instances": rows}


def _csv_cell(cell: str, is_text: bool, missing: frozenset[str]) -> Any:
    value = cell.strip()
    if value in missing:
        return None
    if is_text:
        return value
    try:
        return float(value)
    except ValueError:
        return value  # named as not a number by the row checks


def predictions_csv(out: dict[str, Any], classes: np.ndarray | None) -> bytes:
    """The answer as CSV: prediction, the score(s) (score_<class> per class when there are
    several) and probability_<class> for logistic models."""
    names = [] if classes is None else [str(c) for c in classes]
    scores = np.asarray(out["scores"], dtype=np.float64)
    header = ["prediction"]
    columns = [np.asarray(out["predictions"], dtype=object)[:, None]]
    if scores.ndim == 2:
        header += [f"score_{c}" for c in names]
        columns.append(scores)
    else:
        header.append("score")
        columns.append(scores[:, None])
    if out.get("probabilities") is not None:
        header += [f"probability_{c}" for c in names]
        columns.append(np.asarray(out["probabilities"], dtype=np.float64))
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(np.hstack([c.astype(object) for c in columns]).tolist())
    return buf.getvalue().encode()


def too_many_rows(rows: int, max_rows: int, at_least: bool = False) -> ProblemError:
    return ProblemError(
        413,
        f"{'at least ' if at_least else ''}{rows} rows in one request; the limit is "
        f"{max_rows} (PGS_MAX_PREDICT_ROWS)",
        kind="payload-too-large",
    )


def check_row_count(body: bytes, media_type: str, max_rows: int) -> None:
    """Refuse a body with more rows than allowed before it is parsed (413).

    Counted on the bytes, at memory speed: parsing first turned a 36 MB text body into 9M line
    objects and a 64 MB JSON body into 16M lists (+1 GB, seconds of CPU) before the count.
    Text rows end at "\n", "\r" or "\r\n" (blank lines count: they are rows of nothing). A
    valid JSON body has one "[" per dense row and one "{" and two "[" per sparse row, plus the
    outer object and array, so it has at least (brackets - 2) / 3 rows.
    """
    if media_type in ("text/plain", "text/csv"):
        ends = body.count(b"\n") + body.count(b"\r") - body.count(b"\r\n")
        rows = ends + (0 if body.endswith((b"\n", b"\r")) else 1)
        if rows > max_rows:
            raise too_many_rows(rows, max_rows)
        return
    at_least = (body.count(b"[") + body.count(b"{") - 2) // 3
    if at_least > max_rows:
        raise too_many_rows(at_least, max_rows, at_least=True)


def predict(model: LoadedModel, X: np.ndarray | sp.csr_matrix) -> dict[str, Any]:
    """Predictions, scores (and probabilities for logistic models) from one matrix product.

    The estimator's own methods would each re-run scikit-learn's input validation (~150 us per
    call, several times the sparse dot product of a single row), so the linear scores are
    computed here from the fitted ``coef_``/``intercept_`` and mapped the way the estimator
    documents: sign (binary) or argmax (one-vs-rest), sigmoid or softmax for probabilities.
    tests/app/model_registry/test_predict.py checks the results equal the estimator's methods.
    """
    est = model.estimator
    if model.preprocessor is not None:
        # Imported here: importing the web app does not load the solver (and Numba).
        from solver.preprocessing import transform_rows

        # The preprocessing takes the input kind it was fitted on (dense CSV, sparse svmlight).
        if model.dense_input and isinstance(X, sp.csr_matrix):
            X = X.toarray()
        elif not model.dense_input and isinstance(X, np.ndarray):
            X = sp.csr_matrix(X)
        X = transform_rows(model.preprocessor, X)
    if not hasattr(est, "coef_"):
        return _predict_with_methods(model, X)  # not a linear model: ask the estimator
    coef = np.atleast_2d(est.coef_)
    z = np.asarray(X @ coef.T, dtype=np.float64) + est.intercept_
    if model.task == "regression":
        values = z[:, 0].tolist()
        return {"predictions": values, "scores": values}
    assert model.classes is not None
    binary = z.shape[1] == 1
    # The estimator was trained on integer codes 0..k-1: map them back to the original labels.
    codes = binary_codes(model, z[:, 0]) if binary else np.argmax(z, axis=1)
    out: dict[str, Any] = {
        "predictions": model.classes[codes].tolist(),
        "scores": (z[:, 0] if binary else z).tolist(),
    }
    if model.has_proba:
        if binary:
            pos = expit(z[:, 0])
            proba = np.column_stack([1.0 - pos, pos])
        else:
            proba = softmax(z, axis=1)
        out["probabilities"] = proba.tolist()
    return out


def binary_codes(model: LoadedModel, scores: np.ndarray) -> np.ndarray:
    """A binary classifier's class codes of its decision scores, at its stored threshold."""
    return Threshold.from_dict(model.threshold, model.has_proba).predict(scores)


def _predict_with_methods(model: LoadedModel, X: np.ndarray | sp.csr_matrix) -> dict[str, Any]:
    est = model.estimator
    if model.task == "regression":
        values = np.asarray(est.predict(X), dtype=np.float64).tolist()
        return {"predictions": values, "scores": values}
    assert model.classes is not None
    scores = np.asarray(est.decision_function(X))
    codes = binary_codes(model, scores) if scores.ndim == 1 else np.asarray(est.predict(X), dtype=np.intp)
    out: dict[str, Any] = {
        "predictions": model.classes[codes].tolist(),
        "scores": scores.tolist(),
    }
    if model.has_proba:
        out["probabilities"] = np.asarray(est.predict_proba(X)).tolist()
    return out


def unsupported_media_type() -> ProblemError:
    return ProblemError(
        415,
        'send application/json {"instances": [...]}, text/csv with a header, or text/plain svmlight lines',
        kind="unsupported-media-type",
    )
