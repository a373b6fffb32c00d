"""Column statistics (app/services/datasets/column_stats.py): a merge of parts equals the
statistics of all their rows, for dense rows with missing values, sparse rows of a wide set and
text columns; they round-trip through their stored form; the shard writer stores them before its
manifest, so a failed write leaves none; a data set stored without them gets them on first use.
The labels are counted too, and a request reads their counts alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.storage.local import LocalDirStore
from app.services.datasets import column_stats
from app.services.datasets.column_stats import CategoryCounts, ColumnStats, LabelCounts
from app.services.datasets.dataset_stats import dataset_stats, stored_label_counts
from app.services.datasets.shards import ShardWriter, delete_dataset, stats_key, write_dataset

NUMERIC = ("count", "missing", "mean", "m2", "min", "max")


def dense_rows(seed: int, n: int = 120, d: int = 6) -> np.ndarray:
    rng = np.random.default_rng(seed)
    # A column of large values with a small spread: a sum of squares would cancel there.
    D = rng.normal(size=(n, d)) * np.r_[1.0, 1e-3, np.ones(d - 2)] + np.r_[0.0, 1e8, np.zeros(d - 2)]
    D[rng.random(D.shape) < 0.3] = 0.0
    D[rng.random(D.shape) < 0.15] = np.nan
    D[:, -1] = np.nan  # a column of missing values only
    return D


def reference(D: np.ndarray) -> dict[str, np.ndarray]:
    """The statistics of a dense array computed directly (NaN: missing)."""
    present = ~np.isnan(D)
    count = present.sum(axis=0)
    with np.errstate(invalid="ignore"), pytest.warns(RuntimeWarning):
        mean = np.where(count > 0, np.nanmean(D, axis=0), 0.0)
        low, high = np.nanmin(D, axis=0), np.nanmax(D, axis=0)
    m2 = np.nansum((D - mean) ** 2, axis=0)
    missing = (~present).sum(axis=0)
    return {"count": count, "missing": missing, "mean": mean, "m2": m2, "min": low, "max": high}


def assert_same(a: ColumnStats, b: ColumnStats | dict[str, np.ndarray], width: int) -> None:
    a = a.dense(width)
    for name in NUMERIC:
        expected = b[name] if isinstance(b, dict) else getattr(b.dense(width), name)
        np.testing.assert_allclose(getattr(a, name), expected, rtol=1e-12, atol=1e-9, err_msg=name)


def of_blocks(X: sp.csr_matrix, cuts: list[int], text: np.ndarray | None = None) -> ColumnStats:
    bounds = [0, *sorted(cuts), X.shape[0]]
    blocks = zip(bounds, bounds[1:], strict=False)
    return ColumnStats.of_parts(
        ColumnStats.of_rows(X[a:b], None if text is None else text[a:b]) for a, b in blocks
    )


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**16), cuts=st.lists(st.integers(0, 120), max_size=6))
def test_merged_parts_of_dense_rows_with_missing_values_equal_the_whole(seed, cuts):
    D = dense_rows(seed)
    X = sp.csr_matrix(D)
    X.eliminate_zeros()  # zeros implicit, NaN stored: as the CSV parser stores them
    whole = ColumnStats.of_rows(X)
    assert whole.n_rows == 120
    assert_same(whole, reference(D), D.shape[1])
    merged = of_blocks(X, cuts)
    assert merged.n_rows == 120
    assert_same(merged, whole, D.shape[1])


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16), cuts=st.lists(st.integers(0, 300), max_size=5))
def test_merged_parts_of_sparse_rows_count_implicit_zeros_and_keep_only_their_columns(seed, cuts):
    width = 2**24
    rng = np.random.default_rng(seed)
    columns = rng.choice(width, 60, replace=False)
    narrow = sp.random(300, 60, density=0.1, format="coo", random_state=seed)
    X = sp.csr_matrix((narrow.data * 10 - 5, (narrow.row, columns[narrow.col])), shape=(300, width))
    merged = of_blocks(X, cuts)
    # Only the columns with a stored value are listed: never arrays of the set's width.
    assert np.array_equal(merged.columns, np.unique(X.indices))
    assert (merged.count == 300).all() and (merged.missing == 0).all()
    dense = X[:, merged.columns].toarray()
    # A mean near 0 is a difference of like terms: compared to the values' size, not its own.
    np.testing.assert_allclose(merged.mean, dense.mean(axis=0), rtol=1e-12, atol=1e-14 * np.abs(dense).max())
    np.testing.assert_allclose(merged.m2, ((dense - dense.mean(axis=0)) ** 2).sum(axis=0), rtol=1e-10)
    np.testing.assert_allclose(merged.max_abs, np.abs(dense).max(axis=0))
    assert (merged.min <= 0).all() and (merged.max >= 0).all()  # each column has implicit zeros


def test_text_columns_are_counted_and_capped_at_the_most_frequent(monkeypatch):
    text = np.array([["b", "x"], ["a", ""], ["b", "x"], ["c", "y"]] * 5)
    X = sp.csr_matrix((20, 3))
    stats = of_blocks(X, [3, 11], text)
    assert [t.values.tolist() for t in stats.text] == [["a", "b", "c"], ["", "x", "y"]]
    assert [t.counts.tolist() for t in stats.text] == [[5, 10, 5], [5, 10, 5]]
    assert not any(t.truncated for t in stats.text)
    monkeypatch.setattr(column_stats, "MAX_CATEGORIES", 2)
    capped = CategoryCounts.of(text[:, 0]).capped(2)
    assert capped.values.tolist() == ["a", "b"] and capped.truncated  # b, then a (ties: by value)
    assert capped.merge(CategoryCounts.of(np.array(["c"] * 9))).values.tolist() == ["b", "c"]


def test_stats_round_trip_through_their_stored_form():
    D = dense_rows(3)
    X = sp.csr_matrix(D)
    stats = ColumnStats.of_rows(X, np.array([["u"], ["v"]] * 60))
    back = ColumnStats.from_bytes(stats.to_bytes())
    assert back.n_rows == stats.n_rows and np.array_equal(back.columns, stats.columns)
    assert_same(back, stats, D.shape[1])
    assert back.text[0].values.tolist() == ["u", "v"] and back.text[0].counts.tolist() == [60, 60]


def test_the_writer_stores_the_stats_of_its_shards_and_a_failed_write_leaves_none(tmp_path: Path):
    store = LocalDirStore(tmp_path)
    D = dense_rows(5)
    X = sp.csr_matrix(D)
    text = np.array([[f"c{i % 4}"] for i in range(120)])
    manifest = write_dataset(store, "datasets/d", X, np.zeros(120), text, shard_bytes=600)
    assert manifest.n_shards > 3
    stored = dataset_stats(store, "datasets/d")
    assert_same(stored, reference(D), D.shape[1])
    assert stored.text[0].counts.tolist() == [30] * 4
    assert stats_key("datasets/d") in manifest.keys("datasets/d")
    delete_dataset(store, "datasets/d")
    assert not list(tmp_path.rglob("*.np*"))

    def refused(total: int) -> Exception:
        return OverflowError(total)

    writer = ShardWriter(store, "datasets/f", shard_bytes=600, max_bytes=10**9, over_limit=refused)
    writer.add(X, np.zeros(120), text)
    writer.abort()  # a parse that failed after its shards were written
    assert not (tmp_path / "datasets/f").exists() or not any((tmp_path / "datasets/f").iterdir())
    with pytest.raises(FileNotFoundError):
        dataset_stats(store, "datasets/f")


def test_a_data_set_stored_without_stats_gets_them_on_first_use(tmp_path: Path):
    store = LocalDirStore(tmp_path)
    X = sp.random(200, 30, density=0.2, format="csr", random_state=1)
    write_dataset(store, "datasets/old", X, np.zeros(200), shard_bytes=500)
    (tmp_path / "datasets/old/stats.npz").unlink()  # as stored before statistics were
    stats = dataset_stats(store, "datasets/old")
    assert (tmp_path / "datasets/old/stats.npz").is_file()
    assert_same(stats, ColumnStats.of_rows(X), 30)
    assert_same(dataset_stats(store, "datasets/old"), stats, 30)  # read back, not recomputed


def test_the_writer_counts_the_labels_that_a_request_reads_alone(tmp_path: Path, monkeypatch):
    store = LocalDirStore(tmp_path)
    X = sp.csr_matrix(dense_rows(7))
    y = np.array(["good"] * 100 + ["bad"] * 17 + ["odd"] * 3)[np.random.default_rng(0).permutation(120)]
    manifest = write_dataset(store, "datasets/labels", X, y, shard_bytes=600)
    assert manifest.n_shards > 3  # the counts of several shards, merged
    counts = stored_label_counts(store, "datasets/labels")
    assert counts is not None and counts.values is not None and counts.counts is not None
    assert dict(zip(counts.values.tolist(), counts.counts.tolist(), strict=True)) == {
        "bad": 17,
        "good": 100,
        "odd": 3,
    }
    whole = dataset_stats(store, "datasets/labels").labels
    assert whole is not None and whole.counts is not None and whole.counts.tolist() == [17, 100, 3]
    # A regression's labels: past MAX_LABELS distinct values none are kept, and the stored form
    # says they were counted.
    monkeypatch.setattr(column_stats, "MAX_LABELS", 50)
    many = ColumnStats.of_rows(X, y=np.arange(120.0))
    assert many.labels == LabelCounts(None, None)
    assert ColumnStats.from_bytes(many.to_bytes()).labels == LabelCounts(None, None)


def test_stats_stored_before_labels_were_counted_have_no_label_counts(tmp_path: Path):
    store = LocalDirStore(tmp_path)
    X = sp.csr_matrix(dense_rows(8))
    write_dataset(store, "datasets/older", X, np.zeros(120), shard_bytes=600)
    (tmp_path / "datasets/older/stats.npz").write_bytes(ColumnStats.of_rows(X).to_bytes())
    assert stored_label_counts(store, "datasets/older") is None
