"""Matrices as the service reads them: rows for ``/predict`` and svmlight/CSV files for uploads.

Accepted feature matrices: a NumPy 2-D array (or anything ``numpy.asarray`` takes), a SciPy
sparse matrix, a pandas DataFrame, a list of dense rows, or a list of dicts (a sparse row each:
``{feature index: value}`` with 0-based indices, or the API's own ``{"indices", "values"}``).
NumPy, SciPy and pandas are only imported when the input is one of theirs.
"""

from __future__ import annotations

import csv
import gzip
import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

Row = list[float] | dict[str, list[Any]]


def _is_sparse(X: Any) -> bool:
    return hasattr(X, "tocsr") and hasattr(X, "nnz")


def _is_frame(X: Any) -> bool:
    return type(X).__module__.startswith("pandas") and hasattr(X, "to_numpy")


def n_rows(X: Any) -> int:
    shape = getattr(X, "shape", None)
    return int(shape[0]) if shape is not None else len(X)


def rows(X: Any) -> Iterator[Row]:
    """The rows of ``X`` as the JSON the service reads: a list of numbers (dense) or
    ``{"indices": [...], "values": [...]}`` (sparse, 0-based)."""
    if _is_sparse(X):
        csr = X.tocsr()
        for i in range(csr.shape[0]):
            a, b = csr.indptr[i], csr.indptr[i + 1]
            yield {"indices": csr.indices[a:b].tolist(), "values": csr.data[a:b].tolist()}
        return
    if _is_frame(X) or hasattr(X, "__array__"):
        import numpy as np

        array = np.asarray(X.to_numpy(dtype=float) if _is_frame(X) else X, dtype=float)
        if array.ndim != 2:
            raise ValueError(f"X must be 2-D (rows x features), got shape {array.shape}")
        yield from array.tolist()
        return
    if isinstance(X, (str, bytes)) or not isinstance(X, Sequence):
        raise TypeError(
            f"X must be an array, a sparse matrix, a DataFrame or a list of rows, not {type(X).__name__}"
        )
    for row in X:
        yield _sparse_row(row) if isinstance(row, Mapping) else [float(v) for v in row]


def _sparse_row(row: Mapping[Any, Any]) -> dict[str, list[Any]]:
    if set(row) == {"indices", "values"}:
        return {"indices": [int(i) for i in row["indices"]], "values": [float(v) for v in row["values"]]}
    items = sorted((int(k), float(v)) for k, v in row.items())
    return {"indices": [k for k, _ in items], "values": [v for _, v in items]}


def encode_row(row: Row) -> bytes:
    """One row as JSON; NaN and infinities are refused here (they are not JSON)."""
    try:
        return json.dumps(row, allow_nan=False, separators=(",", ":")).encode()
    except ValueError as exc:
        raise ValueError("X holds NaN or infinite values, which the service cannot read") from exc


def batches(X: Any, max_rows: int, max_bytes: int) -> Iterator[list[bytes]]:
    """Encoded rows of ``X`` in groups of at most ``max_rows`` rows and about ``max_bytes``."""
    batch: list[bytes] = []
    size = 0
    for row in rows(X):
        encoded = encode_row(row)
        if batch and (len(batch) >= max_rows or size + len(encoded) > max_bytes):
            yield batch
            batch, size = [], 0
        batch.append(encoded)
        size += len(encoded) + 1
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


def _dense(row: Row, width: int) -> list[float]:
    if isinstance(row, list):
        return row
    out = [0.0] * width
    for j, v in zip(row["indices"], row["values"], strict=True):
        out[j] = v
    return out


def _width(all_rows: list[Row]) -> int:
    return max(
        (len(r) if isinstance(r, list) else max(r["indices"], default=-1) + 1 for r in all_rows), default=0
    )


def write_upload(X: Any, y: Any, directory: Path) -> tuple[Path, dict[str, str]]:
    """Write ``(X, y)`` gzip-compressed into ``directory``; returns the file and the upload's
    form fields. Numeric labels give svmlight (sparse, 1-based indices); string labels give a
    CSV with the label last (dense: a sparse X is written out in full)."""
    labels = _labels(y)
    if len(labels) != n_rows(X):
        raise ValueError(f"X has {n_rows(X)} rows and y {len(labels)} labels")
    all_rows: Iterable[Row] = rows(X)
    if hasattr(X, "shape"):
        width = int(X.shape[1])
    else:
        all_rows = list(all_rows)
        width = _width(all_rows)
    if any(isinstance(v, str) for v in labels):
        return _write_csv(all_rows, width, labels, directory)
    path = directory / "arrays.svm.gz"
    with gzip.open(path, "wt", compresslevel=5, encoding="ascii") as out:
        for i, (label, row) in enumerate(zip(labels, all_rows, strict=True)):
            pairs = dict(
                zip(row["indices"], row["values"], strict=True) if isinstance(row, dict) else enumerate(row)
            )
            features = [f"{j + 1}:{v!r}" for j, v in sorted(pairs.items()) if v != 0]
            if i == 0 and width and not pairs.get(width - 1):
                # svmlight has no width: an explicit last feature keeps trailing all-zero
                # columns, so the model takes rows as wide as X.
                features.append(f"{width}:0")
            out.write(f"{_label_text(label)} {' '.join(features)}\n")
    return path, {"format": "svmlight", "zero_based": "false"}


def _write_csv(
    all_rows: Iterable[Row], width: int, labels: list[Any], directory: Path
) -> tuple[Path, dict[str, str]]:
    path = directory / "arrays.csv.gz"
    with gzip.open(path, "wt", compresslevel=5, encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        for label, row in zip(labels, all_rows, strict=True):
            writer.writerow([*map(repr, _dense(row, width)), str(label)])
    return path, {"format": "csv", "header": "false", "label_column": "-1"}


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
