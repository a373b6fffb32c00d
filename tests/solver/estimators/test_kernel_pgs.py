"""KernelPGSClassifier / KernelPGSRegressor (solver.estimators.kernel_pgs): parameters, gamma, the
exported support vectors, traces, time budgets, regression."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_iris, make_circles

from solver import (
    KernelPGSClassifier,
    KernelPGSRegressor,
    PGSRegressor,
)

from ..problems import kernel_problem, saved_and_loaded


def test_gamma_scale_is_svc_s():
    X, y = kernel_problem(seed=2)
    est = KernelPGSClassifier(n_iter=10).fit(sp.csr_matrix(X), y)
    assert est.gamma_ == pytest.approx(1.0 / (X.shape[1] * X.var()), rel=1e-12)


@pytest.mark.parametrize("cls", [KernelPGSClassifier, KernelPGSRegressor])
@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_export_and_load_without_pickle(cls, kernel, as_input):
    X, y = load_iris(return_X_y=True)
    target = np.array(["setosa", "versicolor", "virginica"])[y] if cls is KernelPGSClassifier else X[:, 0]
    X = X[:, 1:] if cls is KernelPGSRegressor else X
    est = cls(kernel=kernel, sigma=1e-3, random_state=0).fit(as_input(X), target)
    meta, arrays = est.export_model()
    assert json.loads(json.dumps(meta)) == meta
    assert meta["nnz_weights"] == meta["n_support"] == est.n_support_
    assert arrays["sv_shape"].tolist() == [est.n_support_, X.shape[1]]
    loaded = saved_and_loaded(meta, arrays)
    assert type(loaded) is cls
    if cls is KernelPGSRegressor:
        np.testing.assert_allclose(loaded.predict(X), est.predict(as_input(X)), rtol=1e-12)
    else:
        np.testing.assert_array_equal(loaded.predict(X), est.predict(as_input(X)))
        np.testing.assert_allclose(loaded.predict_proba(X), est.predict_proba(as_input(X)), rtol=1e-12)
    assert hasattr(loaded, "coef_") == hasattr(est, "coef_") == (kernel == "linear")


def test_trace_counts_support_vectors_and_records_accuracy():
    X, y = make_circles(n_samples=1000, noise=0.08, factor=0.5, random_state=1)
    clf = KernelPGSClassifier(loss="hinge", sigma=1e-4, gamma=2.0, random_state=0, n_iter=4000)
    clf.fit(X[:600], y[:600], eval_set=(X[600:], y[600:]))
    trace = clf.trace_
    assert trace[0].iteration == 0 and trace[-1].iteration == 4000
    assert trace[-1].test_score == pytest.approx(clf.score(X[600:], y[600:]))
    assert trace[-1].nnz_weights == clf.n_support_
    assert trace[-1].objective < trace[0].objective
    assert [pt.nnz_weights for pt in trace] == sorted(pt.nnz_weights for pt in trace)


def test_stop_at_time_budget_keeps_a_fitted_model():
    X, y = make_circles(n_samples=3000, noise=0.08, factor=0.5, random_state=1)
    clf = KernelPGSClassifier(sigma=1e-4, random_state=0, n_iter=10**9, time_budget=0.2).fit(X, y)
    assert clf.stop_reason_ == "time_budget" and 0 < clf.n_iter_ < 10**9
    assert clf.predict(X).shape == (3000,)


def test_regressor_is_a_regressor():
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(600, 1))
    y = np.sin(2 * X[:, 0])
    reg = KernelPGSRegressor(sigma=1e-5, gamma=1.0, n_iter=30000, random_state=0).fit(X, y)
    assert reg.score(X, y) > 0.95
    assert isinstance(reg.intercept_, float) and not hasattr(reg, "coef_")
    # PGSRegressor can only fit a line
    assert PGSRegressor(sigma=1e-5, random_state=0).fit(X, y).score(X, y) < 0.5
