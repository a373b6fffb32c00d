"""Parquet and Arrow IPC (Feather) files, a row group or record batch at a time: numeric and
boolean columns are features, string and dictionary columns text columns, nulls missing
values, the label column found by name. A column of another type (nested, binary, dates and
times) is refused by name: its cells have no meaning as a feature the service could guess."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

from app.services.datasets.parse_base import (
    CountedRows,
    CsvColumns,
    LabelKind,
    ParseError,
    ParseOptions,
)
from app.services.datasets.table_rows import TableLayout, TableRows, check_columns, label_index

PARQUET_MAGIC = b"PAR1"
ARROW_FILE_MAGIC = b"ARROW1"
# An Arrow IPC stream starts with a message's continuation marker.
ARROW_STREAM_MAGIC = b"\xff\xff\xff\xff"
# Rows per batch read from a Parquet row group: bounded memory however big the row groups are.
BATCH_ROWS = 64 * 1024


def _is_numeric(t: pa.DataType) -> bool:
    return (
        pa.types.is_integer(t)
        or pa.types.is_floating(t)
        or pa.types.is_boolean(t)
        or pa.types.is_decimal(t)
        or pa.types.is_null(t)
    )


def _is_text(t: pa.DataType) -> bool:
    if pa.types.is_dictionary(t):
        return _is_text(t.value_type)
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


def _layout(schema: pa.Schema, options: ParseOptions) -> TableLayout:
    names = list(schema.names)
    check_columns(len(names), options)
    for col, f in enumerate(schema):
        if not (_is_numeric(f.type) or _is_text(f.type)):
            raise ParseError(
                f"column {col + 1} ({f.name!r}) holds {f.type}; numbers, booleans and strings "
                "are read (nested, binary, date and time columns are not)"
            )
    label_col = label_index(options, names, len(names))
    text_cols = tuple(c for c in range(len(names)) if c != label_col and _is_text(schema.field(c).type))
    string_labels = label_col is not None and _is_text(schema.field(label_col).type)
    return TableLayout(len(names), label_col, names, text_cols, string_labels)


@contextmanager
def _batches(path: Path, fmt: str) -> Iterator[tuple[pa.Schema, Iterator[pa.RecordBatch]]]:
    if fmt == "parquet":
        with pq.ParquetFile(path) as pf:
            yield pf.schema_arrow, pf.iter_batches(batch_size=BATCH_ROWS)
        return
    with pa.memory_map(str(path)) as source:
        if source.read(len(ARROW_FILE_MAGIC)) == ARROW_FILE_MAGIC:
            source.seek(0)
            reader = ipc.open_file(source)
            yield reader.schema, (reader.get_batch(i) for i in range(reader.num_record_batches))
        else:
            source.seek(0)
            with ipc.open_stream(source) as stream:
                yield stream.schema, iter(stream)


def parse_columnar(
    path: Path, fmt: str, options: ParseOptions, out: CountedRows
) -> tuple[int, LabelKind, CsvColumns]:
    """(width, label kind, columns) of the rows of a Parquet or Arrow IPC file given to ``out``."""
    what = "Parquet" if fmt == "parquet" else "Arrow IPC"
    try:
        with _batches(path, fmt) as (schema, batches):
            layout = _layout(schema, options)
            rows = TableRows(layout, options, out, lambda row: f"row {row + 1}")
            for batch in batches:
                rows.add_batch(batch)
    except pa.ArrowMemoryError:
        raise  # a 413 naming the memory budget, not the file's fault
    except (pa.ArrowException, OSError) as exc:
        raise ParseError(f"the file is not a valid {what} file: {exc}") from exc
    return layout.n_features, "string" if layout.string_labels else "numeric", layout.columns(rows.n_missing)
