"""Turn an uploaded svmlight or CSV file (optionally gzip, bzip2 or xz compressed) into CSR features
and labels.

The file is read as a stream of blocks of whole lines (about 4 MiB each); each block is parsed by
a well-kept parser (scikit-learn's ``load_svmlight_file``, NumPy's ``loadtxt``) into CSR rows that
go straight to a :class:`RowSink` (the shard writer, :mod:`app.services.datasets.shards`), so neither the
text nor the data is ever held whole: the parse's memory is a block and a shard, whatever the
file's size. Every way the input can be
wrong ends as :class:`ParseError` naming the line where it can (a 422), or :class:`TooLargeError`
naming the limit (a 413). The route runs this in a child process with memory and time limits
(:mod:`app.services.datasets.parse_process`).
"""

from __future__ import annotations

import bz2
import csv
import dataclasses
import gzip
import io
import lzma
import math
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal, Protocol, TypeVar, cast

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

# Compressed uploads, told apart by their first bytes (a file's name is not trusted).
CODECS: dict[str, tuple[bytes, Callable[[Path], IO[bytes]]]] = {
    "gzip": (b"\x1f\x8b", lambda p: cast(IO[bytes], gzip.open(p, "rb"))),
    "bzip2": (b"BZh", lambda p: cast(IO[bytes], bz2.open(p, "rb"))),
    "xz": (b"\xfd7zXZ\x00", lambda p: cast(IO[bytes], lzma.open(p, "rb"))),
}
# Formats recognised only to name them when they are refused.
UNSUPPORTED_MAGIC = {
    b"PK\x03\x04": "a zip archive",
    b"7z\xbc\xaf\x27\x1c": "a 7-Zip archive",
    b"\x28\xb5\x2f\xfd": "a Zstandard stream",
    b"Rar!": "a RAR archive",
    b"\x89HDF": "an HDF5 file",
    b"PAR1": "a Parquet file",
    b"\x93NUMPY": "a NumPy .npy file",
    b"%PDF": "a PDF document",
    b"\x89PNG": "a PNG image",
}
COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz")
# Integer labels with more distinct values than this are taken as a regression target
# (abalone's ages 1..29 are), unless the upload says task=classification.
MAX_AUTO_CLASSES = 20
MAX_CLASSES = 1000
SNIFF_BYTES = 64 * 1024
BLOCK_BYTES = 4 * 1024 * 1024
# Any gzip upload may inflate to this much, whatever its compression ratio (tiny files of
# repeated rows compress far better than real data sets, which stay under 25:1).
RATIO_FLOOR_BYTES = 16 * 1024 * 1024
# A run of blank lines: collapsed before parsing, so blank lines cost a regex scan, not a
# parser iteration each (a gzip of newlines would otherwise keep a parser busy for minutes).
_BLANK_RUN = re.compile(rb"\n[ \t\r\n]*\n")

Format = Literal["svmlight", "csv"]
LabelKind = Literal["numeric", "string"]
T = TypeVar("T")


class ParseError(ValueError):
    """The file cannot be read as the data set it claims to be."""


class TooLargeError(ParseError):
    """The data grew past a configured limit."""


@dataclass(frozen=True)
class ParseOptions:
    format: Literal["auto", "svmlight", "csv"] = "auto"
    label_column: str | None = None
    header: Literal["auto", "true", "false"] = "auto"
    zero_based: Literal["auto", "true", "false"] = "auto"
    task: Literal["auto", "classification", "regression"] = "auto"
    filename: str = ""
    max_decompressed_bytes: int = 2**31
    max_compression_ratio: float = 100.0
    max_features: int = 2**24
    max_label_chars: int = 256
    # The data set's width, declared by the upload (a test set with the training set's width).
    n_features: int | None = None


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
    # CSV only: the header's names, the text columns (values given to the sink, one column each,
    # zeros in X) and the empty numeric cells (NaN in X).
    columns: CsvColumns | None = None


@dataclass
class CsvColumns:
    feature_names: list[str] | None
    label_name: str | None
    text_columns: list[int]  # their values go to the sink beside the rows, one column each
    n_missing: int


class _LimitedReader(io.RawIOBase):
    """Counts bytes read from a (decompressing) stream and stops past a limit."""

    def __init__(self, inner: IO[bytes], limit: int, setting: str) -> None:
        self._inner = inner
        self._limit = limit
        self._setting = setting
        self._count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self._inner.read(len(buffer))
        self._count += len(data)
        if self._count > self._limit:
            raise TooLargeError(f"the decompressed data exceeds {self._limit} bytes ({self._setting})")
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._inner.close()
        super().close()


def compression_of(path: Path) -> str | None:
    """The codec of a compressed upload (a key of CODECS), None for a plain file; ParseError for
    an archive or a binary format the service does not read, named."""
    with path.open("rb") as fh:
        head = fh.read(8)
    for codec, (magic, _) in CODECS.items():
        if head.startswith(magic):
            return codec
    for magic, what in UNSUPPORTED_MAGIC.items():
        if head.startswith(magic):
            raise ParseError(
                f"the file is {what}; upload the svmlight or CSV file itself, plain "
                "or compressed with gzip, bzip2 or xz"
            )
    return None


def _inflate_limit(path: Path, options: ParseOptions) -> tuple[int, str]:
    """How far the decompressed stream may grow, and the setting that says so."""
    by_ratio = max(int(options.max_compression_ratio * path.stat().st_size), RATIO_FLOOR_BYTES)
    if by_ratio < options.max_decompressed_bytes:
        return by_ratio, (
            f"{options.max_compression_ratio:g} times the compressed size, PGS_MAX_COMPRESSION_RATIO"
        )
    return options.max_decompressed_bytes, "PGS_MAX_DECOMPRESSED_BYTES"


def _opener(path: Path, codec: str | None, options: ParseOptions) -> Callable[[], io.BufferedReader]:
    limit, setting = (
        _inflate_limit(path, options)
        if codec
        else (options.max_decompressed_bytes, "PGS_MAX_DECOMPRESSED_BYTES")
    )

    def open_stream() -> io.BufferedReader:
        raw = CODECS[codec][1](path) if codec else cast(IO[bytes], path.open("rb"))
        return io.BufferedReader(_LimitedReader(raw, limit, setting), buffer_size=1 << 20)

    return open_stream


def _decompression_guard(fn: Callable[[], T], codec: str | None) -> T:
    # Corrupt streams surface as several exception types depending on the codec and where they
    # break (bz2 raises a bare OSError).
    try:
        return fn()
    except (gzip.BadGzipFile, EOFError, zlib.error, lzma.LZMAError, OSError) as exc:
        if codec is None:
            raise
        raise ParseError(f"the file is not a valid {codec} stream: {exc}") from exc


def _inflate_all(open_stream: Callable[[], io.BufferedReader]) -> None:
    """Decompress once without parsing: a gzip bomb (or a corrupt stream) is refused in the
    time inflating takes, before a parser spends time on it."""
    with open_stream() as fh:
        while fh.read(BLOCK_BYTES):
            pass


def _sniff_format(head: bytes, filename: str, codec: str | None) -> Format:
    name = filename.lower()
    for suffix in COMPRESSED_SUFFIXES:
        name = name.removesuffix(suffix)
    if name.endswith(".csv") or name.endswith(".tsv"):
        return "csv"
    if name.endswith((".svm", ".svmlight", ".libsvm")):
        return "svmlight"
    first = b""
    for raw_line in head.splitlines():
        line = raw_line.strip()
        if not line or line.startswith(b"#"):
            continue
        first = line
        tokens = line.split(b"#", 1)[0].split()
        if any(b":" in t for t in tokens[1:]):
            return "svmlight"
        if any(d in line for d in (b",", b";", b"\t")):
            return "csv"
        break
    raise ParseError(
        f"cannot tell the file format from its content: {_describe(first, codec)}; "
        "pass format=svmlight or format=csv"
    )


def _describe(line: bytes, codec: str | None) -> str:
    """What the sniffer saw on the first data line, for the error that says it is neither."""
    where = f"{codec}-compressed " if codec else ""
    if b"\x00" in line or not _is_text(line):
        return f"the {where}content is binary (it starts with bytes {line[:8].hex(' ')})"
    shown = line[:60].decode("utf-8", "replace") + ("..." if len(line) > 60 else "")
    n = len(line.split())
    return (
        f"the first {where}line, {shown!r}, has {n} field(s) separated by spaces, no "
        "'index:value' pair after the first field, and no ',', ';' or tab"
    )


def _is_text(line: bytes) -> bool:
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return all(c.isprintable() or c in "\t\r" for c in text)


def parse_upload(path: Path, options: ParseOptions, sink: RowSink) -> ParsedDataset:
    """Parse the raw uploaded file at ``path`` into ``sink``; on an error the sink holds part of
    the rows (the caller aborts it)."""
    if path.stat().st_size == 0:
        raise ParseError("the file is empty")
    codec = compression_of(path)
    open_stream = _opener(path, codec, options)
    if codec:
        _decompression_guard(lambda: _inflate_all(open_stream), codec)

    def read_head() -> bytes:
        with open_stream() as fh:
            return fh.read(SNIFF_BYTES)

    head = _decompression_guard(read_head, codec)
    if not head.strip():
        raise ParseError("the file is empty" + (" after decompression" if codec else ""))
    fmt: Format = _sniff_format(head, options.filename, codec) if options.format == "auto" else options.format
    out = _Rows(sink)
    if fmt == "svmlight":
        width, index_base = _decompression_guard(lambda: _parse_svmlight(open_stream, options, out), codec)
        label_kind: LabelKind = "numeric"
    else:
        width, label_kind, columns = _decompression_guard(
            lambda: _parse_csv(open_stream, options, out), codec
        )
        index_base = 1
    if out.rows == 0:
        raise ParseError("the file has no data rows")
    if width == 0:
        raise ParseError("the file has no features (every row is empty)")
    _check_width(max(width, options.n_features or 0), options)
    task, classes = infer_task(out.labels, label_kind, options.task)
    return ParsedDataset(
        _declared_width(width, options.n_features, index_base),
        fmt,
        codec is not None,
        label_kind,
        task,
        classes,
        index_base,
        columns if fmt == "csv" else None,
    )


def _declared_width(width: int, n_features: int | None, index_base: int) -> int:
    """The upload's declared width (trailing features may be absent from a sparse file)."""
    if n_features is None:
        return width
    if width > n_features:
        raise ParseError(
            f"the file has feature index {width - 1 + index_base} ({index_base}-based), "
            f"beyond the declared n_features={n_features}"
        )
    return n_features


# -- blocks of whole lines ------------------------------------------------------------------


def _blocks(stream: IO[bytes], first_line: int) -> Iterator[tuple[int, bytes]]:
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


def _without_blank_lines(block: bytes) -> bytes:
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


def _first_nonfinite_line(
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


class _Rows:
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


def _check_width(width: int, options: ParseOptions) -> None:
    if width > options.max_features:
        # A single huge index (e.g. "1 2147483647:1") would make every model that size.
        raise ParseError(
            f"{width} features (the largest feature index); the limit is "
            f"{options.max_features} (PGS_MAX_FEATURES)"
        )


# -- svmlight ---------------------------------------------------------------------------------


def _svmlight_block(block: bytes) -> tuple[sp.csr_matrix, np.ndarray]:
    # Raw (0-based) indices; the index base is decided once the whole file is seen.
    X, y = load_svmlight_file(io.BytesIO(block), dtype=np.float64, zero_based=True)
    return sp.csr_matrix(X), y


def _svmlight_error(block: bytes, first_line: int) -> ParseError:
    """Bisect the block's lines (each parses alone) for the first one the parser refuses."""
    lines = block.split(b"\n")
    lo, hi = 0, len(lines)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            _svmlight_block(b"\n".join(lines[lo:mid]))
        except (ValueError, UnicodeDecodeError, OverflowError):
            hi = mid
        else:
            lo = mid
    try:
        _svmlight_block(lines[lo])
    except (ValueError, UnicodeDecodeError, OverflowError) as exc:
        return ParseError(f"not a valid svmlight/LIBSVM file: line {first_line + lo}: {exc}")
    return ParseError("not a valid svmlight/LIBSVM file")


def _parse_svmlight(
    open_stream: Callable[[], io.BufferedReader], options: ParseOptions, out: _Rows
) -> tuple[int, int]:
    """(width, index base) of the rows given to ``out``."""
    base = _IndexBase(options.zero_based, out.sink)
    raw_width = 0  # the largest index + 1, as written in the file
    with open_stream() as fh:
        for first_line, block in _blocks(fh, 1):
            try:
                X, y = _svmlight_block(_without_blank_lines(block))
            except (ValueError, UnicodeDecodeError, OverflowError):
                raise _svmlight_error(block, first_line) from None
            problem = _first_nonfinite_line(X, y, block, first_line, comments=True)
            if problem:
                raise ParseError(problem)
            raw_width = max(raw_width, X.shape[1])
            out.add(base.apply(X), y)
            _check_width(raw_width - 1, options)  # stop early; the exact check is at the end
    return max(raw_width - base.base, 0), base.base


class _IndexBase:
    """scikit-learn's rule for zero_based="auto" (1-based unless some index is 0), decided as
    the blocks come: they are taken as 1-based until a 0 appears, then the rows already written
    get their indices back (rare: LIBSVM files are 1-based)."""

    def __init__(self, zero_based: str, sink: RowSink) -> None:
        self.base = 0 if zero_based == "true" else 1
        self.declared = zero_based != "auto"
        self.sink = sink

    def apply(self, X: sp.csr_matrix) -> sp.csr_matrix:
        if self.base == 1 and X.nnz and X.indices.min() == 0:
            if self.declared:
                raise ParseError("feature index 0 found, but zero_based=false (indices start at 1)")
            self.base = 0
            self.sink.shift_indices(1)
        if self.base == 0:
            return X
        indices = X.indices
        indices -= 1  # in place: a copy would be a third of the block again
        return sp.csr_matrix((X.data, indices, X.indptr), shape=(X.shape[0], max(X.shape[1] - 1, 0)))


# -- CSV --------------------------------------------------------------------------------------


def _csv_delimiter(first: str) -> str:
    for d in (",", ";", "\t"):
        if d in first:
            return d
    return ","


def _decode(line: bytes, line_no: int) -> str:
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(f"line {line_no}: the CSV file is not UTF-8 text: {exc}") from exc


def _split_row(text: str, delimiter: str, line_no: int) -> list[str]:
    if '"' not in text:
        return text.rstrip("\r\n").split(delimiter)
    try:
        return next(csv.reader([text], delimiter=delimiter), [])
    except csv.Error as exc:
        raise ParseError(f"line {line_no}: {exc}") from exc


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _is_int(s: str | None) -> bool:
    if s is None:
        return False
    try:
        int(s)
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


@dataclass(frozen=True)
class _CsvLayout:
    delimiter: str
    n_cols: int
    label_col: int
    has_header: bool
    names: list[str] | None = None
    # File columns of text features: those whose first data row holds a non-number.
    text_cols: tuple[int, ...] = ()

    @property
    def feature_cols(self) -> list[int]:
        return [c for c in range(self.n_cols) if c != self.label_col]


def _csv_layout(first: str, line_no: int, options: ParseOptions) -> _CsvLayout:
    delimiter = _csv_delimiter(first)
    cells = [c.strip() for c in _split_row(first, delimiter, line_no)]
    n_cols = len(cells)
    if n_cols < 2:
        raise ParseError("a CSV data set needs at least one feature column and a label column")
    _check_width(n_cols - 1, options)
    if options.header == "auto":
        if options.label_column and not _is_int(options.label_column):
            has_header = True  # a label column given by name needs a header row
        else:
            # Without a header every feature field of the first row is a number.
            guess = _label_index(options.label_column, None, n_cols)
            has_header = not all(_is_number(c) for i, c in enumerate(cells) if i != guess)
    else:
        has_header = options.header == "true"
    label_col = _label_index(options.label_column, cells if has_header else None, n_cols)
    return _CsvLayout(delimiter, n_cols, label_col, has_header, cells if has_header else None)


class _LabelsAreStrings(Exception):
    """A label that is not a number, after numeric ones: the file is read again as strings."""


class _Codes:
    """Distinct strings to integer codes in order of appearance (labels, or a text column)."""

    def __init__(self, max_chars: int, max_distinct: int | None, allow_empty: bool) -> None:
        self.max_chars = max_chars
        self.max_distinct = max_distinct
        # An empty label is refused; an empty cell of a text column is a category of its own.
        self.allow_empty = allow_empty
        self.codes: dict[str, int] = {}

    def __call__(self, field: str) -> float:
        value = field.strip()
        code = self.codes.get(value)
        if code is None:
            if len(value) > self.max_chars or not (value or self.allow_empty):
                raise ValueError("value length")
            if self.max_distinct is not None and len(self.codes) >= self.max_distinct:
                raise ValueError("too many distinct values")
            code = self.codes[value] = len(self.codes)
        return float(code)

    def decode(self, codes: np.ndarray) -> np.ndarray:
        names = np.asarray(sorted(self.codes, key=self.codes.__getitem__) or [""], dtype=str)
        return names[codes.astype(np.intp)]


class _CsvBlocks:
    """Accumulates CSR rows and labels from CSV blocks, enforcing the layout and label limits.

    A block of numbers only is read by ``np.loadtxt`` (text columns through converters); a
    block it refuses, with empty numeric cells (missing values) or a bad line, is read line by
    line, which also names the line that is wrong.
    """

    def __init__(self, layout: _CsvLayout, string_labels: bool, options: ParseOptions, out: _Rows) -> None:
        self.layout = layout
        self.string_labels = string_labels
        self.options = options
        self.labels = _Codes(options.max_label_chars, MAX_CLASSES, allow_empty=False)
        self.text = {c: _Codes(options.max_label_chars, None, allow_empty=True) for c in layout.text_cols}
        self.n_missing = 0
        self.out = out

    def _converters(self) -> dict[int | str, Callable[[str], float]]:
        conv: dict[int | str, Callable[[str], float]] = {c: codes for c, codes in self.text.items()}
        if self.string_labels:
            conv[self.layout.label_col] = self.labels
        return conv

    def add(self, first_line: int, block: bytes) -> None:
        lay = self.layout
        try:
            text = block.decode("utf-8")
            table = np.loadtxt(
                io.StringIO(text),
                delimiter=lay.delimiter,
                dtype=np.float64,
                ndmin=2,
                quotechar='"',
                comments=None,
                converters=self._converters() or None,
            )
            if table.size and table.shape[1] != lay.n_cols:
                raise ValueError("column count")
        except (ValueError, UnicodeDecodeError):
            table = self._read_lines(first_line, block)
        text_cols = list(lay.text_cols)
        # Codes never change once given, so a block's values decode to their final strings.
        values = np.column_stack([self.text[c].decode(table[:, c]) for c in text_cols]) if text_cols else None
        table[:, text_cols] = 0.0
        X = sp.csr_matrix(np.delete(table, lay.label_col, axis=1))
        y = table[:, lay.label_col]
        problem = _first_nonfinite_line(
            X, None if self.string_labels else y, block, first_line, comments=False, missing=True
        )
        if problem:
            raise ParseError(problem)
        self.n_missing += int(np.isnan(X.data).sum())
        self.out.add(X, self.labels.decode(y) if self.string_labels else y, values)

    def _read_lines(self, first_line: int, block: bytes) -> np.ndarray:
        """The block line by line: empty numeric cells are missing (NaN); the first line that
        cannot be read raises ParseError naming it (or _LabelsAreStrings)."""
        rows = []
        for offset, raw in enumerate(block.split(b"\n")):
            line_no = first_line + offset
            text = _decode(raw, line_no)
            if text.strip():
                rows.append(self._read_line(_split_row(text, self.layout.delimiter, line_no), line_no))
        return np.asarray(rows, dtype=np.float64).reshape(len(rows), self.layout.n_cols)

    def _read_line(self, cells: list[str], line_no: int) -> list[float]:
        lay = self.layout
        if len(cells) != lay.n_cols:
            raise ParseError(f"line {line_no} has {len(cells)} fields; the first row has {lay.n_cols}")
        label = cells[lay.label_col].strip()
        problem = self._label_problem(label, line_no)
        if problem is not None:
            raise problem
        row = []
        for col, raw_cell in enumerate(cells):
            cell = raw_cell.strip()
            if col == lay.label_col:
                row.append(self.labels(cell) if self.string_labels else float(cell))
            elif col in self.text:
                if len(cell) > self.options.max_label_chars:
                    raise ParseError(
                        f"line {line_no}, column {col + 1}: the text has {len(cell)} "
                        f"characters; the limit is {self.options.max_label_chars} "
                        "(PGS_MAX_LABEL_CHARS)"
                    )
                row.append(self.text[col](cell))
            elif not cell:
                row.append(math.nan)  # a missing value: imputed by a job's preprocessing
            elif _is_number(cell):
                row.append(float(cell))
            else:
                raise ParseError(
                    f"line {line_no}, column {col + 1}: {cell[:40]!r} is not a "
                    "number (the column's first row is a number, so the column is "
                    "numeric)"
                )
        return row

    def _label_problem(self, label: str, line_no: int) -> Exception | None:
        if not label:
            return ParseError(f"line {line_no}: the label is empty")
        if not self.string_labels:
            return None if _is_number(label) else _LabelsAreStrings()
        if len(label) > self.options.max_label_chars:
            return ParseError(
                f"line {line_no}: the label has {len(label)} characters; the "
                f"limit is {self.options.max_label_chars} (PGS_MAX_LABEL_CHARS)"
            )
        if label not in self.labels.codes and len(self.labels.codes) >= MAX_CLASSES:
            return ParseError(f"line {line_no}: more than {MAX_CLASSES} distinct labels")
        return None

    def columns(self) -> CsvColumns:
        lay = self.layout
        feature_pos = {c: k for k, c in enumerate(lay.feature_cols)}
        return CsvColumns(
            feature_names=None if lay.names is None else [lay.names[c] for c in lay.feature_cols],
            label_name=None if lay.names is None else lay.names[lay.label_col],
            text_columns=[feature_pos[c] for c in lay.text_cols],
            n_missing=self.n_missing,
        )


def _first_row(fh: IO[bytes]) -> tuple[int, bytes]:
    """The first non-blank line, read whole however long it is, and its line number."""
    line_no, row = 1, fh.readline()
    while row and not row.strip():
        line_no, row = line_no + 1, fh.readline()
    return line_no, row


def _cells(row: bytes, layout: _CsvLayout, line_no: int) -> list[str] | None:
    cells = [c.strip() for c in _split_row(_decode(row, line_no), layout.delimiter, line_no)]
    return cells if len(cells) == layout.n_cols else None


def _text_columns(cells: list[str] | None, layout: _CsvLayout) -> tuple[int, ...]:
    """The feature columns whose first data row holds text (neither a number nor empty)."""
    if cells is None:
        return ()
    return tuple(c for c in layout.feature_cols if cells[c] and not _is_number(cells[c]))


def _read_csv(
    open_stream: Callable[[], io.BufferedReader],
    options: ParseOptions,
    string_labels: bool | None,
    out: _Rows,
) -> tuple[int, LabelKind, CsvColumns]:
    with open_stream() as fh:
        line_no, first = _first_row(fh)
        layout = _csv_layout(_decode(first, line_no).rstrip("\r\n"), line_no, options)
        data_line = line_no + 1 if layout.has_header else line_no
        row = fh.readline() if layout.has_header else first
        cells = _cells(row, layout, data_line) if row.strip() else None
        layout = dataclasses.replace(layout, text_cols=_text_columns(cells, layout))
        if string_labels is None:
            # Decided by the first data row; a later label that is not a number reads the file
            # again with string labels (_LabelsAreStrings).
            string_labels = cells is not None and not _is_number(cells[layout.label_col])
        blocks = _CsvBlocks(layout, string_labels, options, out)
        if row.strip():
            blocks.add(data_line, row)
        for first_line, block in _blocks(fh, data_line + 1):
            blocks.add(first_line, block)
    return layout.n_cols - 1, "string" if string_labels else "numeric", blocks.columns()


def _parse_csv(
    open_stream: Callable[[], io.BufferedReader], options: ParseOptions, out: _Rows
) -> tuple[int, LabelKind, CsvColumns]:
    """(width, label kind, columns) of the rows given to ``out``."""
    try:
        return _read_csv(open_stream, options, None, out)
    except _LabelsAreStrings:
        out.restart()
        return _read_csv(open_stream, options, True, out)


# -- labels -----------------------------------------------------------------------------------


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
