"""pandas DataFrames as the CSV the service reads: a header of the column names, then the rows.

The service types the columns itself (numbers, text, missing cells), as it does for a CSV file,
so a DataFrame and the same data written to a file by R or pandas become the same data set and
predict the same classes. Cells are written so that it reads them back as they were: a missing
value (NaN, None, ``pd.NA``, NaT) as an empty cell, booleans as 1 and 0 (features, as a Parquet
upload's boolean columns are), floats in full precision.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

# Rows written per ``to_csv`` call: big enough that pandas' C writer does the work, small
# enough that a frame of millions of rows is never one string in memory.
CHUNK_ROWS = 10_000


def is_frame(X: Any) -> bool:
    return type(X).__module__.startswith("pandas") and hasattr(X, "to_csv") and hasattr(X, "columns")


def _as_written(frame: Any) -> Any:
    """The frame with its boolean columns as nullable integers (True -> 1), unchanged otherwise."""
    booleans = [c for c, dtype in frame.dtypes.items() if str(dtype) in ("bool", "boolean")]
    if not booleans:
        return frame
    return frame.astype({c: "Int8" for c in booleans})


def csv_chunks(frame: Any, *, header: bool = True) -> Iterator[str]:
    """The frame as CSV text: the header line (``header``) and the rows, a chunk at a time."""
    written = _as_written(frame)
    if header:
        yield written.iloc[:0].to_csv(index=False, lineterminator="\n")
    for start in range(0, len(written), CHUNK_ROWS):
        yield written.iloc[start : start + CHUNK_ROWS].to_csv(index=False, header=False, lineterminator="\n")


def with_label(X: Any, y: Any) -> tuple[Any, str]:
    """``X`` with the labels ``y`` as its last column, and that column's name (``y``'s own
    name, else "label", made distinct from X's columns)."""
    import pandas as pd

    base = str(getattr(y, "name", None) or "label")
    name, n = base, 1
    while name in {str(c) for c in X.columns}:
        name, n = f"{base}_{n}", n + 1
    values = y.tolist() if hasattr(y, "tolist") else list(y)
    if len(values) != len(X):
        raise ValueError(f"X has {len(X)} rows and y {len(values)} labels")
    return pd.concat([X, pd.Series(values, index=X.index, name=name)], axis=1), name


def in_order(frame: Any, order: Sequence[str] | None) -> Any:
    """The frame's columns named in ``order`` (a model's features), in that order, when it
    holds all of them (the others, such as a label column, left out); else the frame as it is,
    for the service to name what does not fit."""
    if order is None:
        return frame
    columns = {str(c): c for c in frame.columns}
    if not set(order) <= set(columns):
        return frame
    return frame[[columns[name] for name in order]]
