"""The bounds app/services/model_registry/import_read.py charges against PGS_MAX_MODEL_BYTES before
it parses anything, measured (tracemalloc): what json.loads builds from JSON texts shaped to
amplify, and what zipfile builds from a zip's directory, stay within the reader's estimate."""

from __future__ import annotations

import io
import json
import tracemalloc
import zipfile
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from app.services.model_registry.import_read import DIRECTORY_COST, directory_size, json_parse_bytes

N = 20_000


def _kept_bytes(build: Callable[[], Any]) -> int:
    """The memory the result of ``build()`` holds (allocated during the call and still held)."""
    tracemalloc.start()
    try:
        result = build()
        kept = tracemalloc.get_traced_memory()[0]
        del result
        return kept
    finally:
        tracemalloc.stop()


def _list(item: str) -> str:
    return "[" + ",".join([item] * N) + "]"


JSON_TEXTS = {
    "floats as exported": json.dumps(np.random.default_rng(0).normal(size=N).tolist()),
    "short floats": _list("1e1"),
    "small ints": _list("0"),
    "int64s": _list("-9223372036854775807"),
    "empty lists": _list("[]"),
    "empty objects": _list("{}"),
    "objects of one key": _list('{"a":0}'),
    "distinct keys": "{" + ",".join(f'"k{i}":{{}}' for i in range(N)) + "}",
    "two-letter strings": _list('"ab"'),
    "escaped astral string": '["\\ud83d\\ude00' + "a" * N + '"]',
    "raw astral string": '["\U0001f600' + "a" * N + '"]',
    "nested lists": _list("[[[0]]]"),
}


@pytest.mark.parametrize("name", sorted(JSON_TEXTS))
@pytest.mark.parametrize("as_bytes", [False, True])
def test_json_parse_bytes_bounds_what_json_loads_builds(name: str, as_bytes: bool):
    text = JSON_TEXTS[name]
    raw: str | bytes = text.encode() if as_bytes else text
    assert _kept_bytes(lambda: json.loads(raw)) <= json_parse_bytes(raw)


def _zip(names: list[str], comment: bytes = b"") -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        for name in names:
            archive.writestr(name, b"")
        archive.comment = comment
    return buf.getvalue()


SHORT_NAMES = [str(i) for i in range(N)]  # a ZipInfo per 47 bytes of directory
ASTRAL_NAMES = [f"\U0001f600{'a' * 1000}{i}" for i in range(200)]  # names stored as UCS-4


@pytest.mark.parametrize(
    ("names", "comment"),
    [
        (SHORT_NAMES, b""),
        ([str(i) for i in range(70_000)], b""),  # past 65,535 entries: a zip64 end record
        (SHORT_NAMES, b"PK" * 30_000),  # a comment: the end record is no longer at the end
    ],
    ids=["end record", "zip64 end record", "comment"],
)
def test_directory_size_is_what_zipfile_reads(names: list[str], comment: bytes):
    body = _zip(names, comment)
    # The directory runs from where zipfile starts reading it to the first end record.
    end = body.rfind(b"PK\x06\x06") if len(names) > 0xFFFF else body.rfind(b"PK\x05\x06")
    assert directory_size(body) == end - zipfile.ZipFile(io.BytesIO(body)).start_dir


@pytest.mark.parametrize("names", [SHORT_NAMES, ASTRAL_NAMES], ids=["short names", "astral names"])
def test_zipfile_builds_at_most_directory_cost_per_byte_of_directory(names: list[str]):
    body = _zip(names)
    assert _kept_bytes(lambda: zipfile.ZipFile(io.BytesIO(body))) <= DIRECTORY_COST * directory_size(body)


def test_a_body_without_a_zip_end_record_has_no_directory():
    assert directory_size(b"") == 0
    assert directory_size(b"PK\x03\x04 not a zip" * 10) == 0
