"""Tabular uploads read through Arrow: CSV missing values as R and pandas write them
(``na_values``), CSV errors named by their line in the whole file, and Parquet and Arrow IPC
(Feather) files, with each kind of bad input a 422 that names the place and stores nothing."""

from __future__ import annotations

import gzip
import io
import math
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.services.datasets.parse_base import ParseError
from tests.helpers import assert_problem, create_job, make_settings, parse_rows, poll, upload, wait_for
from tests.tus import KEY_A, auth, create, finish, patch


def _parse(tmp_path: Path, content: bytes, name: str = "upload", **options: Any) -> Any:
    path = tmp_path / name
    path.write_bytes(content)
    return parse_rows(path, tmp_path / "store", shard_bytes=2**20, filename=name, **options)


def _nothing_stored(client: TestClient, tmp_path: Path) -> None:
    assert client.get("/v1/datasets").json()["items"] == []
    assert list((tmp_path / "var" / "datasets").iterdir()) == []


def _nan_positions(X: Any) -> list[tuple[int, int]]:
    dense = X.toarray()
    return [(int(r), int(c)) for r, c in np.argwhere(np.isnan(dense))]


# -- CSV missing values ------------------------------------------------------------------------


def test_an_r_export_reads_na_as_missing(tmp_path: Path):
    # write.csv(df): quoted header and text, NA for missing numbers and text.
    r_csv = b'"height","colour","label"\n1.5,"red","a"\nNA,"blue","b"\n2.5,NA,"a"\n'
    p = _parse(tmp_path, r_csv, "r.csv")
    assert _nan_positions(p.X) == [(1, 0)] and p.columns.n_missing == 1
    assert p.columns.feature_names == ["height", "colour"] and p.columns.text_columns == [1]
    assert p.y.tolist() == ["a", "b", "a"]


def test_a_pandas_export_reads_empty_cells_and_nan_as_missing(tmp_path: Path):
    # df.to_csv(): an index column, empty cells for missing; NaN written by hand is read too.
    pandas_csv = b",x,y,label\n0,1.0,,0\n1,,NaN,1\n2,3.0,nan,0\n"
    p = _parse(tmp_path, pandas_csv, "pandas.csv")
    assert _nan_positions(p.X) == [(0, 2), (1, 1), (1, 2), (2, 2)] and p.columns.n_missing == 4
    assert p.y.tolist() == [0, 1, 0]


def test_a_custom_na_list_replaces_the_default(tmp_path: Path):
    content = b"a,b,label\n-999,1,0\n2,NA,1\n3,?,0\n"
    p = _parse(tmp_path, content, "custom.csv", na_values=("", "-999", "?", "NA"))
    assert _nan_positions(p.X) == [(0, 0), (1, 1), (2, 1)]
    # Without "?" in the list it is a number that is not one, named by its line and column.
    with pytest.raises(ParseError, match=r"line 4, column 2 \('b'\): '\?' is not a number"):
        _parse(tmp_path, content, "custom.csv", na_values=("", "NA"))


def test_na_values_through_the_api(client: TestClient):
    content = b"a,b,label\n-999,1,0\n2,3,1\n4,5,0\n"
    r = upload(client, content, "sentinel.csv", na_values="NA, -999")
    assert r.status_code == 201, r.text
    assert r.json()["n_missing"] == 1
    assert client.get("/openapi.json").json()  # the option is part of the documented form
    bad = upload(client, content, "sentinel.csv", na_values="x" * 200)
    assert_problem(bad, 422, "body.na_values")


def test_a_missing_value_in_a_text_column_is_the_empty_category(tmp_path: Path):
    p = _parse(tmp_path, b"colour,x,label\nred,1,0\nNA,2,1\n,3,0\n", "text.csv")
    assert p.columns.text_columns == [0] and p.columns.n_missing == 0


def test_a_text_column_missing_in_the_first_rows_is_typed_by_its_first_value(tmp_path: Path):
    # An R export whose first rows have NA in a text column (and a number column), then values.
    r_csv = b'"colour","x","label"\nNA,NA,"a"\n"","2","b"\n"red",NA,"a"\n"blue",4,"b"\n'
    p = _parse(tmp_path, r_csv, "late.csv")
    assert p.columns.text_columns == [0] and _nan_positions(p.X) == [(0, 1), (2, 1)]
    # A column with no value in the rows looked at stays numeric: a later word is named.
    late = b"a,b,label\n" + b"NA,1,0\n" * 1000 + b"word,2,1\n"
    with pytest.raises(ParseError, match=r"line 1002, column 1 \('a'\): 'word' is not a number"):
        _parse(tmp_path, late, "later.csv")


# -- CSV errors by their line in the whole file --------------------------------------------------


def test_a_bad_cell_past_the_first_block_is_named_by_its_line_and_column(tmp_path: Path):
    rows = [b"x,y,label\n"] + [b"%d,%d.5,%d\n" % (i, i, i % 2) for i in range(400_000)]
    rows[300_001] = b"1,oops,0\n"  # line 300,002 (the header is line 1)
    with pytest.raises(ParseError, match=r"line 300002, column 2 \('y'\): 'oops' is not a number"):
        _parse(tmp_path, gzip.compress(b"".join(rows), 1), "big.csv.gz")


def test_a_ragged_row_after_blank_lines_is_named_by_its_line(tmp_path: Path):
    with pytest.raises(ParseError, match="line 6 has 2 fields; the first row has 3"):
        _parse(tmp_path, b"a,b,c\n1,2,0\n\n\n3,4,1\n5,6\n", "ragged.csv")


def test_an_infinite_value_and_a_missing_label_are_named(tmp_path: Path):
    with pytest.raises(ParseError, match=r"line 3, column 1 \('a'\): the value is infinite"):
        _parse(tmp_path, b"a,b,label\n1,2,0\ninf,4,1\n", "inf.csv")
    with pytest.raises(ParseError, match="line 3: the label is missing"):
        _parse(tmp_path, b"a,b,label\n1,2,0\n3,4,NA\n", "nolabel.csv")


def test_a_line_that_is_not_utf8_is_named(client: TestClient, tmp_path: Path):
    content = b"name,x,label\nOslo,1,0\n" + b"Lima,2,1\n" * 1000 + b"S\xe3o Paulo,3,0\n"
    body = assert_problem(upload(client, content, "latin1.csv"), 422, "body.file")
    assert "line 1003: the CSV file is not UTF-8 text" in body["detail"], body["detail"]
    _nothing_stored(client, tmp_path)


def test_a_truncated_gzip_csv_is_refused(client: TestClient, tmp_path: Path):
    whole = gzip.compress(b"a,b,label\n" + b"1,2,0\n3,4,1\n" * 50_000)
    body = assert_problem(upload(client, whole[: len(whole) // 2], "cut.csv.gz"), 422, "body.file")
    assert "gzip" in body["detail"], body["detail"]
    _nothing_stored(client, tmp_path)


# -- Parquet and Arrow IPC ---------------------------------------------------------------------


def _table() -> pa.Table:
    return pa.table(
        {
            "age": pa.array([30, None, 45, 51], pa.int32()),
            "score": pa.array([0.5, 1.5, None, 2.0]),
            "member": pa.array([True, False, True, None]),
            "city": pa.array(["Oslo", "Lima", None, "Oslo"]).dictionary_encode(),
            "label": pa.array(["yes", "no", "yes", "no"]),
        }
    )


def _parquet(table: pa.Table, **kwargs: Any) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, **kwargs)
    return sink.getvalue()


def _arrow_file(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    feather.write_feather(table, sink)
    return sink.getvalue()


def _arrow_stream(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    with ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table, max_chunksize=2)
    return sink.getvalue()


@pytest.mark.parametrize(
    "write", [_parquet, _arrow_file, _arrow_stream], ids=["parquet", "feather", "stream"]
)
def test_a_columnar_file_is_read_by_its_column_types(tmp_path: Path, write: Any):
    p = _parse(tmp_path, write(_table()), "upload")  # the format from the magic bytes alone
    assert p.format in ("parquet", "arrow") and p.label_kind == "string" and p.y.tolist() == ["yes", "no"] * 2
    assert p.columns.feature_names == ["age", "score", "member", "city"] and p.columns.label_name == "label"
    assert p.columns.text_columns == [3] and p.columns.n_missing == 3
    assert _nan_positions(p.X) == [(1, 0), (2, 1), (3, 2)]
    assert p.X.toarray()[0, :3].tolist() == [30, 0.5, 1]


def test_a_parquet_file_of_many_row_groups_streams_into_shards(tmp_path: Path):
    n = 20_000
    table = pa.table({"x": np.arange(n, dtype=float), "y": np.arange(n) % 3, "target": np.arange(n) % 2})
    p = _parse(tmp_path, _parquet(table, row_group_size=1000), "many.parquet", label_column="y")
    assert p.X.shape == (n, 2) and p.task == "multiclass"
    assert p.X[n - 1].toarray().tolist() == [[n - 1, (n - 1) % 2]]


@pytest.mark.parametrize(
    ("column", "words"),
    [
        (pa.array([[1.0], [2.0]]), "list"),
        (pa.array([{"a": 1}, {"a": 2}]), "struct"),
        (pa.array([b"\x00", b"\x01"]), "binary"),
        (pa.array([1, 2], pa.timestamp("s")), "timestamp"),
        (pa.array([[("k", 1)], [("k", 2)]], pa.map_(pa.string(), pa.int64())), "map"),
    ],
    ids=["list", "struct", "binary", "timestamp", "map"],
)
def test_an_unsupported_column_is_a_422_naming_it(
    client: TestClient, tmp_path: Path, column: pa.Array, words: str
):
    table = pa.table({"x": [1.0, 2.0], "odd": column, "label": [0, 1]})
    body = assert_problem(upload(client, _parquet(table), "odd.parquet"), 422, "body.file")
    assert "column 2 ('odd')" in body["detail"] and words in body["detail"], body["detail"]
    _nothing_stored(client, tmp_path)


def test_a_bad_value_in_a_later_row_group_is_named_by_its_row(client: TestClient, tmp_path: Path):
    labels = [0.0, 1.0] * 1500
    labels[2500] = math.nan
    table = pa.table({"x": np.ones(3000), "label": labels})
    body = assert_problem(upload(client, _parquet(table, row_group_size=500), "nan.parquet"), 422)
    assert "row 2501: the label is missing, NaN or infinite" in body["detail"], body["detail"]
    _nothing_stored(client, tmp_path)


@pytest.mark.parametrize(
    ("content", "name", "words"),
    [
        (lambda: _parquet(_table())[:-100], "cut.parquet", "not a valid Parquet file"),
        (lambda: _arrow_file(_table())[:200], "cut.arrow", "not a valid Arrow IPC file"),
        (lambda: gzip.compress(_parquet(_table())), "t.parquet.gz", "gzip-compressed parquet"),
        (lambda: _parquet(pa.table({"label": [1, 2]})), "one.parquet", "at least one feature"),
        (lambda: _parquet(_table()), "nolabel.parquet", "'target' is neither"),
    ],
    ids=["truncated-parquet", "truncated-arrow", "gzip-parquet", "one-column", "no-such-label"],
)
def test_a_broken_columnar_file_is_a_422(
    client: TestClient, tmp_path: Path, content: Any, name: str, words: str
):
    fields = {"label_column": "target"} if name == "nolabel.parquet" else {}
    body = assert_problem(upload(client, content(), name, **fields), 422, "body.file")
    assert words in body["detail"], body["detail"]
    _nothing_stored(client, tmp_path)


def test_a_parquet_upload_trains_a_model(client: TestClient):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, "pos", "neg")
    colour = np.where(X[:, 2] > 0, "warm", "cold")
    a = X[:, 0].copy()
    a[::50] = np.nan  # nulls: imputed by the job's preprocessing
    table = pa.table({"a": pa.array(a, from_pandas=True), "b": X[:, 1], "colour": colour, "class": y})
    r = upload(client, _parquet(table), "train.parquet", label_column="class")
    assert r.status_code == 201, r.text
    ds = r.json()
    assert ds["format"] == "parquet" and ds["text_columns"] == [2] and ds["n_missing"] == 8
    job = create_job(
        client,
        dataset_id=ds["id"],
        solver="lbfgs",
        params={"loss": "logistic", "sigma": 1e-4, "n_iter": 100},
        preprocessing={},
    )
    assert job.status_code == 202, job.text
    done = wait_for(client, job.json()["id"])
    assert done["status"] == "succeeded", done


def test_zeros_are_left_out_of_the_stored_rows_and_missing_cells_kept(tmp_path: Path):
    p = _parse(tmp_path, b"a,b,c,label\n0,1.5,,0\n0,0,0,1\n2,NA,0,0\n", "zeros.csv")
    assert p.X.nnz == 4 and _nan_positions(p.X) == [(0, 2), (2, 1)]
    assert np.nan_to_num(p.X.toarray(), nan=-1).tolist() == [[0, 1.5, -1], [0, 0, 0], [2, -1, 0]]


# -- every way in takes na_values and reads Parquet --------------------------------------------


SENTINEL_CSV = b"age,glucose,outcome\n50,-999,sick\n31,85,healthy\n44,?,sick\n"


def test_na_values_and_parquet_through_a_server_side_import(tmp_path: Path):
    roots = tmp_path / "imports"
    roots.mkdir()
    (roots / "s.csv").write_bytes(SENTINEL_CSV)
    (roots / "t.parquet").write_bytes(_parquet(_table()))
    with TestClient(create_app(make_settings(tmp_path, import_roots=str(roots)))) as client:
        for source, options, missing in (("s.csv", {"na_values": "-999,?"}, 2), ("t.parquet", {}, 3)):
            r = client.post("/v1/datasets/import", json={"source": str(roots / source), **options})
            assert r.status_code == 202, r.text
            done = poll(client, r.headers["Location"], lambda u: u["state"] in ("done", "failed"))
            assert done["state"] == "done", done
            assert client.get(f"/v1/datasets/{done['dataset_id']}").json()["n_missing"] == missing


def test_na_values_through_a_resumable_upload(tmp_path: Path):
    settings = make_settings(tmp_path, api_keys=f"team-a:member:{KEY_A}")
    with TestClient(create_app(settings)) as client:
        location = create(client, len(SENTINEL_CSV)).headers["Location"]
        assert patch(client, location, 0, SENTINEL_CSV).status_code == 204
        done = finish(client, location, name="sentinel", format="csv", na_values="-999,?")
        assert done["state"] == "done", done
        ds = client.get(f"/v1/datasets/{done['dataset_id']}", headers=auth()).json()
        assert ds["n_missing"] == 2 and ds["text_columns"] == []
