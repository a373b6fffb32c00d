"""Every attack of the security review is replayed by a test: each row ID of the review's results
table (A1 ... R4) is named, on its own (not only inside a range such as "I1-I9") or as the start
of a test's name (``test_i5_...``), in a test file of tests/security, tests/fuzz or tests/console,
where the test that replays it says which row it is. The review lives beside the repository;
without it there is nothing to check.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
REVIEW = TESTS.parents[1] / "shared" / "security" / "attack-2026-11-27.md"
REPLAYS = ("security", "fuzz", "console")
_ROW = re.compile(r"^\| ([A-Z]\d+) \|", re.MULTILINE)


def review_ids(text: str) -> list[str]:
    """The row IDs of the results table, in its order."""
    return _ROW.findall(text)


def named_ids(text: str, ids: list[str]) -> set[str]:
    """The IDs ``text`` names as words ("A1" is not named by "A10" nor by "A1x") or as the
    start of a test's name (``def test_a1_...``)."""
    return {
        i
        for i in ids
        if re.search(rf"(?<![\w-]){i}(?![\w-])", text) or re.search(rf"\bdef test_{i.lower()}_", text)
    }


def test_the_id_finder_counts_words_not_ranges_or_prefixes():
    ids = ["A1", "A10", "I1", "I9", "R3"]
    assert named_ids("rows A10 and I1-I9; R3: a nested list", ids) == {"A10", "R3"}
    assert named_ids("def test_i9_a_slow_source(): ...\ndef test_a1x(): ...", ids) == {"I9"}


def test_every_attack_of_the_review_is_replayed_by_a_test():
    if not REVIEW.is_file():
        pytest.skip(f"the security review is not at {REVIEW}")
    ids = review_ids(REVIEW.read_text())
    assert len(ids) == len(set(ids)) == 60, ids
    named: set[str] = set()
    for suite in REPLAYS:
        for path in sorted((TESTS / suite).rglob("test_*.py")):
            if path != Path(__file__).resolve():
                named |= named_ids(path.read_text(), ids)
    missing = [i for i in ids if i not in named]
    assert not missing, f"{len(missing)} attack(s) of the review no test names: {', '.join(missing)}"
