"""Typed columns to the rows a sink takes: numeric columns as features (missing cells are NaN,
imputed by a job's preprocessing), text columns as values beside them (one-hot encoded by a
job's preprocessing), the label column as labels. What CSV, Parquet and Arrow IPC files share
once their cells are typed (as Arrow record batches, or as arrays for very wide CSV rows)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import scipy.sparse as sp

from app.services.datasets.parse_base import (
    MAX_CLASSES,
    CountedRows,
    CsvColumns,
    ParseError,
    ParseOptions,
    check_width,
    no_labels,
)


def label_index(options: ParseOptions, names: list[str] | None, n_cols: int) -> int | None:
    """The label column's index: a column number (negative from the end) or a name, by default
    the last column; None for rows without labels (``labelled=false``)."""
    label_column = options.label_column
    if not options.labelled:
        return None
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


def check_columns(n_cols: int, options: ParseOptions) -> None:
    """A table needs a feature column, and a label column beside it unless it has no labels."""
    if n_cols < 1 + options.labelled:
        raise ParseError(
            "a data set needs at least one feature column and a label column"
            if options.labelled
            else "a data set needs at least one feature column"
        )
    check_width(n_cols - options.labelled, options)


@dataclass(frozen=True)
class TableLayout:
    n_cols: int
    # None: the rows have no labels (every column is a feature).
    label_col: int | None
    # The columns' names (a CSV without a header has none).
    names: list[str] | None = None
    # File columns of text features.
    text_cols: tuple[int, ...] = ()
    string_labels: bool = False

    @property
    def feature_cols(self) -> list[int]:
        return [c for c in range(self.n_cols) if c != self.label_col]

    def column(self, col: int) -> str:
        """A column as an error names it: its 1-based number, and its name when it has one."""
        return f"column {col + 1}" + (f" ({self.names[col]!r})" if self.names else "")

    @property
    def n_features(self) -> int:
        return len(self.feature_cols)

    def columns(self, n_missing: int) -> CsvColumns:
        feature_pos = {c: k for k, c in enumerate(self.feature_cols)}
        return CsvColumns(
            feature_names=None if self.names is None else [self.names[c] for c in self.feature_cols],
            label_name=None if self.names is None or self.label_col is None else self.names[self.label_col],
            text_columns=[feature_pos[c] for c in self.text_cols],
            n_missing=n_missing,
        )


def _first(mask: np.ndarray) -> int | None:
    """The index of the first true value of a boolean mask, None without one."""
    hits = np.flatnonzero(mask)
    return int(hits[0]) if hits.size else None


def _strings(column: pa.Array) -> np.ndarray:
    """A text column's cells as strings without surrounding blanks; a missing one is the empty
    string (the category a job's one-hot encoding gives missing text)."""
    if pa.types.is_dictionary(column.type):
        column = column.dictionary_decode()
    text = pc.utf8_trim_whitespace(pc.fill_null(column.cast(pa.large_string()), ""))
    return np.asarray(text.to_numpy(zero_copy_only=False), dtype=str)


def _numbers(column: pa.Array) -> np.ndarray:
    """A numeric column as float64, a missing cell NaN."""
    return np.asarray(column.cast(pa.float64(), safe=False).to_numpy(zero_copy_only=False), dtype=np.float64)


def _csr(dense: np.ndarray) -> sp.csr_matrix:
    """The rows as CSR, zeros left out (NaN kept: a missing value). Built here rather than by
    ``sp.csr_matrix(dense)``, whose way through COO costs as much as Arrow's parse of the
    text; a table without zeros, the usual CSV, needs no search at all."""
    n, k = dense.shape
    present = dense != 0
    if present.all():
        indices = np.tile(np.arange(k, dtype=np.int32), n)
        return sp.csr_matrix((dense.ravel(), indices, np.arange(0, n * k + 1, k)), shape=(n, k))
    flat = np.flatnonzero(present)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(present.sum(axis=1), out=indptr[1:])
    return sp.csr_matrix((dense.ravel()[flat], (flat % k).astype(np.int32), indptr), shape=(n, k))


class TableRows:
    """Turns typed columns into rows for ``out``, enforcing the label and text limits. An error
    is a ParseError at ``place(row)`` (the row's 0-based number in the whole file): its line in
    a CSV file, its row in a Parquet file."""

    def __init__(
        self, layout: TableLayout, options: ParseOptions, out: CountedRows, place: Callable[[int], str]
    ) -> None:
        self.layout = layout
        self.options = options
        self.out = out
        self.place = place
        self.rows = 0
        self.n_missing = 0
        self.labels: set[str] = set()

    def _fail(self, row: int, message: str, col: int | None = None) -> ParseError:
        where = self.place(self.rows + row)
        if col is not None:
            where += ", " + self.layout.column(col)
        return ParseError(f"{where}: {message}")

    def add_batch(self, batch: pa.RecordBatch) -> None:
        """A record batch of the file's columns (text columns of strings, the others numbers)."""
        lay = self.layout
        if batch.num_rows == 0:
            return
        dense = np.zeros((batch.num_rows, lay.n_features))
        values = []
        for k, col in enumerate(lay.feature_cols):
            if col in lay.text_cols:
                values.append(_strings(batch.column(col)))
            else:
                dense[:, k] = _numbers(batch.column(col))
        if lay.label_col is None:
            y = no_labels(batch.num_rows)
        else:
            label = batch.column(lay.label_col)
            y = _strings(label) if lay.string_labels else _numbers(label)
        self.add(dense, np.column_stack(values) if values else None, y)

    def add(self, dense: np.ndarray, text: np.ndarray | None, y: np.ndarray) -> None:
        """Rows: the features (zeros in text columns, NaN where missing), the text columns'
        values (rows x text columns) and the labels (strings, "" where missing; or numbers)."""
        lay = self.layout
        bad = np.isinf(dense)
        if bad.any():
            row, k = (int(i) for i in np.argwhere(bad)[0])
            raise self._fail(row, "the value is infinite", lay.feature_cols[k])
        if text is not None:
            self._check_text(text)
        self._check_labels(y)
        self.n_missing += int(np.isnan(dense).sum())
        self.out.add(_csr(dense), y, text)
        self.rows += len(y)

    def _check_text(self, text: np.ndarray) -> None:
        limit = self.options.max_label_chars
        lengths = np.char.str_len(text)
        if (lengths > limit).any():
            row, k = (int(i) for i in np.argwhere(lengths > limit)[0])
            raise self._fail(
                row,
                f"the text has {lengths[row, k]} characters; the limit is {limit} (PGS_MAX_LABEL_CHARS)",
                self.layout.text_cols[k],
            )

    def _check_labels(self, y: np.ndarray) -> None:
        if not self.layout.string_labels:
            row = _first(~np.isfinite(y))
            if row is not None:
                raise self._fail(row, "the label is missing, NaN or infinite")
            return
        lengths = np.char.str_len(y)
        row = _first(lengths == 0)
        if row is not None:
            raise self._fail(row, "the label is empty or missing")
        limit = self.options.max_label_chars
        row = _first(lengths > limit)
        if row is not None:
            raise self._fail(
                row, f"the label has {lengths[row]} characters; the limit is {limit} (PGS_MAX_LABEL_CHARS)"
            )
        uniq, first = np.unique(y, return_index=True)
        new = sorted((int(i), str(v)) for v, i in zip(uniq, first, strict=True) if str(v) not in self.labels)
        room = MAX_CLASSES - len(self.labels)
        if len(new) > room:
            raise self._fail(new[room][0], f"more than {MAX_CLASSES} distinct labels")
        self.labels.update(v for _, v in new)
