"""Turn an uploaded svmlight or CSV file (optionally gzip, bzip2 or xz compressed), or a Parquet or
Arrow IPC file, into CSR features and labels.

The file is read as a stream of blocks of whole lines (about 4 MiB each); each block is parsed
(svmlight: a compiled parser with scikit-learn's ``load_svmlight_file``'s results, several blocks at
once in threads; CSV: NumPy's ``loadtxt``) into CSR rows that
go straight to a :class:`RowSink` (the shard writer, :mod:`app.services.datasets.shards`), so neither the
text nor the data is ever held whole: the parse's memory is a block and a shard, whatever the
file's size. Every way the input can be
wrong ends as :class:`ParseError` naming the line where it can (a 422), or :class:`TooLargeError`
naming the limit (a 413). The route runs this in a child process with memory and time limits
(:mod:`app.services.datasets.parse_process`). This module sniffs the
format and the compression and hands the stream to :mod:`.svmlight_format` or :mod:`.csv_format`
(Parquet and Arrow files, read by row group or record batch, to :mod:`.columnar_format`);
what they share is in :mod:`.parse_base`.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import IO, TypeVar, cast

from app.services.datasets.columnar_format import (
    ARROW_FILE_MAGIC,
    ARROW_STREAM_MAGIC,
    PARQUET_MAGIC,
    parse_columnar,
)
from app.services.datasets.csv_format import parse_csv
from app.services.datasets.parse_base import (
    BLOCK_BYTES,
    CountedRows,
    CsvColumns,
    Format,
    LabelKind,
    ParsedDataset,
    ParseError,
    ParseOptions,
    RowSink,
    TooLargeError,
    check_width,
    infer_task,
)
from app.services.datasets.svmlight_format import parse_svmlight

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
    b"\x93NUMPY": "a NumPy .npy file",
    b"%PDF": "a PDF document",
    b"\x89PNG": "a PNG image",
}
COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz")
SNIFF_BYTES = 64 * 1024
# Any gzip upload may inflate to this much, whatever its compression ratio (tiny files of
# repeated rows compress far better than real data sets, which stay under 25:1).
RATIO_FLOOR_BYTES = 16 * 1024 * 1024
T = TypeVar("T")


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
                "or compressed with gzip, bzip2 or xz, or a Parquet or Arrow file"
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


# File name endings that say the format (after a compression suffix).
FORMAT_SUFFIXES: dict[str, Format] = {
    ".csv": "csv",
    ".tsv": "csv",
    ".svm": "svmlight",
    ".svmlight": "svmlight",
    ".libsvm": "svmlight",
    ".parquet": "parquet",
    ".arrow": "arrow",
    ".arrows": "arrow",
    ".feather": "arrow",
    ".ipc": "arrow",
}


def _format_by_name_or_magic(head: bytes, filename: str) -> Format | None:
    # Binary formats by their magic bytes first: their content is what they are.
    if head.startswith(PARQUET_MAGIC):
        return "parquet"
    if head.startswith((ARROW_FILE_MAGIC, ARROW_STREAM_MAGIC)):
        return "arrow"
    name = filename.lower()
    for suffix in COMPRESSED_SUFFIXES:
        name = name.removesuffix(suffix)
    return next((fmt for suffix, fmt in FORMAT_SUFFIXES.items() if name.endswith(suffix)), None)


def _sniff_format(head: bytes, filename: str, codec: str | None) -> Format:
    known = _format_by_name_or_magic(head, filename)
    if known:
        return known
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
    out = CountedRows(sink)
    label_kind: LabelKind = "numeric"
    columns: CsvColumns | None = None
    index_base = 1
    if fmt == "svmlight":
        width, index_base = _decompression_guard(lambda: parse_svmlight(open_stream, options, out), codec)
    elif fmt == "csv":
        width, label_kind, columns = _decompression_guard(lambda: parse_csv(open_stream, options, out), codec)
    elif codec:
        # Parquet and Arrow compress their own columns; they are read from the file itself.
        raise ParseError(f"a {codec}-compressed {fmt} file; upload the {fmt} file itself")
    else:
        width, label_kind, columns = parse_columnar(path, fmt, options, out)
    if out.rows == 0:
        raise ParseError("the file has no data rows")
    if width == 0:
        raise ParseError("the file has no features (every row is empty)")
    check_width(max(width, options.n_features or 0), options)
    # Rows without labels keep the kind of their stored zeros; the data set says it has none.
    task, classes = (
        infer_task(out.labels, label_kind, options.task) if options.labelled else ("regression", None)
    )
    return ParsedDataset(
        _declared_width(width, options.n_features, index_base),
        fmt,
        codec is not None,
        label_kind,
        task,
        classes,
        index_base,
        columns,
        options.labelled,
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
