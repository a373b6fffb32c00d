"""Backup and restore of a running installation (``python -m app backup`` / ``restore``), on real
server processes: a backup taken while a job runs, an upload is half received and another data
set is being uploaded comes back on a fresh data dir with every data set, model, alias, batch
result and prediction identical; a restore refuses a target that is not fresh, and a backup
whose bytes were altered is refused by its checksums, leaving nothing behind."""

from __future__ import annotations

import base64
import hashlib
import sqlite3
import subprocess
import sys
import tarfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from app.backup.archive import BackupError
from app.backup.restore import restore
from app.core.config import Settings
from app.core.storage.local import LocalDirStore
from app.services.datasets.shards import open_dataset
from tests.cluster.harness import REPO, ApiServer, _env, poll_job, running_service, tiny_svmlight, wait_until

# Real server processes: left out of make test-fast (CONTRIBUTING.md).
pytestmark = pytest.mark.system

TUS = {"Tus-Resumable": "1.0.0"}
LONG = {"loss": "logistic", "sigma": 1e-4, "n_iter": 10**9, "random_state": 0}
SVM_ROWS = [[0.5 * (i % 3) - 0.4 * (i % 5) for i in range(20)], [0.1 * i for i in range(20)]]
CSV_ROWS = [{"color": "red", "x1": 1.5, "x2": -0.2}, {"color": "blue", "x1": -0.3, "x2": 2.0}]


def _csv(n: int = 90, seed: int = 1) -> bytes:
    """A CSV with a text column (one-hot encoded by the job's preprocessing) and string labels."""
    rng = np.random.default_rng(seed)
    lines = ["color,x1,x2,label"]
    for _ in range(n):
        color = rng.choice(["red", "green", "blue"])
        x1, x2 = rng.normal(size=2)
        label = "yes" if x1 + (color == "red") - 0.5 * x2 > 0.3 else "no"
        lines.append(f"{color},{x1:.3f},{x2:.3f},{label}")
    return ("\n".join(lines) + "\n").encode()


@dataclass
class Installation:
    """What the original service held when the backup was taken, as its API answered."""

    root: Path
    backup: Path
    datasets: dict[int, dict[str, Any]]
    models: dict[int, dict[str, Any]]
    exports: dict[int, Any]
    alias: dict[str, Any]
    alias_history: dict[str, Any]
    batch: dict[str, Any]
    batch_csv: str
    predictions: dict[int, Any]
    upload_location: str
    upload_bytes: bytes
    upload_offset: int
    running_job: int


def _dataset(c: httpx.Client, name: str, content: bytes) -> dict[str, Any]:
    r = c.post("/v1/datasets", files={"file": (name, content)}, data={"name": name})
    assert r.status_code == 201, r.text
    return dict(r.json())


def _train(c: httpx.Client, dataset_id: int, model_name: str) -> int:
    body = {
        "dataset_id": dataset_id,
        "params": {"loss": "logistic", "sigma": 1e-3, "n_iter": 5000, "random_state": 0},
        "model_name": model_name,
    }
    job = poll_job(c, c.post("/v1/jobs", json=body).json()["id"])
    assert job["status"] == "succeeded", job
    return int(job["model_id"])


def _predict(c: httpx.Client, model_id: int, rows: list[Any]) -> Any:
    r = c.post(f"/v1/models/{model_id}/predict", json={"instances": rows})
    assert r.status_code == 200, r.text
    return r.json()


def _run(*args: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    """``python -m app ARGS`` with the environment the service of ``data_dir`` has."""
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        cwd=REPO,
        env=_env({"PGS_DATA_DIR": str(data_dir), "PGS_LOG_LEVEL": "warning"}),
        capture_output=True,
        text=True,
        timeout=120,
    )


def _upload_during(base: str) -> None:
    with httpx.Client(base_url=base, timeout=60) as c:
        _dataset(c, "during", _csv(3000, 2))


@pytest.fixture(scope="module")
def installation(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installation]:
    root = tmp_path_factory.mktemp("original")
    dest = root / "backup.tar"
    with running_service(root) as server, server.client() as c:
        svm = _dataset(c, "svm", tiny_svmlight(400, 20))
        csv = _dataset(c, "patients.csv", _csv())
        assert csv["text_columns"] == [0]
        svm_model, csv_model = _train(c, svm["id"], "svm-clf"), _train(c, csv["id"], "csv-clf")
        alias = c.put("/v1/aliases/svm-clf@production", json={"model_id": svm_model}).json()
        batch_id = c.post("/v1/models/svm-clf@production/predictions", json={"dataset_id": svm["id"]}).json()[
            "id"
        ]
        batch_path = f"/v1/models/{svm_model}/predictions/{batch_id}"
        batch = wait_until(
            lambda: (b := c.get(batch_path).json())["status"] == "succeeded" and b, 60, "batch prediction"
        )
        # In progress while the backup runs: a job, an upload half received, a data set upload.
        running_job = c.post("/v1/jobs", json={"dataset_id": svm["id"], "params": LONG}).json()["id"]
        poll_job(c, running_job, lambda j: j["status"] == "running")
        upload_bytes = tiny_svmlight(300, 20, seed=7)
        r = c.post(
            "/v1/uploads",
            headers={
                **TUS,
                "Upload-Length": str(len(upload_bytes)),
                "Upload-Metadata": "filename " + base64.b64encode(b"late.svm").decode(),
            },
        )
        location, half = r.headers["Location"], len(upload_bytes) // 2
        r = c.patch(
            location,
            content=upload_bytes[:half],
            headers={**TUS, "Upload-Offset": "0", "Content-Type": "application/offset+octet-stream"},
        )
        assert r.status_code == 204, r.text
        recorded = Installation(
            root=root,
            backup=dest,
            datasets={d["id"]: c.get(f"/v1/datasets/{d['id']}").json() for d in (svm, csv)},
            models={m: c.get(f"/v1/models/{m}").json() for m in (svm_model, csv_model)},
            exports={m: c.get(f"/v1/models/{m}/export?format=json").json() for m in (svm_model, csv_model)},
            alias=alias,
            alias_history=c.get("/v1/aliases/svm-clf@production/history").json(),
            batch=batch,
            batch_csv=c.get(f"{batch_path}/result?format=csv").text,
            predictions={
                svm_model: _predict(c, svm_model, SVM_ROWS),
                csv_model: _predict(c, csv_model, CSV_ROWS),
            },
            upload_location=location,
            upload_bytes=upload_bytes,
            upload_offset=half,
            running_job=running_job,
        )
        concurrent = threading.Thread(target=_upload_during, args=(server.base,))
        concurrent.start()
        done = _run("backup", str(dest), data_dir=root / "var")
        concurrent.join()
        assert done.returncode == 0, done.stderr
        assert poll_job(c, running_job, lambda j: True)["status"] == "running", (
            "the job ran through the backup"
        )
        c.post(f"/v1/jobs/{running_job}/cancel")
    yield recorded


def _rows(data_dir: Path, dataset_id: int) -> tuple[Any, ...]:
    with sqlite3.connect(data_dir / "pgs.db") as conn:
        (key,) = conn.execute("SELECT file_name FROM datasets WHERE id = ?", (dataset_id,)).fetchone()
    stored = open_dataset(LocalDirStore(data_dir), key)
    shards = range(stored.manifest.n_shards)
    return tuple(
        np.concatenate(parts) if parts and parts[0] is not None else parts
        for parts in (
            [stored.shard(i)[0].toarray() for i in shards],
            [stored.shard(i)[1] for i in shards],
            [stored.text(i) for i in shards],
        )
    )


def test_a_backup_taken_while_the_service_works_restores_everything_identical(
    installation: Installation, tmp_path: Path
):
    inst = installation
    target = tmp_path / "var"
    done = _run("restore", str(inst.backup), data_dir=target)
    assert done.returncode == 0, done.stderr
    server = ApiServer(target, tmp_path / "server.log", PGS_WORKERS="1").start()
    try:
        with server.client() as c:
            listed = {d["id"]: d for d in c.get("/v1/datasets").json()["items"]}
            for ds_id, ds in inst.datasets.items():
                assert c.get(f"/v1/datasets/{ds_id}").json() == ds
                for original, restored in zip(
                    _rows(inst.root / "var", ds_id), _rows(target, ds_id), strict=True
                ):
                    np.testing.assert_array_equal(original, restored)
            for ds_id in set(listed) - set(inst.datasets):  # the one uploaded during the backup, if in
                assert listed[ds_id]["name"] == "during" and _rows(target, ds_id)[0].shape[0] == 3000
            for model_id, model in inst.models.items():
                assert c.get(f"/v1/models/{model_id}").json() == model
                assert c.get(f"/v1/models/{model_id}/export?format=json").json() == inst.exports[model_id]
                assert (
                    _predict(c, model_id, SVM_ROWS if model["name"] == "svm-clf" else CSV_ROWS)
                    == (inst.predictions[model_id])
                )
            assert c.get("/v1/aliases/svm-clf@production").json() == inst.alias
            assert c.get("/v1/aliases/svm-clf@production/history").json() == inst.alias_history
            batch_path = f"/v1/models/{inst.batch['model_id']}/predictions/{inst.batch['id']}"
            assert c.get(batch_path).json() == inst.batch
            assert c.get(f"{batch_path}/result?format=csv").text == inst.batch_csv
            assert _predict(c, inst.alias["model_id"], SVM_ROWS) == inst.predictions[inst.alias["model_id"]]
            # The job that was running at the snapshot was taken for lost by the start-up
            # recovery (and queued again); it is not needed here.
            assert c.post(f"/v1/jobs/{inst.running_job}/cancel").status_code in (200, 202)
            # The half-received upload resumes where the backup saw it, and completes.
            head = c.head(inst.upload_location, headers=TUS)
            assert int(head.headers["Upload-Offset"]) == inst.upload_offset
            rest = inst.upload_bytes[inst.upload_offset :]
            r = c.patch(
                inst.upload_location,
                content=rest,
                headers={
                    **TUS,
                    "Upload-Offset": str(inst.upload_offset),
                    "Content-Type": "application/offset+octet-stream",
                },
            )
            assert r.status_code == 204, r.text
            assert c.post(f"{inst.upload_location}/dataset", json={}).status_code == 202
            upload = wait_until(
                lambda: (u := c.get(inst.upload_location).json())["state"] in ("done", "failed") and u,
                60,
                "the resumed upload's data set",
            )
            assert upload["state"] == "done", upload
            late = c.get(f"/v1/datasets/{upload['dataset_id']}").json()
            assert late["sha256"] == hashlib.sha256(inst.upload_bytes).hexdigest()
    finally:
        server.stop()
    server.assert_clean_log()


def _target(root: Path) -> Settings:
    return Settings(data_dir=root / "var")


def test_a_restore_into_a_target_that_is_not_fresh_is_refused(installation: Installation, tmp_path: Path):
    restore(_target(tmp_path), installation.backup)
    with pytest.raises(BackupError, match="not a fresh installation"):
        restore(_target(tmp_path), installation.backup)
    done = _run("restore", str(installation.backup), data_dir=tmp_path / "var")
    assert done.returncode == 1 and "not a fresh installation" in done.stderr
    restore(_target(tmp_path), installation.backup, force=True)  # what --force is for


def test_a_corrupted_file_in_the_backup_is_detected_and_nothing_is_restored(
    installation: Installation, tmp_path: Path
):
    corrupted = tmp_path / "corrupted.tar"
    corrupted.write_bytes(installation.backup.read_bytes())
    with tarfile.open(corrupted) as tar:
        member = next(m for m in tar.getmembers() if m.name.startswith("store/models/") and m.size > 100)
    with open(corrupted, "r+b") as fh:  # one byte of the model's data, in place
        fh.seek(member.offset_data + member.size // 2)
        byte = fh.read(1)
        fh.seek(-1, 1)
        fh.write(bytes([byte[0] ^ 0xFF]))
    target = _target(tmp_path)
    with pytest.raises(BackupError, match=f"{member.name} in the backup is corrupted"):
        restore(target, corrupted)
    leftovers = [p for p in target.data_dir.rglob("*") if p.is_file() and p.name != "server.lock"]
    assert leftovers == [], leftovers
