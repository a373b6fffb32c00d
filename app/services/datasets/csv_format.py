"""CSV text, a block of lines at a time: the header, the label column, numeric and text columns."""

from __future__ import annotations

import csv
import dataclasses
import io
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

import numpy as np
import scipy.sparse as sp

from app.services.datasets.parse_base import (
    MAX_CLASSES,
    CountedRows,
    CsvColumns,
    LabelKind,
    ParseError,
    ParseOptions,
    check_width,
    first_nonfinite_line,
    line_blocks,
)


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
    check_width(n_cols - 1, options)
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

    def __init__(
        self, layout: _CsvLayout, string_labels: bool, options: ParseOptions, out: CountedRows
    ) -> None:
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
        problem = first_nonfinite_line(
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


UTF8_BOM = b"\xef\xbb\xbf"


def _first_row(fh: IO[bytes]) -> tuple[int, bytes]:
    """The first non-blank line, read whole however long it is, and its line number. A UTF-8
    byte order mark (Excel and Notepad write one) is not part of the first header name or cell."""
    line_no, row = 1, fh.readline().removeprefix(UTF8_BOM)
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
    out: CountedRows,
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
        for first_line, block in line_blocks(fh, data_line + 1):
            blocks.add(first_line, block)
    return layout.n_cols - 1, "string" if string_labels else "numeric", blocks.columns()


def parse_csv(
    open_stream: Callable[[], io.BufferedReader], options: ParseOptions, out: CountedRows
) -> tuple[int, LabelKind, CsvColumns]:
    """(width, label kind, columns) of the rows given to ``out``."""
    try:
        return _read_csv(open_stream, options, None, out)
    except _LabelsAreStrings:
        out.restart()
        return _read_csv(open_stream, options, True, out)
