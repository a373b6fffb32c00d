"""PGSClassifier / PGSRegressor: scikit-learn conformance, validation, input kinds, stopping."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_iris, make_classification, make_regression
from sklearn.utils.estimator_checks import parametrize_with_checks

from solver import SOLVERS, PGSClassifier, PGSRegressor, load_model
from solver.losses import LOSSES
from solver.tracing import time_to_target


@parametrize_with_checks([PGSClassifier(), PGSRegressor(), PGSClassifier(p=1.5, loss="hinge")])
def test_sklearn_conformance(estimator, check):
    check(estimator)


def _binary(seed=0, n=300):
    X, y = make_classification(n_samples=n, n_features=8, random_state=seed)
    return X, y


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"p": 2.5}, ["'p'", "[1.01, 2.0]", "2.5"]),
        ({"p": 1.005}, ["'p'", "[1.01, 2.0]", "1.005"]),
        ({"sigma": 0.0}, ["'sigma'", "(0.0, inf)", "0.0"]),
        ({"sigma": -1.0}, ["'sigma'", "-1.0"]),
        ({"batch_size": 0}, ["'batch_size'", "[1, inf)", "0"]),
        ({"loss": "cauchy"}, ["'loss'", "logistic", "cauchy"]),
        ({"output": "best"}, ["'output'", "average", "best"]),
        ({"radius": -2.0}, ["'radius'", "-2.0"]),
        ({"t0": 0.5}, ["'t0'", "0.5"]),
        ({"intercept_scaling": 0.0}, ["'intercept_scaling'", "(0.0, inf)", "auto", "0.0"]),
        ({"average_power": -1.0}, ["'average_power'", "[0.0, inf)", "-1.0"]),
        ({"target_score": float("nan")}, ["'target_score'", "nan"]),
    ],
)
def test_bad_parameters_name_parameter_range_and_value(params, words):
    X, y = _binary()
    with pytest.raises(ValueError) as info:
        PGSClassifier(**params).fit(X, y)
    for word in words:
        assert word in str(info.value)


def test_regressor_rejects_classification_losses():
    X, y = make_regression(n_samples=50, n_features=3, random_state=0)
    with pytest.raises(ValueError, match="'loss' parameter of PGSRegressor.*'squared'.*Got 'logistic'"):
        PGSRegressor(loss="logistic").fit(X, y)


@pytest.mark.parametrize(
    ("X_change", "y_change", "match"),
    [
        (lambda X: np.where(X > 1.5, np.nan, X), None, "Input X contains NaN"),
        (lambda X: np.where(X > 1.5, np.inf, X), None, "Input X contains infinity"),
        (None, lambda y: np.where(np.arange(y.size) == 3, np.nan, y), "Input y contains NaN"),
        (lambda X: X[:-1], None, "inconsistent numbers of samples"),
        (None, lambda y: np.zeros_like(y), "at least 2 classes.*got 1 class"),
    ],
)
def test_bad_data_gets_clear_errors(X_change, y_change, match, as_input):
    X, y = _binary()
    y = y.astype(float)
    X = X_change(X) if X_change else X
    y = y_change(y) if y_change else y
    with pytest.raises(ValueError, match=match):
        PGSClassifier().fit(as_input(X) if np.isfinite(X).all() else X, y)


@pytest.mark.parametrize("p", [1.3, 2.0])
@pytest.mark.parametrize("output", ["average", "last", "random"])
def test_dense_and_sparse_give_the_same_model(p, output):
    X, y = _binary(seed=1)
    X[np.abs(X) < 0.5] = 0.0
    params = dict(p=p, output=output, random_state=3, sigma=1e-3)
    dense = PGSClassifier(**params).fit(X, y)
    sparse = PGSClassifier(**params).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(dense.coef_, sparse.coef_, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(dense.intercept_, sparse.intercept_, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("p", [1.3, 2.0])
def test_float32_input_gives_the_model_of_the_same_values_in_float64(as_input, p):
    """The kernels compute in float64 whatever the input's type; so must the set-up (intercept
    scaling and t0 from E||x||^2 once drifted by 1e-7 when summed in float32)."""
    X, y = _binary(seed=1)
    X[np.abs(X) < 0.5] = 0.0
    X32 = X.astype(np.float32)
    params = dict(p=p, random_state=3, sigma=1e-3)
    single = PGSClassifier(**params).fit(as_input(X32), y)
    double = PGSClassifier(**params).fit(X32.astype(np.float64), y)
    assert single.intercept_scaling_ == pytest.approx(double.intercept_scaling_, rel=1e-14)
    assert single.t0_ == pytest.approx(double.t0_, rel=1e-14)
    np.testing.assert_allclose(single.coef_, double.coef_, rtol=1e-10, atol=1e-13)


def test_features_whose_squares_overflow_get_a_clear_error():
    X, y = _binary()
    with pytest.raises(ValueError, match="too large.*Scale the features"):
        PGSClassifier().fit(X * 1e160, y)


def test_same_random_state_same_model_and_different_seeds_differ():
    X, y = _binary()
    a = PGSClassifier(random_state=7).fit(X, y).coef_
    b = PGSClassifier(random_state=7).fit(X, y).coef_
    c = PGSClassifier(random_state=8).fit(X, y).coef_
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


def test_labels_of_any_two_values():
    X, y = _binary()
    labels = np.where(y == 1, "spam", "ham")
    clf = PGSClassifier(random_state=0).fit(X, labels)
    assert set(clf.predict(X)) <= {"spam", "ham"}
    assert clf.classes_.tolist() == ["ham", "spam"]
    assert clf.score(X, labels) > 0.8


def test_multiclass_one_vs_rest(as_input):
    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    clf = PGSClassifier(sigma=1e-3, n_iter=20000, random_state=0).fit(as_input(X), y)
    assert clf.coef_.shape == (3, 4) and clf.intercept_.shape == (3,)
    assert clf.decision_function(as_input(X)).shape == (150, 3)
    proba = clf.predict_proba(as_input(X))
    np.testing.assert_allclose(proba.sum(1), 1.0)
    np.testing.assert_array_equal(proba.argmax(1), clf.predict(as_input(X)))
    assert clf.score(as_input(X), y) > 0.85


@pytest.mark.parametrize("loss", ["hinge", "squared", "squared_hinge", "smooth_hinge"])
def test_predict_proba_only_for_logistic(loss):
    X, y = _binary()
    clf = PGSClassifier(loss=loss, random_state=0).fit(X, y)
    assert not hasattr(clf, "predict_proba")
    with pytest.raises(AttributeError) as info:
        clf.predict_proba(X)
    assert "need loss='logistic'" in str(info.value.__cause__)
    assert clf.score(X, y) > 0.8


@pytest.mark.parametrize(
    ("cls", "params", "eval_change", "match"),
    [
        (PGSClassifier, {"target_score": 0.9}, None, "'target_score'.*needs eval_set"),
        (PGSClassifier, {"target_score": 85}, lambda X, y: (X, y), "test accuracy, in \\[0, 1\\]"),
        (PGSClassifier, {}, lambda X, y: (X * np.nan, y), "eval_set X: Input contains NaN"),
        (PGSClassifier, {}, lambda X, y: (X, np.where(y > 0, "a", "b")), "eval_set y has labels"),
        (PGSRegressor, {}, lambda X, y: (X, y * np.nan), "eval_set y contains NaN"),
        (PGSRegressor, {"target_score": -1.0}, lambda X, y: (X, y), "test RMSE, >= 0"),
    ],
)
def test_evaluation_data_and_target_score_get_clear_errors(cls, params, eval_change, match):
    """A target that can never be checked, or evaluation data that cannot be scored, is refused
    before the fit instead of running to the end (or scoring 0 at every checkpoint)."""
    X, y = _binary()
    eval_set = eval_change(X, y) if eval_change else None
    with pytest.raises(ValueError, match=match):
        cls(**params).fit(X, y, eval_set=eval_set)


def test_squared_loss_classifier_predicts_by_sign():
    X, y = _binary()
    clf = PGSClassifier(loss="squared", sigma=1e-3, random_state=0).fit(X, y)
    scores = clf.decision_function(X)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[(scores > 0).astype(int)])


def test_regressor_learns_a_linear_function(as_input):
    X, y, w = make_regression(n_samples=400, n_features=5, noise=0.1, coef=True, random_state=0)
    y = y / np.std(y)
    reg = PGSRegressor(sigma=1e-6, n_iter=40000, random_state=0).fit(as_input(X), y)
    assert reg.score(as_input(X), y) > 0.99
    huber = PGSRegressor(loss="huber", sigma=1e-6, n_iter=40000, random_state=0).fit(X, y)
    assert huber.score(X, y) > 0.95


def test_export_and_load_without_pickle():
    X, y = load_iris(return_X_y=True)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    clf = PGSClassifier(sigma=1e-3, random_state=0).fit(X, names)
    meta, arrays = clf.export_model()
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    buffer.seek(0)
    with np.load(buffer, allow_pickle=False) as stored:
        loaded = load_model(meta, dict(stored))
    np.testing.assert_array_equal(loaded.predict(X), clf.predict(X))
    np.testing.assert_allclose(loaded.predict_proba(X), clf.predict_proba(X))
    import json

    assert json.loads(json.dumps(meta)) == meta

    reg = PGSRegressor(random_state=0).fit(X, y.astype(float))
    loaded = load_model(*reg.export_model())
    np.testing.assert_allclose(loaded.predict(X), reg.predict(X))


def test_trace_records_checkpoints_and_time_to_target():
    X, y = _binary(n=2000)
    clf = PGSClassifier(sigma=1e-4, random_state=0, n_iter=50000)
    clf.fit(X[:1500], y[:1500], eval_set=(X[1500:], y[1500:]))
    trace = clf.trace_
    assert trace[0].iteration == 0 and trace[-1].iteration == clf.n_iter_ == 50000
    assert all(a.iteration < b.iteration for a, b in zip(trace, trace[1:], strict=False))
    assert all(a.solver_seconds <= b.solver_seconds for a, b in zip(trace, trace[1:], strict=False))
    assert all(pt.score_name == "accuracy" and 0 <= pt.test_score <= 1 for pt in trace)
    assert trace[-1].test_score == pytest.approx(clf.score(X[1500:], y[1500:]))
    assert trace[-1].objective < trace[0].objective
    reached = time_to_target(trace, [0.5, 1.01], higher_is_better=True)
    assert reached[1.01] is None
    assert reached[0.5] == next(pt.solver_seconds for pt in trace if pt.test_score >= 0.5)


def test_trace_without_eval_set_only_on_request():
    X, y = _binary()
    assert PGSClassifier(random_state=0).fit(X, y).trace_ == []
    trace = PGSClassifier(random_state=0).fit(X, y, trace=True).trace_
    assert trace and all(pt.test_score is None for pt in trace)


def test_regression_trace_is_rmse():
    X, y = make_regression(n_samples=500, n_features=4, noise=1.0, random_state=0)
    y = y / y.std()
    reg = PGSRegressor(random_state=0, target_score=0.3)
    reg.fit(X[:400], y[:400], eval_set=(X[400:], y[400:]))
    assert reg.trace_[-1].score_name == "rmse"
    assert reg.stop_reason_ == "target_score" and reg.trace_[-1].test_score <= 0.3


def test_stop_at_target_score():
    X, y = _binary(n=3000)
    clf = PGSClassifier(random_state=0, n_iter=10**6, target_score=0.8)
    clf.fit(X[:2000], y[:2000], eval_set=(X[2000:], y[2000:]))
    assert clf.stop_reason_ == "target_score"
    assert clf.n_iter_ < 10**6
    assert clf.trace_[-1].test_score >= 0.8


def test_stop_at_time_budget():
    X, y = _binary(n=3000)
    clf = PGSClassifier(random_state=0, n_iter=10**9, time_budget=0.2).fit(X, y)
    assert clf.stop_reason_ == "time_budget"
    assert 0 < clf.n_iter_ < 10**9


def test_callback_sees_progress_and_can_stop():
    X, y = _binary(n=3000)
    seen = []

    def callback(progress):
        seen.append(progress)
        return len(seen) < 3

    clf = PGSClassifier(random_state=0, n_iter=10**8)
    clf.fit(X[:2000], y[:2000], eval_set=(X[2000:], y[2000:]), callback=callback)
    assert clf.stop_reason_ == "callback" and len(seen) == 3
    assert [s.iteration for s in seen] == sorted(s.iteration for s in seen)
    assert seen[-1].iteration == clf.n_iter_ and seen[-1].n_iter == 10**8
    assert sum(len(s.new_points) for s in seen) == len(clf.trace_)
    assert clf.predict(X).shape == (3000,)  # still a fitted model


@pytest.mark.parametrize("p", [1.01, 1.05, 1.5, 2.0])
def test_small_p_and_small_sigma_stay_finite(p):
    X, y = _binary(n=500)
    X = X * 50.0  # unscaled features make lambda large
    clf = PGSClassifier(p=p, sigma=1e-9, n_iter=300000, radius=None, random_state=0).fit(X, y)
    assert np.all(np.isfinite(clf.coef_)) and np.isfinite(clf.intercept_).all()


@pytest.mark.parametrize("sigma", [1e-6, 1e-8])
def test_squared_loss_near_p_one_beats_the_zero_predictor_with_defaults(sigma):
    """p = 1.05 with t0="auto": steps sized by the first iterate's margin move, (p - 1) ||x||_q^2,
    are up to 1 / (p - 1) = 20 times too long once lambda concentrates, and the squared loss then
    oscillated far from its optimum (R^2 -60 at sigma 1e-6, -3,700 at 1e-8, inside the radius ball
    and without an error). Sized by the smoothness bound ||x||_q^2 the run stays stable."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 50)) * (rng.random((2000, 50)) < 0.3)
    y = X @ rng.normal(size=50) + 0.1 * rng.normal(size=2000)
    y /= y.std()
    reg = PGSRegressor(p=1.05, sigma=sigma, random_state=0).fit(X, y)
    assert reg.score(X, y) > 0.8


def test_divergence_raises_an_actionable_error():
    X, y = _binary()
    with pytest.raises(FloatingPointError, match="Scale the features.*increase sigma"):
        PGSRegressor(radius=None, t0=1.0, sigma=1e-8, random_state=0).fit(X * 1e150, y * 1.0)


def test_a_finite_but_exploding_iterate_is_divergence_too():
    """The paper's t0 = 1 without the ball lets the squared loss's iterates grow geometrically:
    they stayed finite (|coef| 1e163, R^2 = -inf) and the fit returned them without an error."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 50)) * (rng.random((2000, 50)) < 0.3)
    y = X @ rng.normal(size=50)
    with pytest.raises(FloatingPointError, match="margins near 1e100"):
        PGSRegressor(p=1.3, sigma=1e-3, t0=1.0, radius=None, n_iter=10**4, random_state=0).fit(
            X, y / y.std())


def test_random_output_is_the_paper_line_9():
    X, y = _binary()
    # With a single iteration the random iterate can only be w_1, the last one.
    one = dict(n_iter=1, random_state=0, fit_intercept=False)
    np.testing.assert_array_equal(
        PGSClassifier(output="random", **one).fit(X, y).coef_,
        PGSClassifier(output="last", **one).fit(X, y).coef_,
    )
    clf = PGSClassifier(output="random", t0=1.0, random_state=0).fit(X, y)
    assert clf.score(X, y) > 0.7 and math.isfinite(clf.coef_.sum())


def test_permutation_sampling_visits_every_sample_once_per_epoch():
    from solver._sparse import as_kernel_data

    X, y = _binary(n=50)
    clf = PGSClassifier(sampling="permutation", random_state=0)
    engine = clf._make_engine(as_kernel_data(X), np.where(y == 1, 1.0, -1.0)[None, :],
                              np.random.default_rng(0))
    drawn = np.concatenate([engine._draw(k) for k in (7, 30, 13, 50, 1, 49)])
    for epoch in range(3):
        assert sorted(drawn[50 * epoch:50 * (epoch + 1)]) == list(range(50))


def test_permutation_sampling_is_uniform():
    """The lazy Fisher-Yates shuffle: over 6,000 epochs of 4 samples, each of the 24 orders comes
    up about 250 times (chi-square with 23 degrees of freedom; 60 is beyond its 0.9999 quantile)."""
    from solver._sparse import as_kernel_data

    engine = PGSClassifier()._make_engine(as_kernel_data(np.eye(4)),
                                          np.array([[1.0, -1.0, 1.0, -1.0]]),
                                          np.random.default_rng(0))
    drawn = np.concatenate([engine._draw(k) for k in [3, 5, 8] * 1000]).reshape(-1, 4)
    orders, counts = np.unique(drawn, axis=0, return_counts=True)
    assert len(orders) == 24
    expected = len(drawn) / 24
    assert np.sum((counts - expected) ** 2 / expected) < 60.0


@pytest.mark.parametrize("output", ["average", "random"])
def test_permutation_sampling_is_reproducible_and_chunk_independent(output):
    X, y = _binary(n=400)
    params = dict(sampling="permutation", output=output, random_state=4, sigma=1e-3)
    a = PGSClassifier(**params).fit(X, y)
    b = PGSClassifier(**params).fit(X, y, eval_set=(X, y))  # other chunk boundaries
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-12)
    assert a.score(X, y) > 0.8
    with pytest.raises(ValueError, match="'sampling'.*Got 'bootstrap'"):
        PGSClassifier(sampling="bootstrap").fit(X, y)


def test_intercept_scaling_auto_is_the_rms_of_the_non_zero_values(as_input):
    X, y = _binary(n=60)
    binary = (X > 0).astype(np.float64)
    assert PGSClassifier(n_iter=1).fit(as_input(binary), y).intercept_scaling_ == 1.0
    text_like = 0.1 * binary
    assert PGSClassifier(n_iter=1).fit(as_input(text_like), y).intercept_scaling_ == (
        pytest.approx(0.1, rel=1e-12))
    assert PGSClassifier(n_iter=1, fit_intercept=False).fit(X, y).intercept_scaling_ == 0.0
    assert PGSClassifier(n_iter=1, intercept_scaling=0.5).fit(X, y).intercept_scaling_ == 0.5


def test_intercept_scaling_regularises_the_intercept_as_its_feature_weight():
    """With s, the objective of the trace is eq. (7) over (coef, b / s), and a small s shrinks b:
    the same data with a larger offset needs a larger b, which costs sigma / 2 (b / s)^2."""
    X, y = _binary(n=400)
    params = dict(sigma=1e-2, n_iter=40000, random_state=0, sampling="permutation")
    wide = PGSClassifier(intercept_scaling=1.0, **params).fit(X + 3.0, y, trace=True)
    narrow = PGSClassifier(intercept_scaling=0.1, **params).fit(X + 3.0, y, trace=True)
    assert abs(narrow.intercept_[0]) < abs(wide.intercept_[0])
    w = np.r_[narrow.coef_[0], narrow.intercept_[0] / 0.1]
    margins = (X + 3.0) @ narrow.coef_[0] + narrow.intercept_[0]
    labels = np.where(y == narrow.classes_[1], 1.0, -1.0)
    expected = 1e-2 / 2 * w @ w + np.mean(np.logaddexp(0.0, -labels * margins))
    assert narrow.trace_[-1].objective == pytest.approx(expected, rel=1e-10)


def test_resolved_t0_is_reported():
    X, y = _binary(n=100)
    assert PGSClassifier(t0=7.0, n_iter=1).fit(X, y).t0_ == 7.0
    assert PGSClassifier(n_iter=1).fit(X, y).t0_ > 1.0


@pytest.mark.parametrize("p", [2.0, 1.8, 1.5, 1.1])
@pytest.mark.parametrize("loss", ["logistic", "hinge", "squared"])
def test_auto_t0_sizes_the_first_step_by_the_move_of_a_margin(as_input, p, loss):
    """t0="auto": the first step 1 / ((1 + t0) sigma) times the mean move of a sample's own margin
    per unit of sub-gradient (estimators._margin_gain) is 1 / curvature. The move, computed here by
    NumPy over every row: E||(x, s)||^2 for p = 2; for p < 2, E||(x, s)||_q^2 for the squared loss
    (the bound for every dual point) and, for Lipschitz losses, the curvature of r* at the dual
    point theta = sum_i l'(0; y_i) (x_i, s), E sum_j (|theta_j| / ||theta||_q)^(q-2) x_j^2."""
    X, y = _binary(n=300)
    X = X * (np.random.default_rng(1).random(X.shape) < 0.4)  # rows with different supports
    sigma = 1e-4
    clf = PGSClassifier(loss=loss, p=p, sigma=sigma, n_iter=1).fit(as_input(X), y)
    q = 2.0 if p == 2.0 else p / (p - 1.0)
    rows = np.c_[X, np.full(len(X), clf.intercept_scaling_)]
    if p < 2.0 and loss != "squared":
        # l'(0; y) is -y / 2 (logistic) or -y (hinge) with y in {-1, +1}: theta's scale cancels.
        theta = rows.T @ np.where(y == clf.classes_[1], -1.0, 1.0)
        weight = (np.abs(theta) / np.sum(np.abs(theta) ** q) ** (1.0 / q)) ** (q - 2.0)
        gain = np.mean(rows**2 @ weight)
    else:
        gain = np.mean(np.sum(np.abs(rows) ** q, axis=1) ** (2.0 / q))
    first_step = 1.0 / ((1.0 + clf.t0_) * sigma)
    assert first_step * gain == pytest.approx(1.0 / LOSSES[loss].curvature, rel=1e-10)


def test_auto_t0_without_dual_mass_at_zero_falls_back_to_the_first_move():
    """Opposite labels on identical rows: sum_i l'(0; y_i) x_i = 0, so no curvature at that dual
    point; t0 then comes from the first move, (p - 1) E||x||_q^2 = (p - 1) for unit rows."""
    X = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    y = np.array([1, -1, 1, -1])
    clf = PGSClassifier(p=1.5, sigma=1e-3, n_iter=1, fit_intercept=False).fit(X, y)
    first_step = 1.0 / ((1.0 + clf.t0_) * 1e-3)
    assert first_step * 0.5 == pytest.approx(4.0, rel=1e-10)


def test_csr_with_out_of_range_column_indices_is_refused():
    """scipy does not check column indices on construction; the kernels must never see them."""
    X, y = _binary(n=40)
    bad = sp.csr_matrix(X)
    bad.indices[3] = -1
    with pytest.raises(ValueError, match=r"column indices outside \[0, 8\)"):
        PGSClassifier().fit(bad, y)
    bad.indices[3] = 8
    with pytest.raises(ValueError, match=r"column indices outside \[0, 8\)"):
        PGSClassifier().fit(bad, y)


@pytest.mark.parametrize(
    "cls",
    [spec.classifier for spec in SOLVERS.values() if "batch_size" in spec.classifier().get_params()],
    ids=lambda cls: cls.__name__,
)
def test_batch_size_above_the_sample_count_is_refused(cls):
    """Every minibatch solver: each iteration draws k indices, so k = 1e20 must be refused."""
    X, y = _binary(n=50)
    with pytest.raises(ValueError, match=r"'batch_size'.*at most the number of training samples "
                                         r"\(50\)\. Got 100000000000000000000"):
        cls(batch_size=10**20).fit(X, y)
    cls(batch_size=50, n_iter=3).fit(X, y)
