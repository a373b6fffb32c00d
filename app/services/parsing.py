"""Turn an uploaded svmlight or CSV file (optionally gzip-compressed) into CSR features and labels.

Parsing uses well-kept parsers (scikit-learn's ``load_svmlight_file``, NumPy's ``loadtxt``) on a
stream read from disk; every way the input can be wrong ends as :class:`ParseError`, which the
route turns into a 422 (or 413 for :class:`TooLargeError`).
"""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal, TypeVar, cast

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

GZIP_MAGIC = b"\x1f\x8b"
# Integer labels with more distinct values than this are taken as a regression target
# (abalone's ages 1..29 are), unless the upload says task=classification.
MAX_AUTO_CLASSES = 20
MAX_CLASSES = 1000
SNIFF_BYTES = 64 * 1024

Format = Literal["svmlight", "csv"]
T = TypeVar("T")


class ParseError(ValueError):
    """The file cannot be read as the data set it claims to be."""


class TooLargeError(ParseError):
    """The decompressed stream grew past the configured limit."""


@dataclass(frozen=True)
class ParseOptions:
    format: Literal["auto", "svmlight", "csv"] = "auto"
    label_column: str | None = None
    header: Literal["auto", "true", "false"] = "auto"
    zero_based: Literal["auto", "true", "false"] = "auto"
    task: Literal["auto", "classification", "regression"] = "auto"
    filename: str = ""
    max_decompressed_bytes: int = 2**31


@dataclass
class ParsedDataset:
    X: sp.csr_matrix
    y: np.ndarray
    format: Format
    compressed: bool
    label_kind: Literal["numeric", "string"]
    task: Literal["binary", "multiclass", "regression"]
    classes: list[int | float | str] | None
    index_base: int


class _LimitedReader(io.RawIOBase):
    """Counts bytes read from a (decompressing) stream and stops past a limit."""

    def __init__(self, inner: IO[bytes], limit: int) -> None:
        self._inner = inner
        self._limit = limit
        self._count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self._inner.read(len(buffer))
        self._count += len(data)
        if self._count > self._limit:
            raise TooLargeError(
                f"the decompressed data exceeds the limit of {self._limit} bytes"
            )
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._inner.close()
        super().close()


def is_gzip(path: Path) -> bool:
    with path.open("rb") as fh:
        return fh.read(2) == GZIP_MAGIC


def _opener(path: Path, compressed: bool, limit: int) -> Callable[[], io.BufferedReader]:
    def open_stream() -> io.BufferedReader:
        raw = cast(IO[bytes], gzip.open(path, "rb") if compressed else path.open("rb"))
        return io.BufferedReader(_LimitedReader(raw, limit), buffer_size=1 << 20)

    return open_stream


def _decompression_guard(fn: Callable[[], T]) -> T:
    # Corrupt gzip streams surface as several exception types depending on where they break.
    try:
        return fn()
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise ParseError(f"the file is not a valid gzip stream: {exc}") from exc


def _sniff_format(head: bytes, filename: str) -> Format:
    name = filename.lower().removesuffix(".gz")
    if name.endswith(".csv") or name.endswith(".tsv"):
        return "csv"
    if name.endswith((".svm", ".svmlight", ".libsvm")):
        return "svmlight"
    for raw_line in head.splitlines():
        line = raw_line.strip()
        if not line or line.startswith(b"#"):
            continue
        tokens = line.split(b"#", 1)[0].split()
        if any(b":" in t for t in tokens[1:]):
            return "svmlight"
        if any(d in line for d in (b",", b";", b"\t")):
            return "csv"
        break
    raise ParseError("cannot tell the file format from its content; pass format=svmlight or csv")


def parse_upload(path: Path, options: ParseOptions) -> ParsedDataset:
    """Parse the raw uploaded file at ``path``."""
    if path.stat().st_size == 0:
        raise ParseError("the file is empty")
    compressed = is_gzip(path)
    open_stream = _opener(path, compressed, options.max_decompressed_bytes)

    def read_head() -> bytes:
        with open_stream() as fh:
            return fh.read(SNIFF_BYTES)

    head = _decompression_guard(read_head)
    if not head.strip():
        raise ParseError("the file is empty" + (" after decompression" if compressed else ""))
    fmt: Format = (
        _sniff_format(head, options.filename) if options.format == "auto" else options.format
    )
    if fmt == "svmlight":
        X, y, index_base = _decompression_guard(lambda: _parse_svmlight(open_stream, options))
        label_kind: Literal["numeric", "string"] = "numeric"
    else:
        X, y, label_kind = _decompression_guard(lambda: _parse_csv(open_stream, head, options))
        index_base = 1
    _check_values(X, y, label_kind)
    task, classes = infer_task(y, label_kind, options.task)
    return ParsedDataset(X, y, fmt, compressed, label_kind, task, classes, index_base)


def _parse_svmlight(
    open_stream: Callable[[], io.BufferedReader], options: ParseOptions
) -> tuple[sp.csr_matrix, np.ndarray, int]:
    # Parse with raw (0-based) indices and decide the base ourselves, so the base is known and
    # can be stored: prediction requests in svmlight text must use the same convention.
    try:
        with open_stream() as fh:
            X, y = load_svmlight_file(fh, dtype=np.float64, zero_based=True)
    except TooLargeError:
        raise
    except (ValueError, UnicodeDecodeError, OverflowError) as exc:
        raise ParseError(f"not a valid svmlight/LIBSVM file: {exc}") from exc
    X = sp.csr_matrix(X)
    if options.zero_based == "true":
        index_base = 0
    elif options.zero_based == "false":
        index_base = 1
    else:
        # scikit-learn's rule for zero_based="auto": 1-based unless some index is 0.
        index_base = 0 if (X.nnz and X.indices.min() == 0) else 1
    if index_base == 1:
        if X.nnz and X.indices.min() == 0:
            raise ParseError("feature index 0 found, but zero_based=false (indices start at 1)")
        n_features = max(X.shape[1] - 1, 0)
        X = sp.csr_matrix((X.data, X.indices - 1, X.indptr), shape=(X.shape[0], n_features))
    return X, y, index_base


def _csv_delimiter(head: bytes) -> str:
    first = next((ln for ln in head.splitlines() if ln.strip()), b"")
    for d in (",", ";", "\t"):
        if d.encode() in first:
            return d
    return ","


def _split_first_row(head: bytes, delimiter: str) -> list[str]:
    first = next((ln for ln in head.splitlines() if ln.strip()), b"")
    try:
        text = first.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(f"the CSV file is not UTF-8 text: {exc}") from exc
    return [c.strip().strip('"') for c in text.split(delimiter)]


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _label_index(label_column: str | None, names: list[str] | None, n_cols: int) -> int:
    if label_column is None or label_column == "":
        return n_cols - 1
    try:
        idx = int(label_column)
    except ValueError:
        if names is None or label_column not in names:
            raise ParseError(
                f"label_column {label_column!r} is neither a column number nor a header name"
            ) from None
        return names.index(label_column)
    if not -n_cols <= idx < n_cols:
        raise ParseError(f"label_column {idx} is out of range for {n_cols} columns")
    return idx % n_cols


def _parse_csv(
    open_stream: Callable[[], io.BufferedReader], head: bytes, options: ParseOptions
) -> tuple[sp.csr_matrix, np.ndarray, Literal["numeric", "string"]]:
    delimiter = _csv_delimiter(head)
    first = _split_first_row(head, delimiter)
    n_cols = len(first)
    if n_cols < 2:
        raise ParseError("a CSV data set needs at least one feature column and a label column")
    if options.header == "auto":
        if options.label_column and not _is_int(options.label_column):
            has_header = True  # a label column given by name needs a header row
        else:
            # Without a header every feature field of the first row is a number.
            guess = _label_index(options.label_column, None, n_cols)
            has_header = not all(_is_number(c) for i, c in enumerate(first) if i != guess)
    else:
        has_header = options.header == "true"
    names = first if has_header else None
    label_col = _label_index(options.label_column, names, n_cols)
    feature_cols = [i for i in range(n_cols) if i != label_col]
    skip = 1 if has_header else 0

    def load(usecols: list[int] | None, dtype: type) -> np.ndarray:
        with open_stream() as fh:
            text = io.TextIOWrapper(fh, encoding="utf-8", newline="")
            return np.loadtxt(
                text, delimiter=delimiter, dtype=dtype, skiprows=skip, usecols=usecols,
                ndmin=2, quotechar='"', comments=None,
            )

    try:
        try:
            # All-numeric files: one pass, and loadtxt checks every row has n_cols columns.
            table = load(None, np.float64)
            if table.shape[1] != n_cols:
                raise ParseError(f"expected {n_cols} columns, found {table.shape[1]}")
            features = table[:, feature_cols]
            labels: np.ndarray = table[:, label_col]
            kind: Literal["numeric", "string"] = "numeric"
        except ValueError:
            labels = load([label_col], str)[:, 0]
            labels = np.char.strip(labels)
            features = load(feature_cols, np.float64)
            kind = "string"
            if np.any(labels == ""):
                row = int(np.flatnonzero(labels == "")[0]) + skip + 1
                raise ParseError(f"empty label at line {row}") from None
    except TooLargeError:
        raise
    except ParseError:
        raise
    except (ValueError, UnicodeDecodeError, IndexError) as exc:
        raise ParseError(f"not a valid CSV data set: {exc}") from exc
    if features.shape[0] == 0:
        raise ParseError("the file has no data rows")
    return sp.csr_matrix(features), labels, kind


def _is_int(s: str | None) -> bool:
    if s is None:
        return False
    try:
        int(s)
    except ValueError:
        return False
    return True


def _check_values(X: sp.csr_matrix, y: np.ndarray, label_kind: str) -> None:
    if X.shape[0] == 0:
        raise ParseError("the file has no data rows")
    if X.shape[1] == 0:
        raise ParseError("the file has no features (every row is empty)")
    if not np.isfinite(X.data).all():
        row = int(np.searchsorted(X.indptr, np.flatnonzero(~np.isfinite(X.data))[0], "right")) - 1
        raise ParseError(f"features contain NaN or infinity (first in data row {row + 1})")
    if label_kind == "numeric" and not np.isfinite(y).all():
        row = int(np.flatnonzero(~np.isfinite(y))[0])
        raise ParseError(f"labels contain NaN or infinity (first in data row {row + 1})")


def json_label(v: object) -> int | float | str:
    if isinstance(v, str | np.str_):
        return str(v)
    f = float(v)  # type: ignore[arg-type]
    return int(f) if f.is_integer() else f


def infer_task(
    y: np.ndarray, label_kind: str, override: str = "auto"
) -> tuple[Literal["binary", "multiclass", "regression"], list[int | float | str] | None]:
    """Classification or regression from the labels (or the upload's ``task`` override)."""
    if override == "regression":
        if label_kind == "string":
            raise ParseError("task=regression needs numeric labels, the labels are strings")
        return "regression", None
    uniq = np.unique(y)
    if override == "auto" and label_kind == "numeric" and len(uniq) > 2:
        integral = bool(np.all(uniq == np.round(uniq)))
        if not integral or len(uniq) > MAX_AUTO_CLASSES:
            return "regression", None
    if len(uniq) > MAX_CLASSES:
        raise ParseError(f"{len(uniq)} distinct labels is more than the {MAX_CLASSES} classes allowed")
    task: Literal["binary", "multiclass"] = "binary" if len(uniq) <= 2 else "multiclass"
    return task, [json_label(v) for v in uniq]
