"""What a prediction request carries: any input as bodies of one content type, in batches.

- a pandas DataFrame: ``text/csv`` with its header (the service matches columns by name);
- a CSV file: ``text/csv`` as it is, header included; an svmlight file: ``text/plain`` lines;
- anything else (NumPy, SciPy sparse, lists of rows or of dicts): JSON ``{"instances": [...]}``.

Files are parsed by the service, never here: the client only cuts them into batches at record
boundaries (each CSV batch repeats the header), so a CSV's columns may come in any order, hold
text, labels and ``NA`` cells, and predict exactly as the service reads them.
"""

from __future__ import annotations

import gzip
import io
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

from pgs_client import data, frames

FORMATS = ("auto", "csv", "svmlight")
_COLUMNAR = (".parquet", ".pq", ".arrow", ".feather", ".ipc")
_CSV = (".csv",)
_SVMLIGHT = (".svm", ".svmlight", ".libsvm")
NOT_FOR_PREDICT = (
    "{name}: Parquet and Arrow files cannot be sent for prediction (the service's predict "
    "reads CSV, svmlight and JSON rows); predict it in a batch (models.predict_batch, or "
    "pgs batches create MODEL FILE), or read it into a DataFrame"
)


@dataclass(frozen=True)
class Bodies:
    """Request bodies of ``content_type``: ``batches`` of encoded rows, each batch made one
    body by ``join`` (so that a batch the service finds too large can be split in two)."""

    content_type: str
    batches: Iterator[list[bytes]]
    join: Callable[[list[bytes]], bytes]


def for_input(X: Any, max_rows: int, max_bytes: int) -> Bodies:
    """The bodies of an in-memory input: a DataFrame as CSV, the rest as JSON rows."""
    if frames.is_frame(X):
        lines = (line for chunk in frames.csv_chunks(X) for line in chunk.encode().splitlines(keepends=True))
        return _csv(lines, max_rows, max_bytes)
    return Bodies("application/json", data.batches(X, max_rows, max_bytes), data.predict_body)


def for_file(
    source: str | os.PathLike[str] | IO[bytes], format: str, max_rows: int, max_bytes: int
) -> Bodies:
    """The bodies of a file (a path, or a binary stream such as stdin; plain or gzip), as it is:
    CSV (by a ``.csv`` name, or a first line that is not svmlight) or svmlight lines."""
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
    name = str(source if isinstance(source, (str, os.PathLike)) else getattr(source, "name", "<stream>"))
    stream = _opened(source)
    first = stream.readline()
    if format == "auto":
        format = _format_of(name, first)
    lines = _chained(first, stream)
    if format == "csv":
        return _csv(lines, max_rows, max_bytes)
    encoded = (line.strip() for line in lines if line.strip())
    return Bodies("text/plain", data.grouped(encoded, max_rows, max_bytes), b"\n".join)


def _opened(source: str | os.PathLike[str] | IO[bytes]) -> IO[bytes]:
    """A binary stream of the file's text: a gzip file (by its magic bytes) decompressed."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        with path.open("rb") as probe:
            magic = probe.read(4)
        if path.suffix.lower() in _COLUMNAR or magic == b"PAR1":
            raise ValueError(NOT_FOR_PREDICT.format(name=path.name))
        return cast(IO[bytes], gzip.open(path, "rb") if magic[:2] == b"\x1f\x8b" else path.open("rb"))
    # A stream without peek (a pipe, a socket file) is wrapped so its magic bytes can be read
    # without consuming them.
    buffered: Any = source if hasattr(source, "peek") else io.BufferedReader(cast(Any, source))
    if buffered.peek(2)[:2] == b"\x1f\x8b":
        return cast(IO[bytes], gzip.GzipFile(fileobj=buffered))
    return cast(IO[bytes], buffered)


def _format_of(name: str, first_line: bytes) -> str:
    """csv or svmlight, by the file's extension, else by its first line: svmlight has
    ``index:value`` tokens and no commas."""
    stem = name.lower().removesuffix(".gz")
    if stem.endswith(_CSV):
        return "csv"
    if stem.endswith(_SVMLIGHT):
        return "svmlight"
    if stem.endswith(_COLUMNAR):
        raise ValueError(NOT_FOR_PREDICT.format(name=Path(name).name))
    svmlight = b"," not in first_line and any(b":" in token for token in first_line.split())
    return "svmlight" if svmlight else "csv"


def _chained(first: bytes, rest: IO[bytes]) -> Iterator[bytes]:
    """The first line, then the rest of the stream (closed once read)."""
    with rest:
        yield first
        yield from rest


def _csv(lines: Iterable[bytes], max_rows: int, max_bytes: int) -> Bodies:
    """CSV lines as bodies that each start with the header (the first record)."""
    records = csv_records(lines)
    header = next(records, None)
    if header is None:
        raise ValueError("the CSV is empty: it needs a header and at least one row")

    def join(rows: list[bytes]) -> bytes:
        return header + b"".join(rows)

    return Bodies("text/csv", data.grouped(records, max_rows, max_bytes - len(header)), join)


def csv_records(lines: Iterable[bytes]) -> Iterator[bytes]:
    """Lines joined into CSV records, each ending in a newline; blank ones left out. A quoted
    cell may hold line breaks: a record ends where its double quotes are balanced."""
    pending = b""
    for line in lines:
        pending += line
        if pending.count(b'"') % 2:
            continue
        if pending.strip():
            yield pending if pending.endswith(b"\n") else pending + b"\n"
        pending = b""
    if pending.strip():
        yield pending + b"\n"
