"""The streamed RCV1-like set (bench/datasets.py) and bench/inverse_time_scale.py's sizes, its
generation into a service's store and its disk guard: tiny sizes, no timing."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from app.db.engine import make_engine, make_session_factory
from app.db.tables import Dataset
from app.services.datasets.shards import open_dataset
from bench.datasets import RCV1LikeStream
from bench.inverse_time_scale import DiskGuard, generated_dataset, parse_size, sigma_for


@pytest.fixture(scope="module")
def stream() -> RCV1LikeStream:
    return RCV1LikeStream(seed=0, n_features=500, nnz_per_row=20, block_rows=300)


def rows(stream: RCV1LikeStream, n: int, part: str = "train") -> tuple[sp.csr_matrix, np.ndarray]:
    blocks = list(stream.blocks(n, part))
    return sp.vstack([X for X, _ in blocks]).tocsr(), np.concatenate([y for _, y in blocks])


def test_blocks_give_the_rows_asked_for_a_block_at_a_time(stream):
    sizes = [X.shape[0] for X, _ in stream.blocks(1000)]
    assert sizes == [300, 300, 300, 100]


def test_a_smaller_set_of_whole_blocks_is_the_start_of_a_larger_one(stream):
    small, y_small = rows(stream, 600)
    large, y_large = rows(stream, 1000)
    assert (large[:600] != small).nnz == 0
    np.testing.assert_array_equal(y_large[:600], y_small)


def test_the_same_seed_draws_the_same_rows_and_the_test_part_others(stream):
    again = RCV1LikeStream(seed=0, n_features=500, nnz_per_row=20, block_rows=300)
    X, y = rows(stream, 600)
    X_again, y_again = rows(again, 600)
    assert (X != X_again).nnz == 0
    np.testing.assert_array_equal(y, y_again)
    X_test, _ = rows(stream, 600, "test")
    assert (X != X_test).nnz > 0


def test_rows_are_unit_norm_text_like_and_the_classes_balanced(stream):
    X, y = rows(stream, 3000)
    np.testing.assert_allclose(sp.linalg.norm(X, axis=1), 1.0)
    assert X.data.min() > 0
    assert set(np.unique(y)) == {-1.0, 1.0}
    assert 0.4 < (y > 0).mean() < 0.6


@pytest.mark.parametrize(
    ("text", "value"), [("1M", 10**6), ("20K", 20_000), ("2GiB", 2**31), ("100M", 10**8), ("12345", 12345)]
)
def test_sizes_are_read_with_their_units(text, value):
    assert parse_size(text) == value


def test_sigma_scales_as_one_over_m_from_the_validated_value():
    assert sigma_for(800_000) == pytest.approx(1e-8)
    assert sigma_for(4_000_000) == pytest.approx(sigma_for(1_000_000) / 4)


def test_a_generated_set_is_a_data_set_of_the_service_with_the_streams_rows(settings, client, stream):
    guard = DiskGuard(settings.data_dir, min_free=0)
    made = generated_dataset(settings, stream, 700, "train", guard)
    answer = client.get(f"/v1/datasets/{made['id']}").json()
    assert (answer["n_samples"], answer["n_features"], answer["task"]) == (700, 500, "binary")
    with make_session_factory(make_engine(settings.database_url))() as s:
        key = s.get(Dataset, made["id"]).file_name
    stored = open_dataset(settings.store, key)
    X_stored = sp.vstack([stored.shard(i)[0] for i in range(stored.manifest.n_shards)]).tocsr()
    X, y = rows(stream, 700)
    assert (X_stored != X).nnz == 0
    np.testing.assert_array_equal(np.concatenate(list(stored.labels())), y)
    assert made["stored_bytes"] == stored.manifest.nbytes


def test_the_disk_guard_stops_the_run_before_the_disk_fills(settings, stream, tmp_path):
    guard = DiskGuard(tmp_path, min_free=2**62)
    with pytest.raises(SystemExit, match="under --min-free"):
        generated_dataset(settings, stream, 700, "train", guard)
    assert not list(settings.data_dir.rglob("*.npy"))
