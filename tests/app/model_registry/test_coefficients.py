"""A linear model's weights per unit of the raw columns (app/services/model_registry/coefficients.py):
raw rows scored with the raw coefficients (one-hot categories as 0/1 indicators) give the
model's own decision function, to 1e-9 relative, for every scaling kind, dense rows with a text
column and sparse rows, binary, multiclass and regression; names follow the header or the index
as the data wrote it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

from app.services.model_registry.coefficients import (
    FeatureSpace,
    OutputWeights,
    by_magnitude,
    feature_name,
    raw_weights,
    summary,
)
from app.services.solvers.estimators import EstimatorSpec
from solver import export_preprocessor, make_preprocessor

BANDS = np.array(["low", "mid", "high"])


def _dense_rows(n: int, rng: np.random.Generator) -> np.ndarray:
    """Four numeric columns on very different scales and a text column (index 2)."""
    X = np.empty((n, 5), dtype=object)
    X[:, 0] = rng.normal(50.0, 10.0, n)
    X[:, 1] = rng.normal(0.0, 1e-3, n)
    X[:, 2] = BANDS[rng.integers(0, 3, n)]
    X[:, 3] = rng.exponential(1e4, n)
    X[:, 4] = rng.normal(-3.0, 2.0, n)
    return X


def _labels(X: np.ndarray, task: str, rng: np.random.Generator) -> np.ndarray:
    signal = (X[:, 0].astype(float) - 50) / 10 + 800 * X[:, 1].astype(float) + (X[:, 2] == "low") * 1.5
    signal = signal + rng.normal(0, 0.5, len(signal))
    if task == "regression":
        return signal
    if task == "multiclass":
        return np.digitize(signal, [-0.7, 0.7]).astype(np.float64)
    return (signal > 0).astype(np.float64)


def _fitted(task: str, X: Any, y: np.ndarray, **prep: Any) -> tuple[Any, Any, dict[str, np.ndarray]]:
    ct = make_preprocessor(X.shape[1], **prep).fit(X)
    loss = "squared" if task == "regression" else "logistic"
    est = EstimatorSpec("lbfgs", task, {"loss": loss, "sigma": 1e-3, "n_iter": 300}).build()
    est.fit(ct.transform(X), y)
    _, arrays = est.export_model()
    _, prep_arrays = export_preprocessor(ct)
    return ct, est, arrays | {f"preprocessing.{k}": v for k, v in prep_arrays.items()}


def _raw_scores(X: Any, w: OutputWeights) -> np.ndarray:
    """Raw rows scored by the raw coefficients alone."""
    score = np.full(X.shape[0], w.intercept)
    for col, cat, weight in zip(w.columns, w.categories, w.weights, strict=True):
        if cat is None:
            column = X[:, [int(col)]].toarray()[:, 0] if sp.issparse(X) else X[:, col].astype(np.float64)
            score += weight * column
        else:
            score += weight * (X[:, col] == cat)
    return score


def _space(
    ct: Any, n: int, names: list[str] | None, classes: list[Any] | None, base: int = 0
) -> FeatureSpace:
    meta, _ = export_preprocessor(ct)
    return FeatureSpace(
        n_features=n, index_base=base, feature_names=names, preprocessing=meta, classes=classes
    )


@pytest.mark.parametrize("scaling", ["standard", "maxabs", "none"])
@pytest.mark.parametrize("task", ["binary", "multiclass", "regression"])
def test_raw_coefficients_give_the_models_decision_function_on_raw_rows(scaling: str, task: str):
    rng = np.random.default_rng(7)
    X = _dense_rows(400, rng)
    y = _labels(X, task, rng)
    ct, est, arrays = _fitted(task, X, y, scaling=scaling, categorical=[2])
    classes = None if task == "regression" else [str(c) for c in np.unique(y)]
    names = ["length", "tiny", "band", "huge", "shift"]
    outputs = raw_weights(arrays, _space(ct, 5, names, classes))
    assert outputs is not None
    rows = ct.transform(X)
    scores = est.predict(rows) if task == "regression" else est.decision_function(rows)
    expected = np.asarray(scores).reshape(len(X), -1)
    assert len(outputs) == expected.shape[1] == (3 if task == "multiclass" else 1)
    for k, w in enumerate(outputs):
        np.testing.assert_allclose(
            _raw_scores(X, w), expected[:, k], rtol=1e-9, atol=1e-9 * np.abs(expected).max()
        )
    # A binary classifier's one output scores its second class.
    if task == "binary":
        assert outputs[0].label == classes[1]  # type: ignore[index]
    named = {
        feature_name(_space(ct, 5, names, classes), int(c), cat)
        for c, cat in zip(outputs[0].columns, outputs[0].categories, strict=True)
    }
    assert {"length", "tiny", "huge", "shift", "band=low"} <= named


@pytest.mark.parametrize("scaling", ["standard", "maxabs"])
def test_sparse_rows_and_svmlight_names_from_the_index_base(scaling: str):
    rng = np.random.default_rng(3)
    X = sp.random(300, 40, density=0.2, format="csr", random_state=4) * 7.0
    y = (X[:, :5].sum(axis=1).A[:, 0] - X[:, 5:10].sum(axis=1).A[:, 0] + rng.normal(0, 0.3, 300) > 0).astype(
        float
    )
    ct, est, arrays = _fitted("binary", X, y, scaling=scaling, sparse=True)
    space = _space(ct, 40, None, [-1, 1], base=1)
    (w,) = raw_weights(arrays, space) or []
    np.testing.assert_allclose(
        _raw_scores(X, w), est.decision_function(ct.transform(X)), rtol=1e-9, atol=1e-12
    )
    # An svmlight file's feature "1" is column 0.
    assert feature_name(space, 0, None) == "1" and feature_name(space, 39, None) == "40"


def test_the_summary_lists_the_largest_positive_and_most_negative_first():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 30))
    y = (X[:, :3].sum(axis=1) - 2 * X[:, 3] > 0).astype(float)
    ct, _, arrays = _fitted("binary", X, y, scaling="standard")
    space = _space(ct, 30, None, ["a", "b"])
    outputs = raw_weights(arrays, space)
    assert outputs is not None
    top = summary(outputs, space, k=5)
    (out,) = top["outputs"]
    assert out["class"] == "b" and out["nonzero"] == 30 and top["top_k"] == 5
    positive = [e["model_weight"] for e in out["positive"]]
    negative = [e["model_weight"] for e in out["negative"]]
    assert len(positive) == len(negative) == 5
    assert positive == sorted(positive, reverse=True) and min(positive) > 0
    assert negative == sorted(negative) and max(negative) < 0
    assert out["negative"][0]["name"] == "3"  # column 3 (0-based data: its index as written)
    assert positive[0] == max(outputs[0].model_weights)
    # The paged order: by |model weight|.
    order = np.abs(outputs[0].model_weights[by_magnitude(outputs[0])])
    assert np.all(np.diff(order) <= 0)


def test_a_kernel_model_has_no_weights_per_feature():
    X = np.random.default_rng(0).normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(float)
    est = EstimatorSpec("kernel_pgs", "binary", {"loss": "hinge", "kernel": "rbf"}).build()
    est.fit(X, y)
    _, arrays = est.export_model()
    assert raw_weights(arrays, FeatureSpace(3, 0, None, None, [0, 1])) is None


def test_an_ignored_column_has_no_weight_and_the_others_keep_their_own_columns():
    rng = np.random.default_rng(11)
    X = _dense_rows(300, rng)
    y = _labels(X, "binary", rng)
    ct, est, arrays = _fitted("binary", X, y, scaling="standard", categorical=[2], ignore=[0])
    space = _space(ct, 5, ["length", "tiny", "band", "huge", "shift"], ["0.0", "1.0"])
    (w,) = raw_weights(arrays, space) or []
    assert 0 not in w.columns and {1, 3, 4} <= set(w.columns.tolist())
    np.testing.assert_allclose(
        _raw_scores(X, w), est.decision_function(ct.transform(X)), rtol=1e-9, atol=1e-12
    )


def test_a_model_of_2_24_sparse_features_is_read_without_a_dense_array_of_its_width():
    import tracemalloc

    width = 2**24
    cols = np.array([3, 70_000, 9_999_999, width - 2], dtype=np.int64)
    arrays = {
        "coef_rows": np.zeros(4, dtype=np.int32),
        "coef_cols": cols,
        "coef_values": np.array([0.5, -2.0, 1.5, -0.25]),
        "coef_shape": np.array([1, width]),
        "intercept": np.array([0.1]),
        "preprocessing.scale.max_abs_.indices": cols,
        "preprocessing.scale.max_abs_.values": np.array([2.0, 4.0, 0.5, 1.0]),
    }
    prep = {"format": 1, "n_features": width, "scaling": "maxabs", "impute": False,
            "categorical": [], "ignore": [7], "sparse": True}  # fmt: skip
    tracemalloc.start()
    (w,) = raw_weights(arrays, FeatureSpace(width, 1, None, prep, [0, 1])) or []
    top = summary([w], FeatureSpace(width, 1, None, prep, [0, 1]))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1_000_000  # a dense float64 array of the width would be 134 MB
    # Column 7 is ignored: the numeric features after it read the next raw column.
    by_column = dict(zip(w.columns.tolist(), w.weights.tolist(), strict=True))
    assert by_column == {3: 0.25, 70_001: -0.5, 10_000_000: 3.0, width - 1: -0.25}
    assert [e["name"] for e in top["outputs"][0]["positive"]] == ["10000001", "4"]
