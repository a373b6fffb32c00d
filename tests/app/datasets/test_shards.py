"""Data sets as shards (app/services/datasets/shards.py): the stored form, the conversion of data sets
stored before shards, and the memory budget of the solvers that cannot stream."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from fastapi.testclient import TestClient
from sklearn.datasets import load_svmlight_file

from app.core.storage.local import LocalDirStore
from app.db.tables import Dataset
from app.main import create_app
from app.services.datasets.shard_migration import convert_npz_datasets
from app.services.datasets.shards import FORMAT, delete_dataset, open_dataset, write_dataset
from app.services.jobs.rows import split
from tests.helpers import assert_problem, create_job, make_settings, stored_rows, upload, wait_for


def test_shards_are_raw_npy_files_with_a_manifest(tmp_path: Path):
    store = LocalDirStore(tmp_path)
    X = sp.random(60, 7, density=0.3, format="csr", random_state=0)
    for y in (np.arange(60, dtype=float), np.array(["g", "hh"] * 30)):
        store.delete(*[f"datasets/d/{p.name}" for p in (tmp_path / "datasets/d").glob("*")])
        manifest = write_dataset(store, "datasets/d", X, y, shard_bytes=256)
        doc = json.loads((tmp_path / "datasets/d/manifest.json").read_text())
        assert doc["format"] == FORMAT and doc["n_samples"] == 60 and doc["n_features"] == 7
        assert sum(s["rows"] for s in doc["shards"]) == 60 and len(doc["shards"]) > 3
        assert doc["nnz"] == X.nnz == sum(s["nnz"] for s in doc["shards"])
        # Each array is a plain .npy, memory-mapped without pickle.
        indptr = np.load(tmp_path / "datasets/d/shard-00001.indptr.npy", mmap_mode="r", allow_pickle=False)
        assert isinstance(indptr, np.memmap) and indptr.dtype == np.int64 and indptr[0] == 0
        X2, y2 = stored_rows(store, "datasets/d")
        assert (X2 != X).nnz == 0 and np.array_equal(y2, y)
        assert manifest.n_shards == len(doc["shards"])
    with pytest.raises(TypeError, match="float or unicode"):
        write_dataset(store, "datasets/o", X, np.array([object()] * 60), shard_bytes=256)
    assert not (tmp_path / "datasets/o").exists()  # nothing left of a refused write


def test_text_columns_are_stored_per_shard_and_read_with_the_selected_rows(tmp_path: Path):
    store = LocalDirStore(tmp_path)
    # Column 0 numbers the rows, so a selection's rows name the text they must carry.
    X = sp.csr_matrix(np.column_stack([np.arange(50) + 1.0, np.ones((50, 3))]))
    text = np.array([[f"c{i % 3}", "x" * (i % 5)] for i in range(50)])
    manifest = write_dataset(store, "datasets/t", X, np.zeros(50), text, shard_bytes=512)
    assert manifest.n_shards > 3 and manifest.text_columns == 2
    assert json.loads((tmp_path / "datasets/t/manifest.json").read_text())["text"] == 2
    assert (tmp_path / "datasets/t/shard-00001.text.npy").is_file()
    data = open_dataset(store, "datasets/t")
    assert np.array_equal(np.concatenate([data.text(i) for i in range(manifest.n_shards)]), text)
    for rows in split(data, 4, 0.3, seed=2):
        X_rows, _ = rows.in_memory()
        numbers = X_rows[:, 0].toarray().ravel().astype(int) - 1
        assert len(numbers) == rows.n_samples and np.array_equal(rows.text(), text[numbers])
    # Deleting the data set removes its text shards too.
    delete_dataset(store, "datasets/t")
    assert not (tmp_path / "datasets/t").exists()


def _old_npz_dataset(client: TestClient, data_dir: Path, data: Path, **extra: np.ndarray) -> tuple[int, str]:
    """heart_scale stored as the service stored data sets before shards: one .npz (with a
    CSV's ``text`` array among ``extra``)."""
    X, y = load_svmlight_file(str(data))
    key = f"datasets/{uuid.uuid4().hex}.npz"
    with open(data_dir / key, "wb") as fh:
        np.savez(
            fh,
            data=X.data,
            indices=X.indices,
            indptr=X.indptr,
            shape=np.asarray(X.shape, dtype=np.int64),
            y=y,
            **extra,
        )
    with client.app.state.session_factory() as s:  # type: ignore[attr-defined]
        row = Dataset(
            name="old",
            format="svmlight",
            compressed=False,
            file_name=key,
            n_samples=X.shape[0],
            n_features=X.shape[1],
            nnz=X.nnz,
            task="binary",
            classes=[-1, 1],
            label_kind="numeric",
            index_base=1,
            sha256="0" * 64,
            size_bytes=data.stat().st_size,
        )
        s.add(row)
        s.commit()
        return row.id, key


@pytest.mark.slow
def test_an_old_npz_data_set_is_converted_at_start_and_trains(tmp_path: Path, data_dir: Path):
    settings = make_settings(tmp_path, shard_bytes=4096)
    with TestClient(create_app(settings)) as c:
        dataset_id, old_key = _old_npz_dataset(c, settings.data_dir, data_dir / "heart_scale.svm")
        # Until converted, the old key is read as it is.
        X_old, y_old = stored_rows(settings.store, old_key)
        assert X_old.shape == (270, 13)
    with TestClient(create_app(settings)) as c:
        with c.app.state.session_factory() as s:  # type: ignore[attr-defined]
            row = s.get(Dataset, dataset_id)
            assert row.file_name == old_key.removesuffix(".npz") and row.stored_bytes > 0
        assert not (settings.data_dir / old_key).exists()
        assert open_dataset(settings.store, row.file_name).manifest.n_shards > 5
        X, y = stored_rows(settings.store, row.file_name)
        assert (X != X_old).nnz == 0 and np.array_equal(y, y_old)
        # Done once: a second run finds nothing to convert.
        assert convert_npz_datasets(c.app.state.session_factory, settings.store, 4096) == 0  # type: ignore[attr-defined]
        job = wait_for(
            c,
            create_job(
                c,
                dataset_id=dataset_id,
                solver="pgs",
                test_fraction=0.25,
                params={"n_iter": 3000, "random_state": 0},
            ).json()["id"],
        )
        assert job["status"] == "succeeded", job
        assert job["metrics"]["test_accuracy"] > 0.7


def test_an_old_npz_data_set_keeps_its_text_columns_when_converted(tmp_path: Path, data_dir: Path):
    settings = make_settings(tmp_path, shard_bytes=4096)
    text = np.array([[f"v{i % 4}"] for i in range(270)])
    with TestClient(create_app(settings)) as c:
        dataset_id, _ = _old_npz_dataset(c, settings.data_dir, data_dir / "heart_scale.svm", text=text)
    with TestClient(create_app(settings)) as c:
        with c.app.state.session_factory() as s:  # type: ignore[attr-defined]
            key = s.get(Dataset, dataset_id).file_name
        data = open_dataset(settings.store, key)
        assert data.manifest.n_shards > 1 and data.manifest.text_columns == 1
        stored = np.concatenate([data.text(i) for i in range(data.manifest.n_shards)])
        assert np.array_equal(stored, text)


@pytest.mark.slow
def test_a_solver_that_cannot_stream_is_refused_past_the_memory_budget(tmp_path: Path, data_dir: Path):
    # heart_scale takes 44,864 bytes as a CSR matrix (one shard): over a 40,000-byte budget.
    settings = make_settings(tmp_path, worker_memory_bytes=40_000)
    with TestClient(create_app(settings)) as c:
        dataset_id = upload(c, data_dir / "heart_scale.svm").json()["id"]
        body = assert_problem(create_job(c, dataset_id=dataset_id, solver="lbfgs"), 422, "body.solver")
        detail = body["detail"]
        assert "dataset 1 takes 0.0 MiB (44864 bytes)" in detail
        assert "40000 bytes, PGS_WORKER_MEMORY_BYTES" in detail
        assert "pgs" in detail and "sgd" in detail and "'lbfgs'" in detail
        # A solver that streams takes it.
        assert create_job(c, dataset_id=dataset_id, solver="pgs").status_code == 202
