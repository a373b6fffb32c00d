"""app/training/steps.py, the steps a worker runs: the rows a job's fit gets (evaluation split or test
set, a study's subsample, label codes) in memory or as shards, and the model it stores."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from app.core.storage.local import LocalDirStore
from app.services.datasets import column_stats
from app.services.datasets.shards import open_dataset, read_manifest, write_dataset
from app.services.datasets.splits import ShardSplit
from app.services.jobs.preprocessing import raw_matrix
from app.services.jobs.rows import RowSelection, codes_of, split
from app.services.model_registry.artifacts import load_model_files
from app.services.solvers.estimators import EstimatorSpec
from app.services.studies.phases import subsample_rows
from app.training.steps import (
    DataSpec,
    Trained,
    TrainingJob,
    final_metrics,
    load_data,
    package_model,
    store_model,
)
from solver import ShardedMatrix, export_preprocessor, load_model
from tests.helpers import assert_same_preprocessor

SHARD_BYTES = 2048  # heart_scale's 270 rows in 23 shards


@pytest.fixture
def heart(tmp_path: Path, data_dir: Path) -> tuple[LocalDirStore, sp.csr_matrix, np.ndarray]:
    """heart_scale (270 rows, labels -1/+1) in a store, as an upload leaves it."""
    X, y = load_svmlight_file(str(data_dir / "heart_scale.svm"))
    store = LocalDirStore(tmp_path)
    write_dataset(store, "datasets/heart", X, y, shard_bytes=SHARD_BYTES)
    return store, sp.csr_matrix(X), y


def _spec(**changes) -> DataSpec:
    values = {
        "train_key": "datasets/heart",
        "test_key": None,
        "test_fraction": None,
        "split_seed": 0,
        "n_features": 13,
    } | changes
    return DataSpec(**values)


def test_a_study_job_trains_on_a_subsample_of_the_training_part(heart):
    store, X, y = heart
    data = load_data(
        store, _spec(test_fraction=0.3, split_seed=5, train_size=50, subsample_seed=7), classification=True
    )
    split = ShardSplit(store_shard_rows(store), 0.3, 5)
    held_out = np.concatenate([split.held_out_mask(i) for i in range(len(split.shard_rows))])
    train, test = np.flatnonzero(~held_out), np.flatnonzero(held_out)
    assert len(test) == 81
    rows = train[subsample_rows(len(train), 50, 7)]
    assert (data.X != X[rows]).nnz == 0 and (data.X_eval != X[test]).nnz == 0
    assert list(data.classes) == [-1.0, 1.0]
    assert np.array_equal(data.classes[data.y], y[rows])
    assert np.array_equal(data.classes[data.y_eval], y[test])
    assert data.eval_set is not None and data.eval_set[0] is data.X_eval


def store_shard_rows(store: LocalDirStore) -> tuple[int, ...]:
    return read_manifest(store, "datasets/heart").shard_rows


def test_a_streaming_job_gets_the_same_rows_as_shards(heart):
    store, X, y = heart
    spec = _spec(test_fraction=0.3, split_seed=5, train_size=50, subsample_seed=7)
    whole = load_data(store, spec, classification=True)
    shards = load_data(store, spec, classification=True, stream_memory=64 * SHARD_BYTES)
    assert isinstance(shards.X, ShardedMatrix) and shards.y is None and shards.y_eval is None
    assert shards.X.n_shards == 23 and shards.X.shape == (50, 13)
    # The sampler interleaves as many shards as fit in an eighth of the memory budget.
    manifest = read_manifest(store, "datasets/heart")
    largest = max(12 * k + 16 * r for r, k in zip(manifest.shard_rows, manifest.shard_nnz, strict=True))
    assert shards.X.window == 64 * SHARD_BYTES // (8 * largest) > 1
    for streamed, in_memory, codes in (
        (shards.X, whole.X, whole.y),
        (shards.eval_set, whole.X_eval, whole.y_eval),
    ):
        pieces = list(streamed.shards())
        assert (sp.vstack([p[0] for p in pieces]) != in_memory).nnz == 0
        assert np.array_equal(np.concatenate([p[1] for p in pieces]), codes)


def test_a_study_size_of_every_row_streams_the_stored_shards_themselves(heart):
    store, X, y = heart
    spec = _spec(train_size=X.shape[0], subsample_seed=7)
    shards = load_data(store, spec, classification=True, stream_memory=64 * SHARD_BYTES)
    pieces = list(shards.X.shards())
    assert (sp.vstack([p[0] for p in pieces]) != X).nnz == 0
    # The mapped arrays, not copies through a mask of every row (16 bytes a row at 100M rows).
    assert all(_mapped(p[0].data) and _mapped(p[0].indices) for p in pieces)


def _mapped(array: np.ndarray) -> bool:
    """Whether the array's memory is a file's map (a view of an np.memmap, at any depth)."""
    base = array
    while base is not None:
        if isinstance(base, np.memmap):
            return True
        base = getattr(base, "base", None)
    return False


def test_a_streaming_job_with_text_columns_gets_each_shard_through_its_preprocessing(heart):
    store, X, y = heart
    # Column 1 (a binary feature of heart_scale) stored as text, as a CSV's text column is.
    text = np.array([["a" if v > 0 else "b"] for v in X[:, 1].toarray().ravel()])
    X_text = X.tolil()
    X_text[:, 1] = 0
    write_dataset(store, "datasets/heart-text", sp.csr_matrix(X_text), y, text, shard_bytes=SHARD_BYTES)
    prep = {"scaling": "standard", "impute": False, "categorical": [1], "ignore": [], "sparse": False}
    spec = _spec(
        train_key="datasets/heart-text", test_fraction=0.3, split_seed=5, preprocessing=prep, text_columns=[1]
    )
    whole = load_data(store, spec, classification=True)
    shards = load_data(store, spec, classification=True, stream_memory=1)
    assert isinstance(shards.X, ShardedMatrix) and shards.preprocessor is not None
    assert shards.X.window == 1
    # One-hot: the text column becomes two columns (a, b).
    assert shards.X.shape == whole.X.shape == (189, 14)
    # The same preprocessing (fitted on the statistics of all the training rows, as in memory),
    # applied to each row with its own text.
    assert_same_preprocessor(shards.preprocessor, whole.preprocessor)
    for streamed, rows in zip(
        (shards.X, shards.eval_set),
        split(open_dataset(store, "datasets/heart-text"), 13, 0.3, 5),
        strict=True,
    ):
        X_rows, _ = rows.in_memory()
        expected = shards.preprocessor.transform(raw_matrix(X_rows, rows.text(), [1], prep))
        got = sp.vstack([p[0] for p in streamed.shards()]).toarray()
        assert np.allclose(got, expected)


def test_a_test_set_is_widened_and_regression_labels_stay_numbers(heart, tmp_path: Path):
    store, X, y = heart
    write_dataset(store, "datasets/narrow", X[:20, :10], y[:20], shard_bytes=SHARD_BYTES)
    data = load_data(store, _spec(test_key="datasets/narrow"), classification=False)
    assert data.X.shape == (270, 13) and data.X_eval.shape == (20, 13)
    assert data.classes is None and data.y.dtype == data.y_eval.dtype == np.float64
    assert np.array_equal(data.y, y)
    plain = load_data(store, _spec(), classification=True)
    assert plain.eval_set is None and plain.X.shape == (270, 13)


def test_labels_become_codes_and_unseen_evaluation_labels_match_nothing():
    classes = np.array(["g", "h"])
    assert list(codes_of(classes, np.array(["h", "g", "h"]))) == [1, 0, 1]
    assert list(codes_of(classes, np.array(["g", "x", "h"]))) == [0, -1, 1]


def test_a_single_class_is_refused(tmp_path: Path):
    store = LocalDirStore(tmp_path)
    write_dataset(store, "datasets/one", sp.identity(4, format="csr"), np.ones(4), shard_bytes=SHARD_BYTES)
    with pytest.raises(ValueError, match="single class"):
        load_data(store, _spec(train_key="datasets/one", n_features=4), classification=True)


def test_the_stored_model_is_the_fitted_one(heart):
    store, X, y = heart
    job = TrainingJob(
        job_id=7,
        dataset_id=3,
        index_base=1,
        data=_spec(test_fraction=0.25),
        estimator=EstimatorSpec("pgs", "binary", {"n_iter": 500, "random_state": 0}),
        targets=[0.5],
    )
    data = load_data(store, job.data, classification=True)
    est = job.estimator.build()
    est.fit(data.X, data.y, eval_set=data.eval_set, trace=True)
    package = package_model(est, job, data)
    metrics = final_metrics(est, job, data, package, extra={"phase": "x"})
    assert metrics["test_accuracy"] == pytest.approx(np.mean(est.predict(data.X_eval) == data.y_eval))
    assert metrics["phase"] == "x" and set(metrics["time_to_target"]) == {"0.5"}

    row = store_model(store, job, Trained(est, package, metrics, progress=None))  # type: ignore[arg-type]
    assert (row.job_id, row.dataset_id, row.classes, row.n_features) == (7, 3, [-1, 1], 13)
    meta, arrays = load_model_files(store, row.file_stem)
    assert meta["service"]["classes"] == [-1, 1] and meta["service"]["job_id"] == 7
    loaded = load_model(meta["estimator"], arrays)
    assert np.array_equal(loaded.predict(data.X_eval), est.predict(data.X_eval))


# -- the preprocessing, fitted from column statistics ------------------------------------------

TEXT_PREP = {"scaling": "standard", "impute": True, "categorical": [1], "ignore": [], "sparse": False}


@pytest.fixture
def heart_text(heart) -> tuple[LocalDirStore, sp.csr_matrix, np.ndarray, np.ndarray]:
    """heart_scale with column 1 (binary) stored as text, as a CSV's text column is, and a few
    missing cells (NaN) in column 0."""
    store, X, y = heart
    text = np.array([["a" if v > 0 else "b"] for v in X[:, 1].toarray().ravel()])
    D = X.toarray()
    D[:, 1] = 0
    D[::7, 0] = np.nan
    X_text = sp.csr_matrix(D)
    write_dataset(store, "datasets/heart-text", X_text, y, text, shard_bytes=SHARD_BYTES)
    return store, X_text, y, text


def _text_spec(**changes) -> DataSpec:
    return _spec(train_key="datasets/heart-text", preprocessing=TEXT_PREP, text_columns=[1], **changes)


def _fitted_on(X: sp.csr_matrix, text: np.ndarray, prep: dict = TEXT_PREP):
    from solver import make_preprocessor

    return make_preprocessor(13, **prep).fit(raw_matrix(X, text, [1], prep))


def test_a_split_job_fits_its_preprocessing_on_the_training_rows_alone(heart_text):
    store, X, y, text = heart_text
    spec = _text_spec(test_fraction=0.3, split_seed=5)
    data = load_data(store, spec, classification=True)
    streamed = load_data(store, spec, classification=True, stream_memory=1)
    train, test = split(open_dataset(store, "datasets/heart-text"), 13, 0.3, 5)
    X_train, _ = train.in_memory()
    reference = _fitted_on(X_train, train.text())
    # No held-out row moved a mean or a scale; a streamed job gets the same, exactly.
    assert_same_preprocessor(data.preprocessor, reference)
    assert_same_preprocessor(streamed.preprocessor, reference)
    leaky = _fitted_on(X, text)
    assert not np.allclose(
        export_preprocessor(leaky)[1]["scale.mean_"], export_preprocessor(reference)[1]["scale.mean_"]
    )
    # The rows a fit gets are those scikit-learn's fit_transform gives: the same model as before.
    expected = reference.fit_transform(raw_matrix(X_train, train.text(), [1], TEXT_PREP))
    np.testing.assert_allclose(data.X, expected, rtol=1e-12, atol=1e-12)
    X_test, _ = test.in_memory()
    np.testing.assert_allclose(
        data.X_eval,
        reference.transform(raw_matrix(X_test, test.text(), [1], TEXT_PREP)),
        rtol=1e-12,
        atol=1e-12,
    )


def test_a_study_subsample_fits_its_preprocessing_on_its_own_rows(heart_text):
    store, _, _, _ = heart_text
    spec = _text_spec(test_fraction=0.3, split_seed=5, train_size=60, subsample_seed=2)
    data = load_data(store, spec, classification=True)
    train, _ = split(open_dataset(store, "datasets/heart-text"), 13, 0.3, 5)
    rows = train.subsample(subsample_rows(train.n_samples, 60, 2))
    X_rows, _ = rows.in_memory()
    assert_same_preprocessor(data.preprocessor, _fitted_on(X_rows, rows.text()))


def test_a_job_with_a_test_set_reads_no_row_for_its_preprocessing(heart_text, monkeypatch, tmp_path: Path):
    store, X, y, text = heart_text
    write_dataset(store, "datasets/heart-test", X[:30], y[:30], text[:30], shard_bytes=SHARD_BYTES)

    def no_pass(*args):
        raise AssertionError("the training rows were read for their statistics")

    monkeypatch.setattr(RowSelection, "column_stats", no_pass)
    monkeypatch.setattr(RowSelection, "categories", no_pass)
    data = load_data(store, _text_spec(test_key="datasets/heart-test"), classification=True)
    assert_same_preprocessor(data.preprocessor, _fitted_on(X, text))
    assert data.X_eval.shape == (30, 14)


def test_a_data_set_stored_before_statistics_gets_them_on_its_first_job(heart_text, tmp_path: Path):
    store, X, _, text = heart_text
    stats = tmp_path / "datasets/heart-text/stats.npz"
    stats.unlink()
    data = load_data(store, _text_spec(), classification=True)
    assert stats.is_file()
    assert_same_preprocessor(data.preprocessor, _fitted_on(X, text))


def test_a_text_column_with_more_categories_than_kept_has_them_read_from_its_rows(
    heart, monkeypatch, tmp_path: Path
):
    store, X, y = heart
    monkeypatch.setattr(column_stats, "MAX_CATEGORIES", 3)
    # Column 4 of heart_scale has many distinct values: as text, more categories than kept.
    text = np.array([[f"{v:.6f}"] for v in X[:, 4].toarray().ravel()])
    assert len(np.unique(text)) > 3
    D = X.toarray()
    D[:, 4] = 0
    write_dataset(store, "datasets/wide-text", sp.csr_matrix(D), y, text, shard_bytes=SHARD_BYTES)
    prep = {"scaling": "maxabs", "impute": False, "categorical": [4], "ignore": [], "sparse": False}
    spec = _spec(train_key="datasets/wide-text", preprocessing=prep, text_columns=[4])
    data = load_data(store, spec, classification=True)
    categories = data.preprocessor.named_transformers_["categorical"].categories_[0]
    assert list(categories) == sorted(np.unique(text))
