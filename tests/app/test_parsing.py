"""Upload parsing without HTTP: index bases, widths, CSV headers, task inference."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_svmlight_file

from app.services.parsing import ParseError, ParseOptions, TooLargeError, infer_task, parse_upload


def _parse(tmp_path: Path, content: bytes, **options) -> object:
    path = tmp_path / "upload"
    path.write_bytes(content)
    return parse_upload(path, ParseOptions(**options))


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
        parsed = parse_upload(data_dir / name, ParseOptions(filename=name))
        X, y = load_svmlight_file(str(data_dir / name))
        assert parsed.X.shape == X.shape and (parsed.X != X).nnz == 0
        assert np.array_equal(parsed.y, y)
    # agaricus labels are 0/1, a9a's test file misses the last of 123 features.
    assert parse_upload(data_dir / "a9a.test.svm", ParseOptions()).X.shape[1] == 122


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


@pytest.mark.parametrize(("labels", "override", "task"), [
    ([-1.0, 1.0, 1.0], "auto", "binary"),
    ([0.0, 1.0, 2.0, 1.0], "auto", "multiclass"),
    ([0.5, 1.25, 2.0], "auto", "regression"),
    (list(map(float, range(1, 30))), "auto", "regression"),  # abalone's ages
    (list(map(float, range(1, 30))), "classification", "multiclass"),
    ([0.0, 1.0], "regression", "regression"),
])
def test_task_inference(labels: list[float], override: str, task: str):
    assert infer_task(np.asarray(labels), "numeric", override)[0] == task


def test_string_labels_cannot_be_regression():
    with pytest.raises(ParseError, match="numeric labels"):
        infer_task(np.asarray(["a", "b"]), "string", "regression")


def test_decompressed_limit_applies_to_plain_files_too(tmp_path: Path):
    with pytest.raises(TooLargeError):
        _parse(tmp_path, b"1 1:1\n" * 100_000, max_decompressed_bytes=10_000)
