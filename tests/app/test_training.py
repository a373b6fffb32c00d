"""app/training.py, the steps a worker runs: the rows a job's fit gets (evaluation split or test
set, a study's subsample, label codes), and the model it stores."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from app.core.store import LocalDirStore
from app.services.datasets import csr_writer, split_indices
from app.services.model_store import load_model_files
from app.services.study_phases import subsample_rows
from app.solvers import EstimatorSpec
from app.training import (
    DataSpec,
    Trained,
    TrainingJob,
    encode_labels,
    final_metrics,
    load_data,
    package_model,
    store_model,
)
from solver import load_model


@pytest.fixture
def heart(tmp_path: Path, data_dir: Path) -> tuple[LocalDirStore, sp.csr_matrix, np.ndarray]:
    """heart_scale (270 rows, labels -1/+1) in a store, as an upload leaves it."""
    X, y = load_svmlight_file(str(data_dir / "heart_scale.svm"))
    store = LocalDirStore(tmp_path)
    store.write("datasets/heart.npz", csr_writer(X, y))
    return store, sp.csr_matrix(X), y


def _spec(**changes) -> DataSpec:
    values = {"train_key": "datasets/heart.npz", "test_key": None, "test_fraction": None,
              "split_seed": 0, "n_features": 13} | changes
    return DataSpec(**values)


def test_a_study_job_trains_on_a_subsample_of_the_training_part(heart):
    store, X, y = heart
    data = load_data(store, _spec(test_fraction=0.3, split_seed=5, train_size=50,
                                  subsample_seed=7), classification=True)
    train, test = split_indices(270, 0.3, 5)
    rows = train[subsample_rows(len(train), 50, 7)]
    assert (data.X != X[rows]).nnz == 0 and (data.X_eval != X[test]).nnz == 0
    assert list(data.classes) == [-1.0, 1.0]
    assert np.array_equal(data.classes[data.y], y[rows])
    assert np.array_equal(data.classes[data.y_eval], y[test])
    assert data.eval_set is not None and data.eval_set[0] is data.X_eval


def test_a_test_set_is_widened_and_regression_labels_stay_numbers(heart, tmp_path: Path):
    store, X, y = heart
    store.write("datasets/narrow.npz", csr_writer(X[:20, :10], y[:20]))
    data = load_data(store, _spec(test_key="datasets/narrow.npz"), classification=False)
    assert data.X.shape == (270, 13) and data.X_eval.shape == (20, 13)
    assert data.classes is None and data.y.dtype == data.y_eval.dtype == np.float64
    assert np.array_equal(data.y, y)
    plain = load_data(store, _spec(), classification=True)
    assert plain.eval_set is None and plain.X.shape == (270, 13)


def test_labels_become_codes_and_unseen_evaluation_labels_match_nothing():
    classes, codes, eval_codes = encode_labels(np.array(["h", "g", "h"]), np.array(["g", "x", "h"]))
    assert list(classes) == ["g", "h"] and list(codes) == [1, 0, 1]
    assert list(eval_codes) == [0, -1, 1]


def test_a_single_class_is_refused(tmp_path: Path):
    store = LocalDirStore(tmp_path)
    store.write("datasets/one.npz", csr_writer(sp.identity(4, format="csr"), np.ones(4)))
    with pytest.raises(ValueError, match="single class"):
        load_data(store, _spec(train_key="datasets/one.npz", n_features=4), classification=True)


def test_the_stored_model_is_the_fitted_one(heart):
    store, X, y = heart
    job = TrainingJob(job_id=7, dataset_id=3, index_base=1, data=_spec(test_fraction=0.25),
                      estimator=EstimatorSpec("pgs", "binary", {"n_iter": 500, "random_state": 0}),
                      targets=[0.5])
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
