"""Upload parsing without HTTP: index bases, widths, CSV headers, task inference."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.datasets import load_svmlight_file

from app.services.datasets.parse_base import ParseError, TooLargeError, infer_task
from tests.helpers import parse_rows


def _parse(tmp_path: Path, content: bytes, **options) -> Any:
    path = tmp_path / "upload"
    path.write_bytes(content)
    return parse_rows(path, tmp_path / "store", **options)


def test_svmlight_index_base_detection(tmp_path: Path):
    one = _parse(tmp_path, b"1 1:1 3:2\n-1 2:5\n")
    assert one.index_base == 1 and one.X.shape == (2, 3)
    assert one.X.toarray().tolist() == [[1, 0, 2], [0, 5, 0]]
    zero = _parse(tmp_path, b"1 0:1 2:2\n-1 1:5\n")
    assert zero.index_base == 0 and zero.X.toarray().tolist() == [[1, 0, 2], [0, 5, 0]]
    forced = _parse(tmp_path, b"1 1:1 3:2\n", zero_based="true")
    assert forced.index_base == 0 and forced.X.shape == (1, 4)


def test_real_files_match_scikit_learn(tmp_path: Path, data_dir: Path):
    for name in ("a9a.test.svm", "agaricus.train.svm"):
        parsed = parse_rows(data_dir / name, tmp_path, shard_bytes=64 * 1024, filename=name)
        assert parsed.manifest.n_shards > 1
        X, y = load_svmlight_file(str(data_dir / name))
        assert parsed.X.shape == X.shape and (parsed.X != X).nnz == 0
        assert np.array_equal(parsed.y, y)
    # agaricus labels are 0/1, a9a's test file misses the last of 123 features.
    assert parse_rows(data_dir / "a9a.test.svm", tmp_path, shard_bytes=2**20).n_features == 122


def test_csv_header_detection_and_label_column(tmp_path: Path):
    p = _parse(tmp_path, b"x,y,label\n1,2,a\n3,4,b\n")
    assert p.X.toarray().tolist() == [[1, 2], [3, 4]] and p.y.tolist() == ["a", "b"]
    p = _parse(tmp_path, b"1,2,0\n3,4,1\n", label_column="0")
    assert p.X.toarray().tolist() == [[2, 0], [4, 1]] and p.y.tolist() == [1, 3]
    p = _parse(tmp_path, b"1;2;0\n3;4;1\n")  # semicolons
    assert p.X.shape == (2, 2) and p.task == "binary"
    p = _parse(tmp_path, b"a\tb\tc\n1\t2\t3\n4\t5\t6\n", label_column="b")
    assert p.X.toarray().tolist() == [[1, 3], [4, 6]] and p.task == "binary"
    with pytest.raises(ParseError, match="label_column"):
        _parse(tmp_path, b"a,b\n1,2\n", label_column="c")


def test_a_utf8_byte_order_mark_is_not_part_of_the_first_name_or_cell(tmp_path: Path):
    bom = b"\xef\xbb\xbf"
    header = _parse(tmp_path, bom + b"age,income,label\n1,2,a\n3,4,b\n")
    assert header.columns.feature_names == ["age", "income"] and header.columns.label_name == "label"
    # Without a header the first cell is a number, not a text "\ufeff1".
    plain = _parse(tmp_path, bom + b"1,2,0\n3,4,1\n")
    assert plain.X.toarray().tolist() == [[1, 2], [3, 4]] and plain.columns.text_columns == []


@pytest.mark.parametrize(
    ("labels", "override", "task"),
    [
        ([-1.0, 1.0, 1.0], "auto", "binary"),
        ([0.0, 1.0, 2.0, 1.0], "auto", "multiclass"),
        ([0.5, 1.25, 2.0], "auto", "regression"),
        (list(map(float, range(1, 30))), "auto", "regression"),  # abalone's ages
        (list(map(float, range(1, 30))), "classification", "multiclass"),
        ([0.0, 1.0], "regression", "regression"),
    ],
)
def test_task_inference(labels: list[float], override: str, task: str):
    assert infer_task(np.asarray(labels), "numeric", override)[0] == task


def test_string_labels_cannot_be_regression():
    with pytest.raises(ParseError, match="numeric labels"):
        infer_task(np.asarray(["a", "b"]), "string", "regression")


def test_decompressed_limit_applies_to_plain_files_too(tmp_path: Path):
    with pytest.raises(TooLargeError):
        _parse(tmp_path, b"1 1:1\n" * 100_000, max_decompressed_bytes=10_000)


def test_rows_go_to_shards_cut_at_whole_rows(tmp_path: Path):
    lines = b"".join(b"%d 1:%d 3:0.5\n" % (i % 2, i) for i in range(500))
    p = _parse(tmp_path, lines)  # 512-byte shards: 12 rows of 2 non-zeros each
    assert p.manifest.n_shards == 42 and sum(p.manifest.shard_rows) == 500
    assert p.manifest.nnz == 1000, p.manifest.shard_rows
    assert p.X.shape == (500, 3) and p.X[499, 0] == 499 and p.y.tolist()[:3] == [0, 1, 0]


def test_a_0_based_file_found_late_gets_its_first_shards_back(tmp_path: Path):
    # Blocks of 4 MiB are read as 1-based until the 0 index in the last one: the shards already
    # written get their indices back.
    path = tmp_path / "late.svm"
    path.write_bytes(b"1 1:1 2:2\n" * 500_000 + b"-1 0:5\n")
    p = parse_rows(path, tmp_path / "store", shard_bytes=2**20)
    assert p.index_base == 0 and p.manifest.n_shards > 4 and p.X.shape == (500_001, 3)
    assert p.X[0].toarray().tolist() == [[0, 1, 2]] and p.X[500_000].toarray().tolist() == [[5, 0, 0]]


def test_string_labels_of_growing_width_across_shards(tmp_path: Path):
    body = b"a,b,label\n" + b"1,2,x\n" * 200 + b"3,4,a much longer label\n" * 200
    p = _parse(tmp_path, body)
    assert p.label_kind == "string" and p.classes == ["a much longer label", "x"]
    assert p.y[0] == "x" and p.y[-1] == "a much longer label" and p.manifest.n_shards > 2


def test_task_inference_past_the_class_limit(tmp_path: Path):
    from app.services.datasets.parse_base import LabelTally

    tally = LabelTally()
    for start in range(0, 3000, 500):
        tally.add(np.arange(start, start + 500, dtype=float))
    assert tally.more and tally.count == 1001
    assert infer_task(tally, "numeric")[0] == "regression"
    with pytest.raises(ParseError, match="more than 1000 distinct labels"):
        infer_task(tally, "numeric", "classification")
