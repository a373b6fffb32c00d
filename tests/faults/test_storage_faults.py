"""A full disk and an unwritable data dir during uploads: a clear 507 problem+json, no partial
data set (no file, no row), and uploads work again once there is room. (With the database on
the same disk, the review's rows F4 and F5: tests/security/test_disk_full.py.)

The data dir is a real, tiny tmpfs (mounting needs root, which CI has; elsewhere the test
skips); the SQLite database lives outside it, so only the store runs out of space.
"""

from __future__ import annotations

import gzip
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from tests.helpers import assert_problem, make_settings, tmpfs

SIZE_KB = 768


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    with tmpfs(tmp_path / "disk", SIZE_KB) as point:
        yield point


def _stored(data_dir: Path) -> list[str]:
    return sorted(
        str(p.relative_to(data_dir)) for sub in ("datasets", "tmp") for p in (data_dir / sub).iterdir()
    )


def _svm(rows: int, width: int = 30) -> bytes:
    line = " ".join(f"{i}:{(i % 7) / 7:.3f}" for i in range(1, width + 1))
    return "".join(f"{1 if r % 2 else -1} {line}\n" for r in range(rows)).encode()


def test_full_disk_and_read_only_data_dir(tmp_path: Path, small_disk: Path):
    settings = make_settings(tmp_path, data_dir=small_disk, database_url=f"sqlite:///{tmp_path / 'pgs.db'}")
    with TestClient(create_app(settings)) as c:

        def rejected(content: bytes, name: str) -> dict:
            problem = assert_problem(c.post("/v1/datasets", files={"file": (name, content)}), 507)
            assert problem["type"].endswith("insufficient-storage")
            assert _stored(small_disk) == [], "no partial data set"
            assert c.get("/v1/datasets").json()["items"] == [], "no row"
            return problem

        # The upload itself does not fit while it streams to disk.
        big = _svm(5000)
        assert len(big) > SIZE_KB * 1024
        assert "No space left" in rejected(big, "big.svm")["detail"]
        # The upload fits (gzip), the parsed data set does not: the atomic write leaves nothing.
        expands = gzip.compress(_svm(6000))
        assert len(expands) < SIZE_KB * 1024 // 4
        rejected(expands, "big.svm.gz")

        # A read-only data dir (a full or failed volume remounted read-only).
        subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
        try:
            assert "Read-only" in rejected(_svm(20), "small.svm")["detail"]
        finally:
            subprocess.run(["mount", "-o", "remount,rw", str(small_disk)], check=True)

        # Room again: the service did not need a restart.
        r = c.post("/v1/datasets", files={"file": ("small.svm", _svm(20))})
        assert r.status_code == 201, r.text
        assert r.json()["n_samples"] == 20
