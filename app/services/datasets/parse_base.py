"""What the parsers of every format share: the options, the errors, the sink the rows go to, the
blocks of whole lines a file is read in, and the labels' task."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Literal, Protocol

import numpy as np
import scipy.sparse as sp

# Integer labels with more distinct values than this are taken as a regression target
# (abalone's ages 1..29 are), unless the upload says task=classification.
MAX_AUTO_CLASSES = 20
MAX_CLASSES = 1000
BLOCK_BYTES = 4 * 1024 * 1024
# A run of blank lines: collapsed before parsing, so blank lines cost a regex scan, not a
# parser iteration each (a gzip of newlines would otherwise keep a parser busy for minutes).
_BLANK_RUN = re.compile(rb"\n[ \t\r\n]*\n")

Format = Literal["svmlight", "csv", "parquet", "arrow"]
# The cells that are missing values unless an upload says otherwise: those R's write.csv and
# pandas' to_csv write, as pandas' read_csv reads them. An empty cell is always missing.
DEFAULT_NA_VALUES = ("", "NA", "N/A", "NaN", "nan", "null", "NULL", "None")
LabelKind = Literal["numeric", "string"]


class ParseError(ValueError):
    """The file cannot be read as the data set it claims to be."""


class TooLargeError(ParseError):
    """The data grew past a configured limit."""


@dataclass(frozen=True)
class ParseOptions:
    format: Literal["auto", "svmlight", "csv", "parquet", "arrow"] = "auto"
    label_column: str | None = None
    # False: the rows have no label column (new rows to predict); svmlight lines' leading labels
    # are read and not stored.
    labelled: bool = True
    header: Literal["auto", "true", "false"] = "auto"
    zero_based: Literal["auto", "true", "false"] = "auto"
    task: Literal["auto", "classification", "regression"] = "auto"
    filename: str = ""
    max_decompressed_bytes: int = 2**31
    max_compression_ratio: float = 100.0
    max_features: int = 2**24
    max_label_chars: int = 256
    threads: int = 1  # svmlight: blocks of lines parsed at once
    # The data set's width, declared by the upload (a test set with the training set's width).
    n_features: int | None = None
    # CSV cells read as missing values (NaN in a numeric column, the empty category in a text one).
    na_values: tuple[str, ...] = DEFAULT_NA_VALUES


class RowSink(Protocol):
    """Where parsed rows go, block by block (the shard writer)."""

    def add(self, X: sp.csr_matrix, y: np.ndarray, text: np.ndarray | None = None) -> None:
        """Rows, their labels and (CSV with text columns) their text values (rows x k)."""

    def shift_indices(self, delta: int) -> None: ...

    def abort(self) -> None: ...


@dataclass
class ParsedDataset:
    """What the parse learned about the rows it gave its sink."""

    n_features: int
    format: Format
    compressed: bool
    label_kind: LabelKind
    task: Literal["binary", "multiclass", "regression"]
    classes: list[int | float | str] | None
    index_base: int
    # CSV, Parquet and Arrow: the columns' names, the text columns (values given to the sink, one
    # column each, zeros in X) and the missing numeric cells (NaN in X).
    columns: CsvColumns | None = None
    labelled: bool = True


@dataclass
class CsvColumns:
    feature_names: list[str] | None
    label_name: str | None
    text_columns: list[int]  # their values go to the sink beside the rows, one column each
    n_missing: int


# -- blocks of whole lines ------------------------------------------------------------------


def line_blocks(stream: IO[bytes], first_line: int) -> Iterator[tuple[int, bytes]]:
    """Blocks of whole lines (about BLOCK_BYTES each), each with the number of its first line."""
    line = first_line
    pending: list[bytes] = []
    while chunk := stream.read(BLOCK_BYTES):
        cut = chunk.rfind(b"\n") + 1
        if cut == 0:  # a line longer than a block: keep reading
            pending.append(chunk)
            continue
        block = b"".join([*pending, chunk[:cut]])
        pending = [chunk[cut:]]
        yield line, block
        line += block.count(b"\n")
    rest = b"".join(pending)
    if rest.strip():
        yield line, rest


def without_blank_lines(block: bytes) -> bytes:
    return _BLANK_RUN.sub(b"\n", b"\n" + block)[1:]


def _is_data_line(line: bytes, comments: bool) -> bool:
    text = line.split(b"#", 1)[0] if comments else line
    return bool(text.strip())


def _line_of_row(block: bytes, first_line: int, row: int, comments: bool) -> int:
    """The file line of the ``row``-th data row of ``block`` (blank and comment lines skipped)."""
    seen = -1
    for offset, line in enumerate(block.split(b"\n")):
        if _is_data_line(line, comments):
            seen += 1
            if seen == row:
                return first_line + offset
    return first_line


def first_nonfinite_line(
    X: sp.csr_matrix,
    y: np.ndarray | None,
    block: bytes,
    first_line: int,
    comments: bool,
    missing: bool = False,
) -> str | None:
    """The first line with an infinite feature (or NaN, unless ``missing`` values are allowed) or
    a non-finite label."""
    bad_x = np.isinf(X.data) if missing else ~np.isfinite(X.data)
    if bad_x.any():
        row = int(np.searchsorted(X.indptr, np.flatnonzero(bad_x)[0], "right")) - 1
        return f"line {_line_of_row(block, first_line, row, comments)}: a feature is NaN or infinite"
    if y is not None and y.dtype.kind == "f" and not np.isfinite(y).all():
        row = int(np.flatnonzero(~np.isfinite(y))[0])
        return f"line {_line_of_row(block, first_line, row, comments)}: the label is NaN or infinite"
    return None


class CountedRows:
    """Rows on their way to the sink, counted, with their distinct labels tallied."""

    def __init__(self, sink: RowSink) -> None:
        self.sink = sink
        self.rows = 0
        self.labels = LabelTally()

    def add(self, X: sp.csr_matrix, y: np.ndarray, text: np.ndarray | None = None) -> None:
        self.sink.add(X, y, text)
        self.rows += X.shape[0]
        self.labels.add(y)

    def restart(self) -> None:
        self.sink.abort()
        self.rows, self.labels = 0, LabelTally()


def check_width(width: int, options: ParseOptions) -> None:
    if width > options.max_features:
        # A single huge index (e.g. "1 2147483647:1") would make every model that size.
        raise ParseError(
            f"{width} features (the largest feature index); the limit is "
            f"{options.max_features} (PGS_MAX_FEATURES)"
        )


# -- labels -----------------------------------------------------------------------------------


def no_labels(n_rows: int) -> np.ndarray:
    """The labels stored for rows without any (``labelled=false``): zeros, never read as labels
    (the data set says it has none)."""
    return np.zeros(n_rows)


def json_label(v: object) -> int | float | str:
    if isinstance(v, str | np.str_):
        return str(v)
    f = float(v)  # type: ignore[arg-type]
    return int(f) if f.is_integer() else f


class LabelTally:
    """The distinct labels of a data set, tallied block by block: all of them up to
    MAX_CLASSES, beyond that only that there are more (all :func:`infer_task` needs)."""

    def __init__(self, y: np.ndarray | None = None) -> None:
        self.values: np.ndarray | None = None
        self.more = False  # more than MAX_CLASSES distinct labels
        self.integral = True  # every numeric label is a whole number
        if y is not None:
            self.add(y)

    def add(self, y: np.ndarray) -> None:
        uniq = np.unique(y)
        if uniq.dtype.kind == "f":
            self.integral &= bool(np.all(uniq == np.round(uniq)))
        merged = uniq if self.values is None else np.union1d(self.values, uniq)
        self.more |= len(merged) > MAX_CLASSES
        self.values = merged[:MAX_CLASSES]

    @property
    def count(self) -> int:
        """The number of distinct labels (MAX_CLASSES + 1 stands for more)."""
        n = 0 if self.values is None else len(self.values)
        return n + int(self.more)


def infer_task(
    labels: LabelTally | np.ndarray, label_kind: str, override: str = "auto"
) -> tuple[Literal["binary", "multiclass", "regression"], list[int | float | str] | None]:
    """Classification or regression from the labels (or the upload's ``task`` override)."""
    if override == "regression":
        if label_kind == "string":
            raise ParseError("task=regression needs numeric labels, the labels are strings")
        return "regression", None
    tally = labels if isinstance(labels, LabelTally) else LabelTally(labels)
    if override == "auto" and label_kind == "numeric" and tally.count > 2:
        if not tally.integral or tally.count > MAX_AUTO_CLASSES:
            return "regression", None
    if tally.more:
        raise ParseError(f"more than {MAX_CLASSES} distinct labels; that many classes are not allowed")
    task: Literal["binary", "multiclass"] = "binary" if tally.count <= 2 else "multiclass"
    values = tally.values if tally.values is not None else np.empty(0)
    return task, [json_label(v) for v in values]
