"""What a prediction request carries (pgs_client.bodies), without a service: files cut into
batches at record boundaries only, each CSV batch with the header, the format told by name or by
the first line, gzip read through, and the inputs predict cannot send refused by name."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pgs_client import bodies, data


def _sent(b: bodies.Bodies) -> list[bytes]:
    return [b.join(batch) for batch in b.batches]


def test_a_quoted_cell_with_a_line_break_stays_in_its_record(tmp_path: Path):
    path = tmp_path / "notes.csv"
    path.write_bytes(b'id,note,x\n1,"two\nlines",3\n2,"say ""hi""",4\n\n3,plain,5')
    sent = _sent(bodies.for_file(path, "auto", max_rows=2, max_bytes=1 << 20))
    assert sent == [
        b'id,note,x\n1,"two\nlines",3\n2,"say ""hi""",4\n',
        b"id,note,x\n3,plain,5\n",
    ]


def test_the_format_comes_from_the_name_else_the_first_line(tmp_path: Path):
    svm = tmp_path / "rows.txt"
    svm.write_bytes(b"1 1:0.5 3:2\n-1 2:1\n")
    assert bodies.for_file(svm, "auto", 10, 1 << 20).content_type == "text/plain"
    as_csv = tmp_path / "rows.data"
    as_csv.write_bytes(b"a,b\n1,2\n")
    assert bodies.for_file(as_csv, "auto", 10, 1 << 20).content_type == "text/csv"
    stream = io.BytesIO(gzip.compress(b"a,b\n1,2\n3,4\n"))
    b = bodies.for_file(stream, "auto", 10, 1 << 20)
    assert (b.content_type, _sent(b)) == ("text/csv", [b"a,b\n1,2\n3,4\n"])


def test_parquet_an_unknown_format_and_an_empty_csv_are_refused(tmp_path: Path):
    parquet = tmp_path / "rows.bin"
    pd.DataFrame({"a": [1.0], "label": ["x"]}).to_parquet(parquet)
    with pytest.raises(ValueError, match="Parquet and Arrow files cannot be sent for prediction"):
        bodies.for_file(parquet, "auto", 10, 1 << 20)
    with pytest.raises(ValueError, match="format must be one of"):
        bodies.for_file(parquet, "parquet", 10, 1 << 20)
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"\n\n")
    with pytest.raises(ValueError, match="the CSV is empty"):
        bodies.for_file(empty, "auto", 10, 1 << 20)


def test_a_dataframe_is_csv_with_its_header_missing_cells_empty_and_booleans_numbers():
    frame = pd.DataFrame(
        {
            "colour": pd.Series(["red", None, 'a "b", c'], dtype="string"),
            "size": pd.array([1, None, 3], dtype="Int64"),
            "flag": pd.array([True, False, None], dtype="boolean"),
            "kind": pd.Categorical(["x", "y", None]),
            "w": [0.1, np.nan, 1e-300],
        }
    )
    b = bodies.for_input(frame, max_rows=2, max_bytes=1 << 20)
    assert b.content_type == "text/csv"
    assert _sent(b) == [
        b"colour,size,flag,kind,w\nred,1,1,x,0.1\n,,0,y,\n",
        b'colour,size,flag,kind,w\n"a ""b"", c",3,,,1e-300\n',
    ]


def test_json_rows_by_name_index_and_objects_with_missing_values_as_null():
    rows = [{"age": 3, "smoker": "no"}, {"age": float("nan"), "smoker": pd.NA}, {0: 1.5, "2": 2}]
    assert list(data.rows(rows)) == [
        {"age": 3.0, "smoker": "no"},
        {"age": None, "smoker": None},
        {"indices": [0, 2], "values": [1.5, 2.0]},
    ]
    mixed = np.array([[1, "red", None], [np.nan, "blue", 2.5]], dtype=object)
    assert list(data.rows(mixed)) == [[1.0, "red", None], [None, "blue", 2.5]]
    assert list(data.rows(np.array([[1.0, np.nan]]))) == [[1.0, None]]
    with pytest.raises(ValueError, match="infinite"):
        data.encode_row([float("inf")])
