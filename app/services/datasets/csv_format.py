"""CSV text through Arrow's streaming reader: the header, the label column, numeric and text
columns, missing values.

The first rows are read here (the delimiter, whether there is a header, which columns hold
text); the rest goes to ``pyarrow.csv.open_csv`` with every column's type fixed by the first
data row, so each block is typed alike, the way the file's first row says. When Arrow refuses a
block, the block's lines are read again here one by one to name the first line that is wrong,
its column and why (the error path only: it costs nothing on a good file).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from itertools import islice
from typing import IO

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from app.services.datasets.parse_base import (
    BLOCK_BYTES,
    CountedRows,
    CsvColumns,
    LabelKind,
    ParseError,
    ParseOptions,
    no_labels,
)
from app.services.datasets.table_rows import TableLayout, TableRows, check_columns, label_index

UTF8_BOM = b"\xef\xbb\xbf"
# Arrow's reader holds about 10 KB a column whatever the rows: a wider file (a few rows of very
# many columns) is read a row at a time here instead, in the memory of its rows.
WIDE_COLUMNS = 2048
# A column missing in the first data row is typed by its first value in at most this many rows.
TYPING_ROWS = 1000


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
    text = text.rstrip("\r\n")
    if '"' not in text:
        return [c.strip() for c in text.split(delimiter)]
    try:
        return [c.strip() for c in next(csv.reader([text], delimiter=delimiter), [])]
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


@dataclass(frozen=True)
class _CsvFile:
    delimiter: str
    has_header: bool
    data_line: int  # the line of the first data row
    table: TableLayout


def _csv_layout(first: str, line_no: int, options: ParseOptions) -> _CsvFile:
    delimiter = _csv_delimiter(first)
    cells = _split_row(first, delimiter, line_no)
    n_cols = len(cells)
    check_columns(n_cols, options)
    if options.header == "auto":
        if options.label_column and not _is_int(options.label_column):
            has_header = True  # a label column given by name needs a header row
        else:
            # Without a header every feature field of the first row is a number.
            guess = label_index(options, None, n_cols)
            has_header = not all(_is_number(c) for i, c in enumerate(cells) if i != guess)
    else:
        has_header = options.header == "true"
    names = cells if has_header else None
    label_col = label_index(options, names, n_cols)
    table = TableLayout(n_cols, label_col, names)
    return _CsvFile(delimiter, has_header, line_no + 1 if has_header else line_no, table)


def _is_text(cell: str, options: ParseOptions) -> bool:
    """A cell of a text column: neither a number nor a missing value."""
    return bool(cell) and cell not in options.na_values and not _is_number(cell)


def _first_row(fh: IO[bytes]) -> tuple[int, bytes]:
    """The first non-blank line, read whole however long it is, and its line number. A UTF-8
    byte order mark (Excel and Notepad write one) is not part of the first header name or cell."""
    line_no, row = 1, fh.readline().removeprefix(UTF8_BOM)
    while row and not row.strip():
        line_no, row = line_no + 1, fh.readline()
    return line_no, row


def _read_layout(fh: IO[bytes], options: ParseOptions, string_labels: bool | None) -> tuple[_CsvFile, bytes]:
    """The file's layout, from its first rows, and the bytes read past the header (the first
    data row), which the rows start with."""
    line_no, first = _first_row(fh)
    layout = _csv_layout(_decode(first, line_no), line_no, options)
    row = fh.readline() if layout.has_header else first
    cells = _split_row(_decode(row, layout.data_line), layout.delimiter, layout.data_line)
    table = layout.table
    if not row.strip() or len(cells) != table.n_cols:
        cells = []  # a ragged first row is named by the parse
    read = [row]
    text_cols = _text_columns(fh, layout, cells, options, read)
    if string_labels is None:
        # A later label that is not a number reads the file again with string labels.
        string_labels = table.label_col is not None and bool(cells) and not _is_number(cells[table.label_col])
    table = replace(table, text_cols=text_cols, string_labels=string_labels)
    return replace(layout, table=table), b"".join(read)


def _text_columns(
    fh: IO[bytes], layout: _CsvFile, cells: list[str], options: ParseOptions, read: list[bytes]
) -> tuple[int, ...]:
    """The text columns: those whose first value (the first cell that is not missing) is text.
    A column missing in the first data row is typed by the rows after it, up to TYPING_ROWS
    (appended to ``read``): R and pandas exports often start with an NA."""
    if not cells:
        return ()
    table = layout.table
    first_values = {c: cells[c] for c in table.feature_cols if not _is_missing(cells[c], options)}
    line_no = layout.data_line
    while len(first_values) < len(table.feature_cols) and len(read) < TYPING_ROWS:
        line = fh.readline()
        if not line:
            break
        read.append(line)
        line_no += 1
        row = _split_row(_decode(line, line_no), layout.delimiter, line_no) if line.strip() else []
        if len(row) != table.n_cols:
            continue  # blank, or ragged: named by the parse
        for c in table.feature_cols:
            if c not in first_values and not _is_missing(row[c], options):
                first_values[c] = row[c]
    return tuple(c for c in table.feature_cols if _is_text(first_values.get(c, ""), options))


def _is_missing(cell: str, options: ParseOptions) -> bool:
    return not cell or cell in options.na_values


class _Prefixed(io.RawIOBase):
    """Bytes already read, then the rest of the stream."""

    def __init__(self, head: bytes, rest: IO[bytes]) -> None:
        self._head = head
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n], self._head = self._head[:n], self._head[n:]
            return n
        data = self._rest.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def _arrow_reader(stream: io.RawIOBase, layout: _CsvFile, options: ParseOptions) -> pacsv.CSVStreamingReader:
    table = layout.table
    names = [f"c{c}" for c in range(table.n_cols)]
    text = {*table.text_cols, *([table.label_col] if table.string_labels else [])}
    return pacsv.open_csv(
        stream,
        # One thread: the parse runs in a child process per upload, beside the API and jobs.
        read_options=pacsv.ReadOptions(column_names=names, block_size=BLOCK_BYTES, use_threads=False),
        parse_options=pacsv.ParseOptions(delimiter=layout.delimiter, quote_char='"', ignore_empty_lines=True),
        convert_options=pacsv.ConvertOptions(
            column_types={n: pa.string() if c in text else pa.float64() for c, n in enumerate(names)},
            null_values=["", *options.na_values],
            strings_can_be_null=True,
            quoted_strings_can_be_null=True,
        ),
    )


class _LabelsAreStrings(Exception):
    """A label that is not a number, after numeric ones: the file is read again as strings."""


class _Lines:
    """The file's data rows again, line by line, to say where a row Arrow refused is."""

    def __init__(self, open_stream: Callable[[], io.BufferedReader], layout: _CsvFile) -> None:
        self.open_stream = open_stream
        self.layout = layout
        self.text_cols = set(layout.table.text_cols)

    def rows(self) -> Iterator[tuple[int, bytes]]:
        """(line number, line) of each data row: Arrow skips empty lines, not blank ones."""
        with self.open_stream() as fh:
            for line_no, line in enumerate(fh, start=1):
                if line_no >= self.layout.data_line and line.rstrip(b"\r\n"):
                    yield line_no, line.removeprefix(UTF8_BOM) if line_no == 1 else line

    def line_of(self, row: int) -> str:
        found = next(islice(self.rows(), row, None), None)
        return f"line {found[0]}" if found else f"data row {row + 1}"

    def first_bad(self, from_row: int, options: ParseOptions) -> ParseError | None:
        """The first wrong line from data row ``from_row`` on, looked for in two blocks' worth of
        lines (Arrow refused one of them)."""
        seen = 0
        for line_no, line in islice(self.rows(), from_row, None):
            cells = _split_row(_decode(line, line_no), self.layout.delimiter, line_no)
            problem = self.problem(cells, line_no, options)
            if problem:
                return problem
            seen += len(line)
            if seen > 2 * BLOCK_BYTES:
                break
        return None

    def problem(self, cells: list[str], line_no: int, options: ParseOptions) -> ParseError | None:
        """What is wrong with a row's cells, if anything Arrow would refuse."""
        table = self.layout.table
        if len(cells) != table.n_cols:
            return ParseError(f"line {line_no} has {len(cells)} fields; the first row has {table.n_cols}")
        for col, cell in enumerate(cells):
            if col in self.text_cols or not cell or cell in options.na_values or _is_number(cell):
                continue
            if col == table.label_col:
                if table.string_labels:
                    continue
                raise _LabelsAreStrings
            return ParseError(
                f"line {line_no}, {table.column(col)}: {cell[:40]!r} is not a number (the "
                "column's first value is a number, so the column is numeric)"
            )
        return None


def _wide_rows(lines: _Lines, options: ParseOptions, rows: TableRows) -> None:
    """The rows of a file too wide for Arrow's reader, about a block's bytes at a time."""
    table = lines.layout.table
    text_cols = set(table.text_cols)
    numeric = [c for c in table.feature_cols if c not in text_cols]
    # Where the numeric columns go among the features (the label column is not one).
    position = {c: k for k, c in enumerate(table.feature_cols)}
    numeric_pos = [position[c] for c in numeric]
    missing = {"", *options.na_values}
    dense: list[np.ndarray] = []
    text: list[list[str]] = []
    labels: list[str] = []
    size = 0

    def flush() -> None:
        y = np.asarray(labels, dtype=str)
        if table.label_col is None:
            y = no_labels(len(dense))
        elif not table.string_labels:
            y = np.asarray([float(v) if v else math.nan for v in labels])
        features = np.zeros((len(dense), table.n_features))
        features[:, numeric_pos] = dense
        rows.add(features, np.asarray(text, dtype=str) if table.text_cols else None, y)
        for pending in (dense, text, labels):
            pending.clear()

    for line_no, line in lines.rows():
        cells = _split_row(_decode(line, line_no), lines.layout.delimiter, line_no)
        problem = lines.problem(cells, line_no, options)
        if problem:
            raise problem
        known = ["" if v in missing else v for v in cells]
        dense.append(np.asarray([known[c] or "nan" for c in numeric], dtype=np.float64))
        text.append([known[c] for c in table.text_cols])
        labels.append("" if table.label_col is None else known[table.label_col])
        size += len(line)
        if size > BLOCK_BYTES:
            flush()
            size = 0
    if labels:
        flush()


def _read_csv(
    open_stream: Callable[[], io.BufferedReader],
    options: ParseOptions,
    string_labels: bool | None,
    out: CountedRows,
) -> tuple[int, LabelKind, CsvColumns]:
    with open_stream() as fh:
        layout, head = _read_layout(fh, options, string_labels)
        lines = _Lines(open_stream, layout)
        rows = TableRows(layout.table, options, out, lines.line_of)
        if layout.table.n_cols > WIDE_COLUMNS:
            _wide_rows(lines, options, rows)
            return _result(layout, rows)
        try:
            for batch in _arrow_reader(_Prefixed(head, fh), layout, options):
                rows.add_batch(batch)
        except pa.ArrowInvalid as exc:
            problem = lines.first_bad(rows.rows, options)
            raise problem or ParseError(f"after line {lines.line_of(rows.rows)}: {exc}") from exc
    return _result(layout, rows)


def _result(layout: _CsvFile, rows: TableRows) -> tuple[int, LabelKind, CsvColumns]:
    table = layout.table
    return table.n_features, "string" if table.string_labels else "numeric", table.columns(rows.n_missing)


def parse_csv(
    open_stream: Callable[[], io.BufferedReader], options: ParseOptions, out: CountedRows
) -> tuple[int, LabelKind, CsvColumns]:
    """(width, label kind, columns) of the rows given to ``out``."""
    try:
        return _read_csv(open_stream, options, None, out)
    except _LabelsAreStrings:
        out.restart()
        return _read_csv(open_stream, options, True, out)
