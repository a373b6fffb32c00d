"""In-memory inputs as the service reads them: JSON rows for ``/predict`` and svmlight/CSV files
for uploads (a DataFrame is CSV with its header: :mod:`pgs_client.frames`).

Accepted feature matrices: a NumPy 2-D array (numbers, or objects such as strings for text
columns; NaN and None are missing), a SciPy sparse matrix, a pandas DataFrame, a list of dense
rows, or a list of dicts: keyed by feature name (a model trained on data with a header), by
0-based feature index (``{3: 1.5}``), or the API's own ``{"indices", "values"}``. NumPy, SciPy
and pandas are only imported when the input is one of theirs.
"""

from __future__ import annotations

import csv
import gzip
import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pgs_client import frames

Row = list[Any] | dict[str, Any]


def _is_sparse(X: Any) -> bool:
    return hasattr(X, "tocsr") and hasattr(X, "nnz")


def n_rows(X: Any) -> int:
    shape = getattr(X, "shape", None)
    return int(shape[0]) if shape is not None else len(X)


def rows(X: Any) -> Iterator[Row]:
    """The rows of ``X`` as the JSON the service reads: a list of values (dense; None where a
    value is missing), ``{"indices": [...], "values": [...]}`` (sparse, 0-based) or an object
    keyed by feature name."""
    if _is_sparse(X):
        csr = X.tocsr()
        for i in range(csr.shape[0]):
            a, b = csr.indptr[i], csr.indptr[i + 1]
            yield {"indices": csr.indices[a:b].tolist(), "values": csr.data[a:b].tolist()}
        return
    if hasattr(X, "__array__"):
        yield from _array_rows(X)
        return
    if isinstance(X, (str, bytes)) or not isinstance(X, Sequence):
        raise TypeError(
            f"X must be an array, a sparse matrix, a DataFrame or a list of rows, not {type(X).__name__}"
        )
    for row in X:
        yield _dict_row(row) if isinstance(row, Mapping) else [_value(v) for v in row]


def _array_rows(X: Any) -> Iterator[list[Any]]:
    import numpy as np

    array = np.asarray(X)
    if array.ndim != 2:
        raise ValueError(f"X must be 2-D (rows x features), got shape {array.shape}")
    if array.dtype.kind in "OUS":  # text columns beside numbers
        for row in array.tolist():
            yield [_value(v) for v in row]
        return
    numbers = array.astype(float)
    missing = np.isnan(numbers)
    for row, gaps in zip(numbers.tolist(), missing, strict=True):
        yield [None if gap else v for v, gap in zip(row, gaps, strict=True)] if gaps.any() else row


def _is_missing(value: Any) -> bool:
    """None, NaN, or pandas' NA and NaT (checked by type: pandas need not be installed)."""
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
        return True
    return isinstance(value, float) and math.isnan(value)


def _value(value: Any) -> Any:
    """A cell as JSON: a missing value None, a string as it is, else a number."""
    if _is_missing(value):
        return None
    if isinstance(value, str):
        return value
    if hasattr(value, "item"):  # a NumPy scalar
        value = value.item()
    return value if isinstance(value, str) else float(value)


def _is_index(key: Any) -> bool:
    return (isinstance(key, int) and not isinstance(key, bool)) or (isinstance(key, str) and key.isdigit())


def _dict_row(row: Mapping[Any, Any]) -> dict[str, Any]:
    """A dict row: the API's sparse form, ``{index: value}`` made sparse, or named features."""
    if set(row) == {"indices", "values"}:
        return {"indices": [int(i) for i in row["indices"]], "values": [float(v) for v in row["values"]]}
    if row and all(_is_index(k) for k in row):
        items = sorted((int(k), float(v)) for k, v in row.items())
        return {"indices": [k for k, _ in items], "values": [v for _, v in items]}
    return {str(k): _value(v) for k, v in row.items()}


def encode_row(row: Row) -> bytes:
    """One row as JSON; NaN and infinities are refused here (they are not JSON)."""
    try:
        return json.dumps(row, allow_nan=False, separators=(",", ":")).encode()
    except ValueError as exc:
        raise ValueError("X holds NaN or infinite values, which the service cannot read") from exc


def batches(X: Any, max_rows: int, max_bytes: int) -> Iterator[list[bytes]]:
    """Encoded rows of ``X`` in groups of at most ``max_rows`` rows and about ``max_bytes``."""
    return grouped(map(encode_row, rows(X)), max_rows, max_bytes)


def grouped(encoded: Iterable[bytes], max_rows: int, max_bytes: int) -> Iterator[list[bytes]]:
    """Encoded rows in groups of at most ``max_rows`` rows and about ``max_bytes``."""
    batch: list[bytes] = []
    size = 0
    for row in encoded:
        if batch and (len(batch) >= max_rows or size + len(row) > max_bytes):
            yield batch
            batch, size = [], 0
        batch.append(row)
        size += len(row) + 1
    if batch:
        yield batch


def predict_body(encoded_rows: list[bytes]) -> bytes:
    return b'{"instances":[' + b",".join(encoded_rows) + b"]}"


# -- uploads -------------------------------------------------------------------------------------


def _labels(y: Any) -> list[Any]:
    values = y.tolist() if hasattr(y, "tolist") else list(y)
    if any(isinstance(v, (list, tuple)) for v in values):
        raise ValueError("y must be 1-D: one label per row")
    return values


def _label_text(value: Any) -> str:
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return str(int(value))
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)
    raise ValueError(f"label {value!r} is not a finite number")


def _dense(row: Row, width: int) -> list[Any]:
    if isinstance(row, list):
        return row
    out: list[Any] = [0.0] * width
    for j, v in zip(row["indices"], row["values"], strict=True):
        out[j] = v
    return out


def _width(all_rows: list[Row]) -> int:
    return max(
        (len(r) if isinstance(r, list) else max(r["indices"], default=-1) + 1 for r in all_rows), default=0
    )


def _all_numbers(row: Row) -> bool:
    return not isinstance(row, list) or all(isinstance(v, float) for v in row)


def write_upload(
    X: Any, y: Any | None, directory: Path, order: Sequence[str] | None = None
) -> tuple[Path, dict[str, str]]:
    """Write ``(X, y)`` gzip-compressed into ``directory``; returns the file and the upload's
    form fields. A DataFrame gives a CSV with its header and the labels as a last named
    column; otherwise numbers with numeric labels give svmlight (sparse, 1-based indices), and
    string labels, text or missing cells a CSV with the label last (dense: a sparse X is
    written out in full). ``y`` None: rows without labels (``labelled=false``), their columns
    by name in ``order`` (a model's features) when they hold all of them."""
    unlabelled = {"labelled": "false"} if y is None else {}
    if frames.is_frame(X):
        if y is None:
            return write_frame(frames.in_order(X, order), directory), {
                "format": "csv",
                "header": "true",
                **unlabelled,
            }
        frame, label = frames.with_label(X, y)
        return write_frame(frame, directory), {"format": "csv", "header": "true", "label_column": label}
    labels = None if y is None else _labels(y)
    if labels is not None and len(labels) != n_rows(X):
        raise ValueError(f"X has {n_rows(X)} rows and y {len(labels)} labels")
    all_rows = list(rows(X))
    if any(_is_named(row) for row in all_rows):
        path, fields = _write_named_csv(all_rows, labels, directory, order)
        return path, fields | unlabelled
    width = int(X.shape[1]) if hasattr(X, "shape") else _width(all_rows)
    if any(isinstance(v, str) for v in labels or []) or not all(map(_all_numbers, all_rows)):
        path, fields = _write_csv(all_rows, width, labels, directory)
        return path, fields | unlabelled
    path = directory / "arrays.svm.gz"
    # Rows without labels still start with one: the service reads it and keeps none.
    label_texts = ["0"] * len(all_rows) if labels is None else [_label_text(v) for v in labels]
    with gzip.open(path, "wt", compresslevel=5, encoding="ascii") as out:
        for i, (label, row) in enumerate(zip(label_texts, all_rows, strict=True)):
            pairs = dict(
                zip(row["indices"], row["values"], strict=True) if isinstance(row, dict) else enumerate(row)
            )
            features = [f"{j + 1}:{v!r}" for j, v in sorted(pairs.items()) if v != 0]
            if i == 0 and width and not pairs.get(width - 1):
                # svmlight has no width: an explicit last feature keeps trailing all-zero
                # columns, so the model takes rows as wide as X.
                features.append(f"{width}:0")
            out.write(f"{label} {' '.join(features)}\n")
    return path, {"format": "svmlight", "zero_based": "false", **unlabelled}


def _cell_text(value: Any) -> str:
    """A CSV cell: a missing value empty, a number in full precision, text as it is."""
    if value is None:
        return ""
    return value if isinstance(value, str) else repr(value)


def _write_csv(
    all_rows: list[Row], width: int, labels: list[Any] | None, directory: Path
) -> tuple[Path, dict[str, str]]:
    path = directory / "arrays.csv.gz"
    with gzip.open(path, "wt", compresslevel=5, encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        for i, row in enumerate(all_rows):
            label = [] if labels is None else [str(labels[i])]
            writer.writerow([*map(_cell_text, _dense(row, width)), *label])
    return path, {"format": "csv", "header": "false"} | ({} if labels is None else {"label_column": "-1"})


def _is_named(row: Row) -> bool:
    return isinstance(row, dict) and set(row) != {"indices", "values"}


def _write_named_csv(
    all_rows: list[Row], labels: list[Any] | None, directory: Path, order: Sequence[str] | None = None
) -> tuple[Path, dict[str, str]]:
    """Rows keyed by feature name as a CSV with a header: the names in the order first met (or
    ``order``'s, when the rows name nothing else), a name a row lacks an empty (missing) cell,
    the labels (if any) in a last column "label"."""
    if not all(map(_is_named, all_rows)):
        raise ValueError("X mixes rows keyed by feature name with other rows")
    names = list(dict.fromkeys(name for row in all_rows for name in row))
    if order is not None and set(names) <= set(order):
        names = list(order)
    label = next(f"label{'_' * n}" for n in range(len(names) + 1) if f"label{'_' * n}" not in names)
    path = directory / "named.csv.gz"
    with gzip.open(path, "wt", compresslevel=5, encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(names if labels is None else [*names, label])
        for i, row in enumerate(all_rows):
            assert isinstance(row, dict)
            value = [] if labels is None else [str(labels[i])]
            writer.writerow([*(_cell_text(row.get(name)) for name in names), *value])
    return path, {"format": "csv", "header": "true"} | ({} if labels is None else {"label_column": label})


def write_frame(frame: Any, directory: Path) -> Path:
    """A DataFrame as a gzip CSV with its header (:mod:`pgs_client.frames`)."""
    path = directory / "frame.csv.gz"
    with gzip.open(path, "wt", compresslevel=5, encoding="utf-8", newline="") as out:
        for chunk in frames.csv_chunks(frame):
            out.write(chunk)
    return path


def gzip_file(source: Path, directory: Path) -> Path:
    """A gzip copy of ``source`` in ``directory`` (uploads of big text files travel smaller)."""
    target = directory / (source.name + ".gz")
    with source.open("rb") as src, gzip.open(target, "wb", compresslevel=5) as dst:
        while chunk := src.read(1 << 20):
            dst.write(chunk)
    return target


def is_gzip(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(2) == b"\x1f\x8b"
