"""sigma="auto": the regularisation path of ``solver.selection`` and the estimators' fit through it,
checked against plain NumPy and scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression

from solver import LBFGSClassifier, LBFGSRegressor, PGSClassifier, SCDClassifier, load_model
from solver._sparse import prepare
from solver.losses import LOSSES
from solver.pgs import PGSState
from solver.selection import MIN_IMPROVEMENT, default_grid, make_splits, regularisation_path

from .problems import binary_problem


def _lbfgs(sigma):
    return LBFGSClassifier(sigma=sigma, tol=1e-10)


def test_the_path_runs_from_the_largest_sigma_down():
    X, y = binary_problem()
    splits, _ = make_splits(y, classification=True, folds=3, validation_fraction=0.2, seed=0)
    selection = regularisation_path(
        _lbfgs, X, y, grid=[1e-3, 1.0, 1e-2, 1e-1], splits=splits, splits_name="3-fold", metric="accuracy"
    )
    assert [point.sigma for point in selection.path] == [1.0, 1e-1, 1e-2, 1e-3]
    assert all(len(point.scores) == 3 for point in selection.path)


def test_a_warm_start_reaches_the_cold_optimum_in_fewer_iterations():
    X, y = binary_problem()
    previous = LBFGSClassifier(sigma=1e-1, tol=1e-12).fit(X, y)
    cold = LBFGSClassifier(sigma=3e-2, tol=1e-12).fit(X, y)
    warm = LBFGSClassifier(sigma=3e-2, tol=1e-12)
    warm.fit(X, y, coef_init=previous.coef_, intercept_init=previous.intercept_)
    # The same optimum to the solver's tolerance: the objective to ~1e-12, the weights to ~1e-5.
    assert _objective(warm, X, y) == pytest.approx(_objective(cold, X, y), rel=1e-10)
    np.testing.assert_allclose(warm.coef_, cold.coef_, atol=1e-5)
    np.testing.assert_allclose(warm.intercept_, cold.intercept_, atol=1e-5)
    assert warm.n_iter_ < cold.n_iter_


def _objective(est, X, y):
    """sigma/2 ||(coef, b)||^2 + mean logistic loss, in plain NumPy."""
    z = np.where(y == 1, 1.0, -1.0) * (X @ est.coef_[0] + est.intercept_[0])
    w = np.append(est.coef_[0], est.intercept_[0])
    return est.sigma / 2.0 * w @ w + np.mean(np.logaddexp(0.0, -z))


@pytest.mark.parametrize("p", [2.0, 1.5])
def test_a_pgs_run_started_from_w_has_w_as_its_first_iterate(p):
    X, y = binary_problem(n=50)
    data, _ = prepare(X)
    w = np.random.default_rng(0).normal(size=X.shape[1] + 1)
    state = PGSState(
        data,
        np.where(y == 1, 1.0, -1.0),
        loss=LOSSES["logistic"],
        p=p,
        sigma=1e-2,
        radius=np.inf,
        fit_intercept=True,
        batch_size=1,
        t0=50.0,
        epsilon=1.0,
        average=True,
        intercept_scaling=0.5,
    )
    state.start_from(w)
    np.testing.assert_allclose(state.current(), w, rtol=1e-12)


def test_a_warm_started_pgs_fit_runs_one_epoch_by_default_and_keeps_the_optimum():
    X, y = binary_problem(n=2000)
    previous = LBFGSClassifier(sigma=2e-3, tol=1e-12).fit(X, y)
    optimum = _objective(LBFGSClassifier(sigma=1e-3, tol=1e-12).fit(X, y), X, y)
    start = {"coef_init": previous.coef_, "intercept_init": previous.intercept_}
    cold = PGSClassifier(sigma=1e-3, random_state=0, intercept_scaling=1.0).fit(X, y)
    warm = PGSClassifier(sigma=1e-3, random_state=0, intercept_scaling=1.0)
    assert warm.fit(X, y, **start).n_iter_ == 2000 and cold.n_iter_ == 10_000
    # As many iterations as the cold run: the same optimum, to PGS's accuracy after 5 epochs.
    long = PGSClassifier(sigma=1e-3, random_state=0, intercept_scaling=1.0, n_iter=10_000)
    gaps = [_objective(est, X, y) - optimum for est in (cold, long.fit(X, y, **start))]
    assert 0.0 <= min(gaps) and max(gaps) < 2e-4


def test_a_pgs_path_warm_starts_each_fold_from_the_previous_sigma():
    X, y = binary_problem()
    est = PGSClassifier(sigma="auto", random_state=0, sigma_grid=[1e-1, 1e-2, 1e-3], folds=3).fit(X, y)
    assert est.sigma_ in (1e-1, 1e-2, 1e-3)
    assert est.score(X, y) > 0.8


def test_every_fit_of_a_pgs_path_runs_one_epoch_the_first_too():
    # The first, largest sigma starts from w = 0, where its optimum nearly is: it needs no more
    # than the warm-started fits after it.
    X, y = binary_problem(n=600)
    splits, _ = make_splits(y, classification=True, folds=3, validation_fraction=0.2, seed=0)
    fitted: list[PGSClassifier] = []

    def build(sigma: float) -> PGSClassifier:
        fitted.append(PGSClassifier(sigma=sigma, random_state=0))
        return fitted[-1]

    regularisation_path(
        build, X, y, grid=[1e-1, 1e-2, 1e-3], splits=splits, splits_name="3-fold", metric="accuracy"
    )
    rows = [len(train) for train, _ in splits] * 3
    assert [est.n_iter_ for est in fitted] == rows
    # A fit outside a path (sigma="auto"'s refit too) keeps its 5 epochs.
    assert PGSClassifier(sigma=1e-2, random_state=0).fit(X, y).n_iter_ == 5 * X.shape[0]


def test_patience_stops_the_path_after_that_many_points_without_a_better_mean():
    X, y = binary_problem()
    splits, _ = make_splits(y, classification=True, folds=3, validation_fraction=0.2, seed=0)
    grid = np.geomspace(10.0, 1e-7, 17)
    selection = regularisation_path(
        _lbfgs, X, y, grid=grid, splits=splits, splits_name="3-fold", metric="accuracy", patience=2
    )
    means = [point.mean for point in selection.path]
    last_gain = 0  # the last point that beat the previous such point by more than 0.1%
    for i, mean in enumerate(means):
        if mean > means[last_gain] * (1.0 + MIN_IMPROVEMENT):
            last_gain = i
    assert selection.stop_reason == "patience"
    assert last_gain > 0 and len(means) == last_gain + 3 < len(grid)
    assert selection.sigma == selection.path[int(np.argmax(means))].sigma


def test_patience_counts_only_once_the_path_has_left_its_first_score():
    # Imbalanced classes: the largest sigmas all predict the majority class, a flat start.
    X, y = make_classification(400, 8, weights=[0.9], random_state=1)
    splits, _ = make_splits(y, classification=True, folds=3, validation_fraction=0.2, seed=0)
    grid = np.geomspace(1e4, 1e-4, 17)
    selection = regularisation_path(
        _lbfgs, X, y, grid=grid, splits=splits, splits_name="3-fold", metric="accuracy", patience=2
    )
    means = [point.mean for point in selection.path]
    assert means[:3] == [means[0]] * 3  # a flat start longer than the patience...
    assert max(means) > means[0] * (1.0 + MIN_IMPROVEMENT)  # ...that the path crossed


def test_folds_are_stratified():
    y = np.array([0] * 90 + [1] * 10)
    splits, name = make_splits(y, classification=True, folds=5, validation_fraction=0.2, seed=1)
    assert name == "5-fold" and len(splits) == 5
    for train, held in splits:
        assert np.bincount(y[held]).tolist() == [18, 2]
        assert np.intersect1d(train, held).size == 0 and train.size + held.size == 100


def test_a_validation_split_is_stratified_and_seeded():
    y = np.array([0] * 80 + [1] * 20)
    (first,), name = make_splits(y, classification=True, folds=None, validation_fraction=0.25, seed=3)
    (again,), _ = make_splits(y, classification=True, folds=None, validation_fraction=0.25, seed=3)
    assert name == "validation"
    assert np.bincount(y[first[1]]).tolist() == [20, 5]
    np.testing.assert_array_equal(first[1], again[1])


def test_the_chosen_sigma_has_the_best_mean_score():
    X, y = binary_problem(seed=2)
    est = LBFGSClassifier(sigma="auto", folds=4, random_state=0, patience=None, n_sigmas=6).fit(X, y)
    means = [point.mean for point in est.selection_.path]
    assert est.sigma_ == est.selection_.path[int(np.argmax(means))].sigma  # argmax: the first, larger sigma
    for point in est.selection_.path:
        assert point.mean == pytest.approx(np.mean(point.scores))
        assert point.std == pytest.approx(np.std(point.scores))


def test_ties_go_to_the_larger_sigma():
    # Both sigmas shrink the model to the majority class: the same accuracy on every fold.
    X, y = make_classification(200, 5, weights=[0.8], random_state=0)
    est = LBFGSClassifier(sigma="auto", sigma_grid=[1e3, 1e4], folds=3, random_state=0).fit(X, y)
    first, second = est.selection_.path
    assert first.scores == second.scores
    assert est.sigma_ == 1e4


def test_the_model_is_refitted_on_all_rows_at_the_chosen_sigma():
    X, y = binary_problem()
    est = LBFGSClassifier(sigma="auto", random_state=0, n_sigmas=5).fit(X, y)
    direct = LBFGSClassifier(sigma=est.sigma_).fit(X, y)
    np.testing.assert_allclose(est.coef_, direct.coef_, rtol=1e-10, atol=1e-12)
    assert est.sigma == "auto" and est.get_params()["sigma"] == "auto"


def test_an_exported_model_keeps_the_chosen_sigma():
    X, y = binary_problem()
    est = LBFGSClassifier(sigma="auto", random_state=0, n_sigmas=4).fit(X, y)
    meta, arrays = est.export_model()
    assert meta["params"]["sigma"] == "auto" and meta["sigma"] == est.sigma_
    loaded = load_model(meta, arrays)
    assert loaded.sigma_ == est.sigma_
    np.testing.assert_array_equal(loaded.predict(X), est.predict(X))
    assert "sigma" not in LBFGSClassifier(sigma=1e-3).fit(X, y).export_model()[0]


def test_a_regressor_scores_its_path_by_rmse():
    X, y = make_regression(200, 5, noise=5.0, random_state=0)
    est = LBFGSRegressor(sigma="auto", random_state=0, n_sigmas=6).fit(X, y)
    assert est.selection_.metric == "rmse"
    means = [point.mean for point in est.selection_.path]
    assert est.sigma_ == est.selection_.path[int(np.argmin(means))].sigma


def test_the_default_grid_starts_at_the_loss_gradient_at_zero():
    X, y = binary_problem()
    targets = np.where(y == 1, 1.0, -1.0)
    grid = default_grid(X, targets[None, :], "logistic", n_sigmas=5)
    # l'(0; y) = -y / 2 for the logistic loss.
    sigma_max = np.max(np.abs(X.T @ (-targets / 2.0))) / X.shape[0]
    np.testing.assert_allclose(grid, np.geomspace(sigma_max, sigma_max * 1e-6, 5))


def test_an_l1_path_starts_where_the_model_is_zero():
    X, y = binary_problem()
    est = SCDClassifier(sigma="auto", random_state=0, n_sigmas=4, folds=3).fit(X, y)
    first = SCDClassifier(sigma=est.selection_.path[0].sigma * 1.01, random_state=0).fit(X, y)
    assert np.count_nonzero(first.coef_) == 0


def test_a_callback_returning_false_ends_the_path():
    X, y = binary_problem()
    calls = []

    def callback(progress):
        calls.append(progress)
        return False

    est = LBFGSClassifier(sigma="auto", random_state=0).fit(X, y, callback=callback)
    # The path ends after its first fit; the refit at the largest sigma leaves a fitted model.
    assert est.selection_ is None and len(calls) == 2
    assert est.predict(X).shape == y.shape


def test_a_path_stopped_after_complete_points_keeps_the_best_of_them():
    X, y = binary_problem()
    calls = []

    def callback(progress):
        calls.append(progress)
        return len(calls) <= 6  # past the two points of 3 folds each

    est = LBFGSClassifier(sigma="auto", random_state=0, folds=3, n_sigmas=6, patience=None)
    est.fit(X, y, callback=callback)
    selection = est.selection_
    assert selection.stop_reason == "stopped" and len(selection.path) >= 2
    best = max(selection.path, key=lambda point: point.mean)
    assert est.sigma_ == selection.sigma == best.sigma


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"sigma_grid": [1.0, 0.0]}, ["'sigma_grid'", "0.0"]),
        ({"sigma_grid": [1.0, -1.0]}, ["'sigma_grid'", "-1.0"]),
        ({"sigma_grid": [float("inf")]}, ["'sigma_grid'", "inf"]),
        ({"sigma_grid": [float("nan"), 1.0]}, ["'sigma_grid'", "nan"]),
        ({"sigma_grid": []}, ["'sigma_grid'"]),
        ({"sigma_grid": ["a"]}, ["'sigma_grid'", "numbers"]),
        ({"folds": 11}, ["'folds'", "smallest class (10)", "11"]),
        ({"metric": "f1"}, ["'metric'", "f1"]),
        ({"metric": "rmse"}, ["'metric'", "rmse", "regressors"]),
        ({"sigma_min": 1.0, "sigma_max": 0.5}, ["'sigma_min'", "sigma_max=0.5"]),
        ({"validation_fraction": 1.0}, ["'validation_fraction'"]),
    ],
)
def test_bad_options_are_refused_naming_the_parameter(params, words):
    X, y = binary_problem(n=40)
    X, y = X[:30], np.array([0] * 20 + [1] * 10)
    with pytest.raises(ValueError) as info:
        LBFGSClassifier(sigma="auto", **params).fit(X, y)
    for word in words:
        assert word in str(info.value)


def test_a_paths_progress_is_its_fits_done_over_its_fits_planned():
    X, y = binary_problem()
    seen = []
    est = LBFGSClassifier(sigma="auto", random_state=0, folds=3, n_sigmas=4, patience=None, n_iter=50)
    est.fit(X, y, callback=lambda p: seen.append((p.iteration, p.n_iter)))
    on_path = [s for s in seen if s[1] == 12]  # 4 sigmas x 3 folds
    assert on_path and on_path[0][0] == 0 and on_path[-1][0] == 11
    assert [i for i, _ in on_path] == sorted(i for i, _ in on_path)
    # Then the refit on every row, with its own iterations.
    assert seen[-1][1] == 50 and len(est.selection_.path) == 4
