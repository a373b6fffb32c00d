"""The full-disk attacks of the security review (rows F4 and F5), replayed against the real app
with the default layout: the data dir, and the SQLite database in it, on one real, tiny tmpfs
(mounting needs root; elsewhere the tests skip).

F4: multipart uploads fill the disk. F5: a tus PATCH fills it; in the review its bytes stayed
(0 bytes free), and then every write, each DELETE that would have freed space included, answered
503 while /readyz said ready.
"""

from __future__ import annotations

import errno
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from app.core.config import Settings
from app.core.disk_reserve import RESERVE_NAME
from app.core.storage.local import LocalDirStore
from app.main import create_app
from app.services.model_registry.artifacts import save_model_files
from tests.helpers import assert_problem, make_settings, tmpfs
from tests.tus import KEY_A, auth, create, offset_of, patch

MIB = 1024 * 1024
DISK_KB = 12 * 1024
RESERVE = 1 * MIB
MIN_FREE = 2 * MIB


@pytest.fixture
def settings(tmp_path: Path) -> Iterator[Settings]:
    with tmpfs(tmp_path / "disk", DISK_KB) as disk:
        yield make_settings(
            tmp_path,
            data_dir=disk,  # the database too (pgs.db in the data dir)
            api_keys=f"ops:admin:{KEY_A}",
            disk_reserve_bytes=RESERVE,
            min_free_bytes=MIN_FREE,
        )


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings), headers=auth()) as c:
        yield c


def _free(settings: Settings) -> int:
    return shutil.disk_usage(settings.data_dir).free


def _svm(rows: int) -> bytes:
    line = " ".join(f"{i}:{(i * 7919 % 1000) / 1000:.3f}" for i in range(1, 31))
    return "".join(f"{1 if r % 2 else -1} {line}\n" for r in range(rows)).encode()


def _partial_files(settings: Settings) -> list[Path]:
    """Temp files of interrupted writes: the store's and the multipart uploads'."""
    return [p for p in settings.data_dir.rglob("*") if p.name.endswith((".tmp", ".part"))]


def _fill_up(settings: Settings) -> Path:
    """What another program on the disk does: write until nothing is left."""
    filler = settings.data_dir / "someone-elses-file"
    with open(filler, "wb", buffering=0) as fh:
        block = b"\0" * 64 * 1024
        try:
            while True:
                fh.write(block[: max(_free(settings), 1)])
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    assert _free(settings) == 0
    return filler


def _ready(client: TestClient) -> Any:
    return client.get("/readyz")


def test_f4_multipart_uploads_fill_the_disk_then_507_with_nothing_stored(
    client: TestClient, settings: Settings
):
    assert (settings.data_dir / RESERVE_NAME).stat().st_size == RESERVE
    kept = client.post("/v1/datasets", files={"file": ("kept.svm", _svm(50))}).json()
    statuses = []
    for i in range(40):
        r = client.post("/v1/datasets", files={"file": (f"d{i}.svm", _svm(4000))})
        statuses.append(r.status_code)
        if r.status_code != 201:
            problem = assert_problem(r, 507)
            assert "nothing was stored" in problem["detail"] or "disk is full" in problem["detail"]
            break
    assert statuses[0] == 201 and statuses[-1] == 507, statuses
    assert _partial_files(settings) == []
    listed = client.get("/v1/datasets", params={"limit": 100}).json()["items"]
    assert len(listed) == statuses.count(201) + 1  # no row for the refused one
    stored = [p for p in settings.datasets_dir.iterdir() if p.is_dir()]
    assert len(stored) == len(listed)  # and no files without a row
    assert client.get(f"/v1/datasets/{kept['id']}").json()["sha256"] == kept["sha256"]
    # Less than PGS_MIN_FREE_BYTES: not ready, and it says why.
    assert "disk" in assert_problem(_ready(client), 503)["detail"]

    for ds in listed:
        assert client.delete(f"/v1/datasets/{ds['id']}").status_code == 204
    assert _ready(client).status_code == 200
    assert client.post("/v1/datasets", files={"file": ("again.svm", _svm(50))}).status_code == 201


def test_f5_a_tus_patch_that_fills_the_disk_keeps_nothing_and_deletes_work_at_0_bytes_free(
    client: TestClient, settings: Settings
):
    dataset = client.post("/v1/datasets", files={"file": ("d.svm", _svm(50))}).json()
    too_big = 2 * DISK_KB * 1024
    location = create(client, too_big).headers["Location"]
    free_before = _free(settings)
    problem = assert_problem(patch(client, location, 0, b"\1" * too_big), 507)
    assert "none of this PATCH's bytes were kept" in problem["detail"] and "offset 0" in problem["detail"]
    assert offset_of(client, location) == 0
    assert _free(settings) >= free_before - 64 * 1024  # the space it took is free again
    assert _partial_files(settings) == []
    assert _ready(client).status_code == 200

    # An upload takes what it can in pieces, and another program takes the rest: 0 bytes free.
    offset, piece = 0, b"\2" * 256 * 1024
    while (r := patch(client, location, offset, piece)).status_code == 204:
        offset += len(piece)
    assert_problem(r, 507)
    assert offset_of(client, location) == offset > 0
    filler = _fill_up(settings)
    assert "disk" in assert_problem(_ready(client), 503)["detail"]

    # Deletes still work: the reserve makes room for the database to commit them.
    assert client.delete(location).status_code == 204
    assert not (settings.data_dir / RESERVE_NAME).exists()
    assert client.get(location).status_code == 404
    assert _free(settings) >= offset
    assert client.delete(f"/v1/datasets/{dataset['id']}").status_code == 204
    audit = client.get("/v1/audit", params={"action": "delete"}).json()["items"]
    assert {e["resource"] for e in audit} == {"upload", "dataset"}  # recorded, too

    filler.unlink()
    client.app.state.upload_service.run_once()  # type: ignore[attr-defined]
    assert (settings.data_dir / RESERVE_NAME).stat().st_size == RESERVE  # back in place
    assert _ready(client).status_code == 200
    again = create(client, 10).headers["Location"]
    assert patch(client, again, 0, b"0123456789").status_code == 204


def test_f4_a_model_whose_files_do_not_all_fit_leaves_none(tmp_path: Path):
    """The model's arrays fit, its metadata written after them does not: no half model stays."""
    with tmpfs(tmp_path / "disk", 1024) as disk:
        store = LocalDirStore(disk)
        arrays = {"coef": np.random.default_rng(0).random(100_000)}  # 800 KB, incompressible
        meta = {"note": "x" * 400_000}
        with pytest.raises(OSError) as failed:
            save_model_files(store, meta, arrays)
        assert failed.value.errno == errno.ENOSPC
        assert [p for p in disk.rglob("*") if p.is_file()] == []
