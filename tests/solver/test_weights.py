"""Sample and class weights (``solver.weights``): every solver's loss weighs its rows.

Each solver is checked against a reference: the weighted objective computed in plain NumPy; for
the deterministic solvers, equality with the data whose rows are repeated as many times as their
integer weight; for logistic + L2, scikit-learn's LogisticRegression with the same sample_weight;
and for every solver, rows of weight 0 that no longer move the model.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score
from sklearn.utils.class_weight import compute_class_weight

from solver import SOLVERS
from solver.losses import LOSSES, loss_value
from solver.weights import fit_weights

RNG = np.random.default_rng(7)
M, N = 240, 4
X = RNG.normal(size=(M, N))
Y_CLASS = np.where(X @ np.array([1.5, -1.0, 0.5, 0.0]) + 0.3 * RNG.normal(size=M) > 0, 1, 0)
Y_REG = X @ np.array([1.0, -2.0, 0.5, 0.0]) + 0.1 * RNG.normal(size=M)
WEIGHTS = RNG.integers(0, 4, size=M).astype(np.float64)


def _weighted_objective(est, X, y, sample_weight) -> float:
    """penalty + (1 / sum c) sum c_i l(z_i; y_i), from the fitted model in NumPy (no kernel)."""
    code = LOSSES[est.loss].code
    z = est.decision_function(X) if hasattr(est, "classes_") else est.predict(X)
    target = np.where(y == est.classes_[1], 1.0, -1.0) if hasattr(est, "classes_") else y
    losses = np.array(
        [loss_value(code, zi, yi, float(est.epsilon)) for zi, yi in zip(z, target, strict=True)]
    )
    return float(np.sum(sample_weight * losses) / np.sum(sample_weight))


@pytest.mark.parametrize("solver", ["gd", "gcd", "lbfgs"])
@pytest.mark.parametrize("task", ["classifier", "regressor"])
def test_integer_weights_equal_repeated_rows_for_deterministic_solvers(solver, task):
    cls = getattr(SOLVERS[solver], task)
    y = Y_CLASS if task == "classifier" else Y_REG
    params = {"sigma": 1e-2, "n_iter": 200}
    if solver == "gd":
        params["eta"] = 0.05  # eta="auto" reads the rows' statistics, which repetition changes
    if solver == "lbfgs":
        params["n_iter"] = 500
    weighted = cls(**params).fit(X, y, sample_weight=WEIGHTS)
    repeat = WEIGHTS.astype(int)
    repeated = cls(**params).fit(np.repeat(X, repeat, axis=0), np.repeat(y, repeat))
    np.testing.assert_allclose(weighted.coef_, repeated.coef_, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(weighted.intercept_, repeated.intercept_, rtol=1e-6, atol=1e-6)


def test_weighted_logistic_l2_agrees_with_scikit_learn():
    sigma = 1e-2
    ours = SOLVERS["lbfgs"].classifier(sigma=sigma, p=2.0, fit_intercept=False, tol=1e-10, n_iter=1000)
    ours.fit(X, Y_CLASS, sample_weight=WEIGHTS)
    # Ours: sigma/2 ||w||^2 + (1/sum c) sum c_i l_i; scikit-learn's: 1/2 ||w||^2 + C sum c_i l_i.
    reference = LogisticRegression(
        C=1.0 / (sigma * WEIGHTS.sum()), fit_intercept=False, tol=1e-10, max_iter=10_000
    )
    reference.fit(X, Y_CLASS, sample_weight=WEIGHTS)
    np.testing.assert_allclose(ours.coef_, reference.coef_, rtol=1e-4, atol=1e-5)


def test_weighted_objective_of_the_kernel_is_the_numpy_one():
    est = SOLVERS["lbfgs"].classifier(sigma=1e-2).fit(X, Y_CLASS, sample_weight=WEIGHTS, trace=True)
    w = np.concatenate([est.coef_[0], est.intercept_])
    penalty = est._penalty(w)
    normalised = WEIGHTS * (M / WEIGHTS.sum())
    kernel = est._objective(X, np.where(Y_CLASS == 1, 1.0, -1.0), w, None, normalised)
    assert kernel == pytest.approx(penalty + _weighted_objective(est, X, Y_CLASS, WEIGHTS), rel=1e-9)


# Every solver: half the rows carry flipped labels (or targets) and weight 0. Unweighted, they
# ruin the fit; weighted, the fit must match the clean rows as well as a fit on them alone.
NOISY = np.arange(M) % 2 == 1
CLEAN_WEIGHTS = np.where(NOISY, 0.0, 1.0)


@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_rows_of_weight_zero_do_not_move_any_classifier(solver):
    y = np.where(NOISY, 1 - Y_CLASS, Y_CLASS)
    cls = SOLVERS[solver].classifier
    params = {"random_state": 0, "sigma": 1e-3}
    weighted = cls(**params).fit(X, y, sample_weight=CLEAN_WEIGHTS)
    clean_only = cls(**params).fit(X[~NOISY], y[~NOISY])
    unweighted = cls(**params).fit(X, y)
    clean = weighted.score(X[~NOISY], y[~NOISY])
    assert clean >= clean_only.score(X[~NOISY], y[~NOISY]) - 0.05
    assert clean > unweighted.score(X[~NOISY], y[~NOISY]) + 0.2


@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_rows_of_weight_zero_do_not_move_any_regressor(solver):
    y = np.where(NOISY, -Y_REG, Y_REG)
    cls = SOLVERS[solver].regressor
    params = {"random_state": 0, "sigma": 1e-3}
    weighted = cls(**params).fit(X, y, sample_weight=CLEAN_WEIGHTS)
    clean_only = cls(**params).fit(X[~NOISY], y[~NOISY])
    unweighted = cls(**params).fit(X, y)
    clean = weighted.score(X[~NOISY], y[~NOISY])
    assert clean >= min(0.8, clean_only.score(X[~NOISY], y[~NOISY]) - 0.05)
    assert unweighted.score(X[~NOISY], y[~NOISY]) < 0.3


@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_weighted_fit_lowers_the_weighted_objective(solver):
    """Against the plain NumPy objective: the weighted model is better on it than the unweighted one."""
    cls = SOLVERS[solver].classifier
    weights = np.where(Y_CLASS == 1, 5.0, 0.2)
    params = {"random_state": 0, "sigma": 1e-2}
    weighted = cls(**params).fit(X, Y_CLASS, sample_weight=weights)
    unweighted = cls(**params).fit(X, Y_CLASS)
    assert _weighted_objective(weighted, X, Y_CLASS, weights) < _weighted_objective(
        unweighted, X, Y_CLASS, weights
    )


def test_balanced_class_weight_is_scikit_learns():
    y = np.array([0, 0, 0, 1, 2, 2])
    classes = np.array([0, 1, 2])
    expected = compute_class_weight("balanced", classes=classes, y=y)[y]
    np.testing.assert_allclose(fit_weights(y, None, "balanced", classes), expected * 6 / expected.sum())


def test_class_weight_mapping_accepts_labels_as_text_and_multiplies_sample_weight():
    y = np.array(["a", "b", "b"])
    weights = fit_weights(y, np.array([1.0, 2.0, 0.0]), {"a": 4}, np.array(["a", "b"]))
    np.testing.assert_allclose(weights, np.array([4.0, 2.0, 0.0]) * 3 / 6)
    codes = fit_weights(np.array([0, 1, 1]), None, {"1": 2.0}, np.array([0, 1]))
    np.testing.assert_allclose(codes, np.array([1.0, 2.0, 2.0]) * 3 / 5)


def test_class_weight_balanced_equals_the_equivalent_sample_weight():
    cls = SOLVERS["lbfgs"].classifier
    per_row = compute_class_weight("balanced", classes=np.array([0, 1]), y=Y_CLASS)[Y_CLASS]
    a = cls(sigma=1e-2, class_weight="balanced").fit(X, Y_CLASS)
    b = cls(sigma=1e-2).fit(X, Y_CLASS, sample_weight=per_row)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9)


@pytest.mark.parametrize(
    ("sample_weight", "class_weight", "message"),
    [
        (-WEIGHTS, None, "negative"),
        (np.where(NOISY, np.nan, 1.0), None, "not finite"),
        (np.full(M, np.inf), None, "not finite"),
        (WEIGHTS[:-1], None, "shape"),
        (np.zeros(M), None, "sum to zero"),
        (None, {"7": 1.0}, "does not have"),
    ],
)
def test_bad_weights_are_refused(sample_weight, class_weight, message):
    with pytest.raises(ValueError, match=message):
        SOLVERS["pgs"].classifier(class_weight=class_weight).fit(X, Y_CLASS, sample_weight=sample_weight)


@pytest.mark.parametrize("class_weight", [{"1": -1.0}, {"1": float("nan")}, "heavy", [1.0]])
def test_bad_class_weight_values_fail_parameter_validation(class_weight):
    with pytest.raises(ValueError, match="class_weight"):
        SOLVERS["sgd"].classifier(class_weight=class_weight).fit(X, Y_CLASS)


def test_regressors_have_no_class_weight():
    assert "class_weight" not in SOLVERS["pgs"].regressor().get_params()
    assert "class_weight" in SOLVERS["pgs"].classifier().get_params()


def test_a_weighted_eval_set_weighs_the_traced_test_score():
    weights = np.where(NOISY, 0.0, 2.0)
    est = SOLVERS["lbfgs"].classifier(sigma=1e-2).fit(X, Y_CLASS, eval_set=(X, Y_CLASS, weights))
    expected = accuracy_score(Y_CLASS, est.predict(X), sample_weight=weights)
    assert est.trace_[-1].test_score == pytest.approx(expected)
    assert expected != pytest.approx(accuracy_score(Y_CLASS, est.predict(X)))
    rmse = SOLVERS["gd"].regressor(sigma=1e-2).fit(X, Y_REG, eval_set=(X, Y_REG, weights))
    expected_rmse = np.sqrt(np.average((rmse.predict(X) - Y_REG) ** 2, weights=weights))
    assert rmse.trace_[-1].test_score == pytest.approx(expected_rmse)
    with pytest.raises(ValueError, match="eval_set sample_weight has negative"):
        SOLVERS["gd"].regressor().fit(X, Y_REG, eval_set=(X, Y_REG, -weights))


def test_sigma_auto_weighs_its_path_as_if_weight_0_rows_were_absent():
    # Rows of weight 0 appended to the data leave every fit and held-out score of the path as
    # on the data without them, split the same way.
    from solver.selection import make_splits, regularisation_path

    noise = RNG.normal(size=(120, N))
    X_all = np.vstack([X, noise])
    y_all = np.concatenate([Y_REG, 50.0 * RNG.normal(size=120)])
    weights = np.concatenate([np.ones(M), np.zeros(120)])
    splits, name = make_splits(y_all, classification=False, folds=3, validation_fraction=0.2, seed=0)
    clean = [(train[train < M], held[held < M]) for train, held in splits]

    def build(sigma: float):
        return SOLVERS["lbfgs"].regressor(sigma=sigma, tol=1e-12)

    grid = [1e-1, 1e-2, 1e-3]
    common = {"grid": grid, "splits_name": name, "metric": "rmse", "warm_start": False}
    weighted = regularisation_path(build, X_all, y_all, splits=splits, sample_weight=weights, **common)
    alone = regularisation_path(build, X, Y_REG, splits=clean, **common)
    assert weighted is not None and alone is not None
    for a, b in zip(weighted.path, alone.path, strict=True):
        assert a.scores == pytest.approx(b.scores, rel=1e-6)
    unweighted = regularisation_path(build, X_all, y_all, splits=splits, **common)
    assert unweighted is not None and unweighted.path[0].mean > 5 * alone.path[0].mean
