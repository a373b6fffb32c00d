"""Uploads built to corrupt a data set or exhaust the server: each is refused with a 4xx that
names the line or the limit (and the setting that raises it), and nothing is stored. Bombs, a
million columns and a single huge line: tests/security/test_parse_attacks.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.core.config import Settings
from app.main import create_app
from tests.helpers import assert_nothing_stored, assert_problem, make_settings, parse_rows, upload

MIB = 1024 * 1024


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return make_settings(tmp_path, parse_memory_bytes=256 * MIB)


# -- item 2: a CSV is stored as written or refused ------------------------------------------


@pytest.mark.parametrize(
    ("content", "line"),
    [
        (b"1,2,1\n3,4,0\n5,6,7,8,9,1\n2,2,0\n", 3),  # a row with extra columns
        (b"x,y,label\n1,2,a\n3,4\n5,6,b\n", 3),  # a short row, string labels
        (b"1,2,1\n3,4,0\n5,6", 3),  # truncated last row
        (b"1,2,1\n3,4,0\n5,x,1\n", 3),  # a feature that is not a number
    ],
)
def test_a_ragged_or_broken_csv_row_is_a_422_naming_its_line(
    client: TestClient, tmp_path: Path, content: bytes, line: int
):
    body = assert_problem(upload(client, content, "d.csv"), 422, "body.file")
    assert f"line {line}" in body["detail"], body["detail"]
    assert_nothing_stored(client, tmp_path / "var")


def test_a_label_after_numeric_ones_makes_every_label_a_string(client: TestClient):
    r = upload(client, b"1,2,1\n3,4,0\n5,6,x\n", "mixed.csv")
    assert r.status_code == 201, r.text
    assert r.json()["classes"] == ["0", "1", "x"] and r.json()["n_features"] == 2


# -- item 3: bounded parsing in a child process ---------------------------------------------


def test_blank_lines_cost_no_parsing_time(tmp_path: Path):
    # Within every size limit: 40 million blank lines between two rows parse as two rows.
    path = tmp_path / "blank.svm"
    path.write_bytes(b"1 1:1\n" + b"\n" * (40 * MIB) + b"-1 2:1\n")
    parsed = parse_rows(path, tmp_path / "store")
    assert parsed.X.shape == (2, 2) and parsed.y.tolist() == [1, -1]


def test_a_parse_over_its_time_budget_is_a_413(tmp_path: Path):
    settings = make_settings(tmp_path, parse_timeout_s=0.05)
    with TestClient(create_app(settings)) as client:
        body = assert_problem(upload(client, b"1 1:1 2:0.5 3:0.25\n" * 2_000_000, "slow.svm"), 413)
        assert "PGS_PARSE_TIMEOUT_S" in body["detail"], body["detail"]
        assert_nothing_stored(client, tmp_path / "var")


def test_a_label_longer_than_the_limit_is_a_422_naming_its_line(client: TestClient, tmp_path: Path):
    content = b"1,2,a\n3,4," + b"x" * 1_000_000 + b"\n5,6,b\n"
    body = assert_problem(upload(client, content, "long.csv"), 422, "body.file")
    assert "line 2" in body["detail"] and "PGS_MAX_LABEL_CHARS" in body["detail"], body["detail"]
    assert_nothing_stored(client, tmp_path / "var")


def test_too_many_distinct_labels_stop_the_parse_at_the_first_one_over(client: TestClient):
    content = "".join(f"1,2,label{i}\n" for i in range(1200)).encode()
    body = assert_problem(upload(client, content, "many.csv"), 422, "body.file")
    assert "line 1001" in body["detail"], body["detail"]


# -- item 13: names (their characters: tests/security/test_browser_attacks.py), one class ----


def test_a_file_name_longer_than_a_name_may_be_is_refused(client: TestClient, tmp_path: Path):
    r = upload(client, b"1 1:1\n-1 2:1\n", "a" * 3000 + ".svm")
    assert_problem(r, 422, "body.file")
    assert_nothing_stored(client, tmp_path / "var")
    # With an explicit name the file name is not used, and a long one does not matter.
    r = upload(client, b"1 1:1\n-1 2:1\n", "a" * 3000 + ".svm", name="short")
    assert r.status_code == 201 and r.json()["name"] == "short"


def test_a_single_class_data_set_is_stored_with_a_warning(client: TestClient):
    r = upload(client, b"1 1:1\n1 2:1\n1 3:1\n", "one.svm")
    assert r.status_code == 201, r.text
    warnings = r.json()["warnings"]
    assert len(warnings) == 1 and "single class" in warnings[0], warnings
    assert client.get(f"/v1/datasets/{r.json()['id']}").json()["warnings"] == warnings
    two = upload(client, b"1 1:1\n-1 2:1\n", "two.svm").json()
    assert two["warnings"] == []
