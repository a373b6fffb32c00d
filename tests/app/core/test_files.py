"""app/core/files.py: an atomic write leaves the old file (and no temp file) when it fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.files import atomic_write


def test_atomic_write_leaves_old_file_on_failure(tmp_path: Path):
    target = tmp_path / "f.bin"
    atomic_write(target, lambda fh: fh.write(b"old") and None)

    def broken(fh):
        fh.write(b"half")
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError):
        atomic_write(target, broken)
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.bin"]
