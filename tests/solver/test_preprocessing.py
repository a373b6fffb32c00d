"""solver.make_preprocessor: scikit-learn's transformers composed for a data set, in a Pipeline
with the solver's estimators, and stored without pickle (export, load, the same transform)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler

from solver import PGSClassifier, export_preprocessor, load_preprocessor, make_preprocessor
from solver.preprocessing import OnePassMaxAbsScaler, numeric_columns, transform_rows


def _mixed(rng: np.random.Generator, n: int = 120) -> np.ndarray:
    X = np.empty((n, 5), dtype=object)
    X[:, 0] = [f"id{i}" for i in range(n)]
    X[:, 1] = rng.normal(50, 10, n)
    X[:, 2] = rng.normal(0, 1000, n)
    X[:, 3] = rng.choice(["red", "green", "blue"], n)
    X[:, 4] = rng.normal(size=n)
    X[::9, 2] = np.nan
    return X


def test_a_mixed_table_round_trips_without_pickle():
    rng = np.random.default_rng(0)
    X = _mixed(rng)
    pre = make_preprocessor(5, categorical=[3], ignore=[0]).fit(X)
    meta, arrays = export_preprocessor(pre)
    assert meta["ignore"] == [0] and list(numeric_columns(5, meta["categorical"], meta["ignore"])) == [
        1,
        2,
        4,
    ]
    assert all(a.dtype.kind in "fU" for a in arrays.values())
    again = load_preprocessor(meta, arrays)
    np.testing.assert_array_equal(again.transform(X), pre.transform(X))
    np.testing.assert_array_equal(transform_rows(again, X), pre.transform(X))
    out = pre.transform(X)
    assert out.shape == (120, 3 + 3) and not np.isnan(out).any()
    np.testing.assert_allclose(out[:, :3].mean(axis=0), 0.0, atol=1e-12)


def test_sparse_input_stays_sparse_through_max_abs_scaling():
    X = sp.random(60, 40, density=0.05, format="csr", random_state=0)
    pre = make_preprocessor(40, scaling="maxabs", impute=False, sparse=True).fit(X)
    meta, arrays = export_preprocessor(pre)
    out = load_preprocessor(meta, arrays).transform(X)
    assert sp.issparse(out) and out.nnz == X.nnz
    assert abs(out - pre.transform(X)).max() == 0.0
    assert abs(transform_rows(pre, X) - out).max() == 0.0
    # Its scales are stored by the columns seen in training, not one per column.
    assert arrays["scale.max_abs_.indices"].size == np.count_nonzero(abs(X).max(axis=0).toarray())


def test_the_one_pass_max_abs_scaler_fits_as_scikit_learns():
    """Negative, NaN, tiny and absent values, float32 and float64, fit then partial_fit: the
    fitted attributes of MaxAbsScaler's own CSR fit, and its transform."""
    rng = np.random.default_rng(0)
    X = sp.random(200, 30, density=0.1, format="csr", random_state=1, data_rvs=rng.standard_normal)
    X.data[::17] = np.nan
    X.data[::23] *= 1e-20  # under MaxAbsScaler's "zero" scale
    X[:, 5] = -np.abs(X[:, 5].toarray())  # a column of negative values only
    X[:, 7] = 0.0  # explicit zeros only
    X[:, 9] = np.nan  # missing wherever stored
    X[:, 11] = 0.0
    X.eliminate_zeros()  # column 11 stores nothing
    for data in (X, X.astype(np.float32)):
        ours, theirs = OnePassMaxAbsScaler(), MaxAbsScaler()
        for part in (data[:120], data[120:]):
            ours.partial_fit(part)
            theirs.partial_fit(part)
            for attr in ("max_abs_", "scale_", "n_samples_seen_", "n_features_in_"):
                np.testing.assert_array_equal(getattr(ours, attr), getattr(theirs, attr))
            assert ours.max_abs_.dtype == theirs.max_abs_.dtype
        np.testing.assert_array_equal(ours.transform(data).toarray(), theirs.transform(data).toarray())
    # Dense input is MaxAbsScaler's own.
    np.testing.assert_array_equal(
        OnePassMaxAbsScaler().fit(X.toarray()).max_abs_, MaxAbsScaler().fit(X.toarray()).max_abs_
    )


@pytest.mark.slow
def test_a_wide_sparse_input_is_sliced_not_indexed_column_by_column():
    """2^24 columns: the numeric part reads a slice (a list of 2^24 indices took minutes)."""
    n = 2**24
    X = sp.csr_matrix(
        (np.array([1.0, -2.0, 3.0]), (np.array([0, 0, 1]), np.array([0, n - 1, 5]))), shape=(2, n)
    )
    pre = make_preprocessor(n, scaling="maxabs", impute=False, sparse=True).fit(X)
    meta, arrays = export_preprocessor(pre)
    assert sum(a.nbytes for a in arrays.values()) < 1000
    again = load_preprocessor(meta, arrays)
    assert abs(transform_rows(again, X) - pre.transform(X)).max() == 0.0


def test_in_a_pipeline_with_a_pgs_classifier():
    rng = np.random.default_rng(1)
    X = _mixed(rng, 300)
    y = np.where(X[:, 3] == "red", "a", "b")
    model = make_pipeline(
        make_preprocessor(5, categorical=[3], ignore=[0]),
        PGSClassifier(loss="logistic", sigma=1e-3, n_iter=3000, random_state=0),
    )
    assert model.fit(X, y).score(X, y) > 0.95


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"format": 2}, "format"),
        ({"ignore": [0, 1]}, "must be 2 finite numbers"),
    ],
)
def test_load_refuses_what_it_does_not_describe(change: dict, words: str):
    X = _mixed(np.random.default_rng(2))
    meta, arrays = export_preprocessor(make_preprocessor(5, categorical=[3], ignore=[0]).fit(X))
    with pytest.raises(ValueError, match=words):
        load_preprocessor(meta | change, arrays)
    with pytest.raises(ValueError, match="finite"):
        load_preprocessor(meta, arrays | {"scale.scale_": np.array([1.0, np.inf, 1.0])})
