"""The compiled svmlight parser against scikit-learn's ``load_svmlight_file``, its reference:
every real data set row for row (labels, indices and values bit for bit, the width, the index
base), odd but valid formatting, and each way a line is refused, named by its line in the whole
file when the blocks of lines are parsed in parallel threads."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from fastapi.testclient import TestClient
from sklearn.datasets import load_svmlight_file

from app.main import create_app
from app.services.datasets import parse_base
from app.services.datasets.parse_base import ParseError
from app.services.datasets.svmlight_format import parse_block
from tests.conftest import DATA_DIR
from tests.helpers import assert_problem, make_settings, parse_rows, upload

SMALL_BLOCK = 64 * 1024  # several blocks, so several threads, for files of a few hundred KiB


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parse_base, "BLOCK_BYTES", SMALL_BLOCK)


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64).view(np.int64)


def _assert_same_rows(X: sp.csr_matrix, y: np.ndarray, X_ref: sp.csr_matrix, y_ref: np.ndarray) -> None:
    assert X.shape == X_ref.shape
    assert np.array_equal(X.indptr, X_ref.indptr) and np.array_equal(X.indices, X_ref.indices)
    assert np.array_equal(_bits(X.data), _bits(X_ref.data))  # -0.0 and 0.0 told apart
    assert np.array_equal(_bits(y), _bits(y_ref))


SVM_FILES = sorted(p.name for p in DATA_DIR.glob("*.svm")) if DATA_DIR.is_dir() else []


@pytest.mark.parametrize("name", SVM_FILES)
def test_every_real_data_set_matches_scikit_learn_row_for_row(
    name: str, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # Blocks of 1 MiB in two threads: the larger files are parsed in several ranges at once.
    monkeypatch.setattr(parse_base, "BLOCK_BYTES", 1024 * 1024)
    parsed = parse_rows(data_dir / name, tmp_path, shard_bytes=64 * 1024 * 1024, threads=2)
    X_ref, y_ref = load_svmlight_file(str(data_dir / name))
    assert parsed.index_base == 1 and parsed.n_features == X_ref.shape[1]
    _assert_same_rows(parsed.X, parsed.y, X_ref, y_ref)


def _random_svmlight(rng: np.random.Generator, n_lines: int) -> bytes:
    """Valid lines in every form scikit-learn reads: signs, exponents, 17 significant digits,
    -0, qid, comments, blank lines, tabs, runs of spaces and \\r\\n."""
    values = [
        lambda: f"{rng.normal():.6g}",
        lambda: repr(float(rng.normal() * 10.0 ** rng.integers(-30, 30))),
        lambda: f"{rng.integers(-99, 99)}",
        lambda: f"{rng.random():.3e}".replace("e", "E"),
        lambda: "+" + f"{rng.random():.4f}".lstrip("0"),
        lambda: "-0",
        lambda: "1e25",
        lambda: "0.000123456789012345678",
        lambda: "1." + "0" * 25,
    ]
    labels = ["+1", "-1", "1", "0", "2.5", ".5", "1e-3", "-0.0", "3."]
    spaces = [" ", "  ", "\t", " \t "]
    out = []
    for _ in range(n_lines):
        kind = rng.random()
        if kind < 0.05:
            out.append(rng.choice(["", "   ", "# a comment: 1:2", "\t"]))
            continue
        fields = [str(rng.choice(labels))]
        if rng.random() < 0.1:
            fields.append(f"qid:{rng.integers(1, 9)}")
        cols = np.sort(rng.choice(50, size=rng.integers(0, 8), replace=False)) + 1
        fields += [f"{c}:{values[rng.integers(len(values))]()}" for c in cols]
        line = (
            "".join(f + str(rng.choice(spaces)) for f in fields).rstrip(" \t")
            if rng.random() < 0.5
            else (str(rng.choice(spaces)).join(fields))
        )
        if rng.random() < 0.1:
            line += " # trailing comment 3:4"
        out.append(line + ("\r" if rng.random() < 0.2 else ""))
    return ("\n".join(out) + "\n").encode()


@pytest.mark.parametrize("seed", range(5))
def test_odd_but_valid_formatting_parses_as_scikit_learn_does(seed: int):
    text = _random_svmlight(np.random.default_rng(seed), 2000)
    X, y = parse_block(text, 1)
    X_ref, y_ref = load_svmlight_file(io.BytesIO(text), zero_based=True)
    X.resize(X_ref.shape)  # the reference's width is the largest index + 1 too
    _assert_same_rows(X, y, X_ref, y_ref)


def _valid_lines(n_bytes: int) -> bytes:
    line = b"1 1:0.5 2:1.25 7:3\n"
    return line * (n_bytes // len(line))


# (a bad line, its column, a word of the reason)
BAD_LINES = [
    (b"x 1:1", 1, "label is not a number"),
    (b"1 1:1 2:abc", 9, "value is not a number"),
    (b"1 1:1 a:2", 7, "index is not an integer"),
    (b"1 1:1 2.5:2", 7, "index is not an integer"),
    (b"1 1:1 3", 7, "without ':'"),
    (b"1 1:1 2:", 7, "without a value"),
    (b"1 -5:1", 3, "negative feature index"),
    (b"1 1:1 2147483648:1", 7, "larger than 2147483647"),
    (b"1 3:1 2:1", 7, "increasing"),
    (b"1 1:1 1:2", 7, "increasing"),
    (b"1 qid 1:1", 3, "without ':'"),
    (b"1 1:1\x00", 5, "NUL byte"),
    (b"1 1:\xff\xfe", 5, "not valid UTF-8"),
    ("1 1:1 2:\u00e9".encode(), 9, "not printable ASCII"),
    (b"1 1:1 2:1:2", 9, "value is not a number"),
]


@pytest.mark.parametrize(("bad", "column", "reason"), BAD_LINES)
def test_a_bad_line_deep_in_a_file_parsed_in_threads_is_named_by_its_line(
    tmp_path: Path, small_blocks: None, bad: bytes, column: int, reason: str
):
    head = _valid_lines(5 * SMALL_BLOCK)
    path = tmp_path / "bad.svm"
    path.write_bytes(head + bad + b"\n" + _valid_lines(3 * SMALL_BLOCK) + bad + b"\n")
    line = head.count(b"\n") + 1
    with pytest.raises(ParseError) as caught:
        parse_rows(path, tmp_path / "store", shard_bytes=2**26, threads=2)
    assert f"line {line}, column {column} " in str(caught.value) and reason in str(caught.value), caught.value
    # scikit-learn refuses that line too.
    with pytest.raises((ValueError, UnicodeDecodeError, OverflowError)):
        load_svmlight_file(io.BytesIO(bad + b"\n"), zero_based=True)


def test_a_multibyte_character_across_a_block_boundary_is_named_by_its_line(
    tmp_path: Path, small_blocks: None
):
    # The read that makes the blocks stops in the middle of the 2-byte character: blocks are cut
    # at line ends, so the character reaches the parser whole, and its line is named.
    head = _valid_lines(SMALL_BLOCK - 200)
    head += b"# " + b"x" * (SMALL_BLOCK - len(head) - 8) + b"\n"
    bad = "1 1:\u00e9\n".encode()
    assert len(head) + bad.index(b"\xc3") == SMALL_BLOCK - 1  # the split falls inside the char
    path = tmp_path / "split.svm"
    path.write_bytes(head + bad + _valid_lines(SMALL_BLOCK))
    line = head.count(b"\n") + 1
    with pytest.raises(ParseError, match=f"line {line}, column 5 .*not printable ASCII"):
        parse_rows(path, tmp_path / "store", shard_bytes=2**26, threads=2)


def test_nan_and_inf_are_refused_by_their_line_in_the_whole_file(tmp_path: Path, small_blocks: None):
    head = _valid_lines(3 * SMALL_BLOCK)
    line = head.count(b"\n") + 1
    for bad in (b"1 1:nan", b"inf 1:1", b"1 2:1e400"):
        path = tmp_path / "nan.svm"
        path.write_bytes(head + bad + b"\n" + head)
        with pytest.raises(ParseError, match=f"line {line}: .*NaN or infinite"):
            parse_rows(path, tmp_path / "store", shard_bytes=2**26, threads=2)


@pytest.mark.parametrize(
    ("suffix", "compress"),
    [(".gz", gzip.compress), (".bz2", bz2.compress), (".xz", lzma.compress)],
)
def test_compressed_files_stream_into_the_parser_and_a_truncated_one_is_refused(
    tmp_path: Path, small_blocks: None, suffix: str, compress: Callable[[bytes], bytes]
):
    text = _random_svmlight(np.random.default_rng(7), 20_000)
    path = tmp_path / f"d.svm{suffix}"
    path.write_bytes(compress(text))
    parsed = parse_rows(path, tmp_path / "store", shard_bytes=2**26, threads=2)
    X_ref, y_ref = load_svmlight_file(io.BytesIO(text))
    _assert_same_rows(parsed.X, parsed.y, X_ref, y_ref)
    path.write_bytes(compress(text)[:-40])
    with pytest.raises(ParseError, match="not a valid"):
        parse_rows(path, tmp_path / "store2", shard_bytes=2**26, threads=2)


def test_one_thread_and_two_give_the_same_rows(tmp_path: Path, small_blocks: None):
    path = tmp_path / "d.svm"
    path.write_bytes(_random_svmlight(np.random.default_rng(3), 20_000))
    one = parse_rows(path, tmp_path / "one", shard_bytes=2**26, threads=1)
    two = parse_rows(path, tmp_path / "two", shard_bytes=2**26, threads=2)
    _assert_same_rows(one.X, one.y, two.X, two.y)


def test_every_value_is_the_double_python_reads():
    """Decimals of 1 to 25 digits, points anywhere, exponents from -340 to 310: the exact fast
    path and the float() fallback give float()'s double, bit for bit."""
    rng = np.random.default_rng(11)
    tokens = []
    for _ in range(20_000):
        digits = "".join(rng.choice(list("0123456789"), size=rng.integers(1, 26)))
        point = rng.integers(0, len(digits) + 1)
        text = digits[:point] + "." + digits[point:] if rng.random() < 0.7 else digits
        if rng.random() < 0.5:
            text += f"{rng.choice(['e', 'E'])}{rng.integers(-340, 311)}"
        tokens.append(str(rng.choice(["", "-", "+"])) + (text if text != "." else "0"))
    body = "".join(f"1 1:{t}\n" for t in tokens).encode()
    X, y = parse_block(body, 1)
    expected = np.array([float(t) for t in tokens])
    finite = np.isfinite(expected)  # the others are refused later, by line (NaN or infinite)
    assert np.array_equal(_bits(X.data[finite]), _bits(expected[finite]))


def test_an_upload_with_a_bad_line_in_its_third_block_is_a_422_and_stores_nothing(tmp_path: Path):
    # Through the service: the parse child's threads (PGS_PARSE_THREADS=2) read blocks of 4 MiB,
    # so the first two blocks' rows reach the shard writer before the bad line is met.
    head = _valid_lines(9 * 1024 * 1024)
    content = gzip.compress(head + b"1 1:1 2:x\n" + head[:100_000], compresslevel=1)
    settings = make_settings(tmp_path, parse_threads=2, shard_bytes=1024 * 1024)
    with TestClient(create_app(settings)) as client:
        body = assert_problem(upload(client, content, "deep.svm.gz"), 422, "body.file")
        line = head.count(b"\n") + 1
        assert f"line {line}, column 9 " in body["detail"], body["detail"]
        assert client.get("/v1/datasets").json()["items"] == []
    assert list((tmp_path / "var" / "datasets").iterdir()) == []
