"""Every metric of app/services/metrics equals scikit-learn's ``sklearn.metrics`` on the same
predictions to 1e-9, from one piece and from many shards, with and without sample weights."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit, softmax
from sklearn import metrics as skm
from sklearn.calibration import calibration_curve

from app.services.metrics.classification import ClassificationMetrics
from app.services.metrics.regression import RegressionMetrics
from app.services.metrics.threshold import DECISION_VALUE, PROBABILITY, Threshold, choose

TOL = 1e-9


def _pieces(n: int, k: int, rng: np.random.Generator) -> list[slice]:
    """``k`` shards of uneven sizes (one of them empty) covering ``n`` rows."""
    cuts = np.sort(rng.choice(np.arange(1, n), size=k - 2, replace=False))
    bounds = [0, 0, *cuts.tolist(), n]
    return [slice(a, b) for a, b in zip(bounds, bounds[1:], strict=False)]


def _accumulated(acc, n: int, shards: int, *columns: np.ndarray | None):
    rng = np.random.default_rng(7)
    for part in [slice(0, n)] if shards == 1 else _pieces(n, shards, rng):
        acc.add(*[None if c is None else c[part] for c in columns])
    return acc.result()


@pytest.mark.parametrize("shards", [1, 9])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("logistic", [True, False])
def test_binary_metrics_equal_sklearn(shards: int, weighted: bool, logistic: bool) -> None:
    rng = np.random.default_rng(0)
    n = 2000
    y = rng.integers(0, 2, n)
    z = rng.normal(size=n) + 1.2 * (y - 0.5)
    w = rng.uniform(0.1, 3.0, n) if weighted else None
    threshold = Threshold(0.6, PROBABILITY) if logistic else Threshold(0.3, DECISION_VALUE)
    got = _accumulated(ClassificationMetrics(["no", "yes"], logistic, threshold), n, shards, y, z, w)
    p = expit(z)
    pred = (p > 0.6) if logistic else (z > 0.3)
    ranking = p if logistic else z
    assert got["accuracy"] == pytest.approx(skm.accuracy_score(y, pred, sample_weight=w), abs=TOL)
    assert got["balanced_accuracy"] == pytest.approx(
        skm.balanced_accuracy_score(y, pred, sample_weight=w), abs=TOL
    )
    assert got["roc_auc"] == pytest.approx(skm.roc_auc_score(y, ranking, sample_weight=w), abs=TOL)
    assert got["average_precision"] == pytest.approx(
        skm.average_precision_score(y, ranking, sample_weight=w), abs=TOL
    )
    prec, rec, f1, support = skm.precision_recall_fscore_support(
        y, pred, labels=[0, 1], sample_weight=w, zero_division=0
    )
    for i, row in enumerate(got["per_class"]):
        assert [row["precision"], row["recall"], row["f1"], row["support"]] == pytest.approx(
            [prec[i], rec[i], f1[i], support[i]], abs=TOL
        )
    assert got["f1"] == pytest.approx(skm.f1_score(y, pred, sample_weight=w), abs=TOL)
    assert got["precision"] == pytest.approx(skm.precision_score(y, pred, sample_weight=w), abs=TOL)
    assert got["recall"] == pytest.approx(skm.recall_score(y, pred, sample_weight=w), abs=TOL)
    assert got["macro"]["f1"] == pytest.approx(
        skm.f1_score(y, pred, average="macro", sample_weight=w), abs=TOL
    )
    np.testing.assert_allclose(
        got["confusion_matrix"]["matrix"], skm.confusion_matrix(y, pred, sample_weight=w), atol=TOL
    )
    fpr, tpr, _ = skm.roc_curve(y, ranking, sample_weight=w)
    curve = got["roc_curves"][0]
    assert curve["label"] == "yes" and curve["fpr"][0] == fpr[0] and curve["tpr"][-1] == tpr[-1]
    assert set(zip(curve["fpr"], curve["tpr"], strict=True)) <= set(zip(fpr, tpr, strict=True))
    if logistic:
        assert got["log_loss"] == pytest.approx(skm.log_loss(y, p, sample_weight=w), abs=TOL)
        if w is None:
            frac, mean = calibration_curve(y, p, n_bins=10)
            np.testing.assert_allclose(got["calibration"]["fraction_positive"], frac, atol=TOL)
            np.testing.assert_allclose(got["calibration"]["mean_predicted"], mean, atol=TOL)
    else:
        assert got["log_loss"] is None and got["calibration"] is None
        assert "logistic" in got["absent"]["log_loss"]


def test_weighted_calibration_equals_repeated_rows() -> None:
    """calibration_curve takes no weights: integer weights must equal repeating the rows."""
    rng = np.random.default_rng(3)
    y, z = rng.integers(0, 2, 500), rng.normal(size=500) * 2
    w = rng.integers(1, 4, 500)
    got = _accumulated(ClassificationMetrics([0, 1], True, Threshold.default(True)), 500, 5, y, z, w)
    frac, mean = calibration_curve(np.repeat(y, w), expit(np.repeat(z, w)), n_bins=10)
    np.testing.assert_allclose(got["calibration"]["fraction_positive"], frac, atol=TOL)
    np.testing.assert_allclose(got["calibration"]["mean_predicted"], mean, atol=TOL)


@pytest.mark.parametrize("shards", [1, 7])
@pytest.mark.parametrize("weighted", [False, True])
def test_multiclass_metrics_equal_sklearn(shards: int, weighted: bool) -> None:
    rng = np.random.default_rng(1)
    n, k = 1500, 4
    y = rng.integers(0, k, n)
    z = rng.normal(size=(n, k)) + 1.5 * np.eye(k)[y]
    w = rng.uniform(0.5, 2.0, n) if weighted else None
    got = _accumulated(ClassificationMetrics(list("abcd"), True, Threshold.default(True)), n, shards, y, z, w)
    p = softmax(z, axis=1)
    pred = np.argmax(z, axis=1)
    labels = list(range(k))
    assert got["accuracy"] == pytest.approx(skm.accuracy_score(y, pred, sample_weight=w), abs=TOL)
    assert got["balanced_accuracy"] == pytest.approx(
        skm.balanced_accuracy_score(y, pred, sample_weight=w), abs=TOL
    )
    assert got["log_loss"] == pytest.approx(skm.log_loss(y, p, sample_weight=w), abs=TOL)
    assert got["roc_auc"] == pytest.approx(
        skm.roc_auc_score(y, p, multi_class="ovr", average="macro", sample_weight=w), abs=TOL
    )
    indicator = np.eye(k)[y]
    assert got["average_precision"] == pytest.approx(
        skm.average_precision_score(indicator, p, average="macro", sample_weight=w), abs=TOL
    )
    for name, average in (("precision", "macro"), ("recall", "macro"), ("f1", "macro")):
        fn = getattr(skm, f"{name}_score")
        expected = fn(y, pred, labels=labels, average=average, sample_weight=w, zero_division=0)
        assert got["macro"][name] == pytest.approx(expected, abs=TOL)
        assert got[name] == got["macro"][name]
    np.testing.assert_allclose(
        got["confusion_matrix"]["matrix"], skm.confusion_matrix(y, pred, sample_weight=w), atol=TOL
    )
    assert [c["label"] for c in got["roc_curves"]] == list("abcd")
    assert got["calibration"] is None and "binary" in got["absent"]["calibration"]
    assert got["threshold"] is None  # argmax: no threshold


def test_unknown_labels_are_left_out_and_a_missing_class_leaves_no_auc() -> None:
    acc = ClassificationMetrics([0, 1, 2], False, Threshold.default(False))
    acc.add(np.array([0, 1, 1, -1]), np.array([[2.0, 0, 0], [0, 1, 0], [0, 0, 3], [1, 0, 0]]))
    got = acc.result()
    assert got["rows"] == 3 and got["unknown_label_rows"] == 1
    assert got["accuracy"] == pytest.approx(2 / 3)
    assert got["roc_auc"] is None and "lack class" in got["absent"]["roc_auc"]


@pytest.mark.parametrize("shards", [1, 11])
@pytest.mark.parametrize("weighted", [False, True])
def test_regression_metrics_equal_sklearn(shards: int, weighted: bool) -> None:
    rng = np.random.default_rng(2)
    n = 3000
    # A large offset: R²'s total sum of squares must not come from a cancelling sum of y².
    y = 1e6 + rng.normal(size=n)
    pred = y + rng.normal(scale=0.3, size=n)
    w = rng.uniform(0.1, 2.0, n) if weighted else None
    got = _accumulated(RegressionMetrics(), n, shards, y, pred, w)
    assert got["rmse"] == pytest.approx(skm.root_mean_squared_error(y, pred, sample_weight=w), abs=TOL)
    assert got["mae"] == pytest.approx(skm.mean_absolute_error(y, pred, sample_weight=w), abs=TOL)
    assert got["r2"] == pytest.approx(skm.r2_score(y, pred, sample_weight=w), abs=TOL)


def test_regression_constant_targets_follow_r2_score() -> None:
    for pred in (np.ones(4), np.array([1.0, 1, 1, 2])):
        acc = RegressionMetrics()
        acc.add(np.ones(4), pred)
        assert acc.result()["r2"] == skm.r2_score(np.ones(4), pred)


@pytest.mark.parametrize("metric", ["f1", "accuracy", "balanced_accuracy", "precision", "recall"])
@pytest.mark.parametrize("logistic", [True, False])
def test_chosen_threshold_maximises_the_metric(metric: str, logistic: bool) -> None:
    """The chosen threshold's score is sklearn's at that threshold, and no cut does better."""
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 400)
    z = rng.normal(size=400) + 0.8 * y - 0.6
    chosen = choose(z, y, metric, logistic)
    scorer = getattr(skm, f"{metric}_score")

    def at(decision_value: float) -> float:
        kwargs = {"zero_division": 0} if metric in ("f1", "precision", "recall") else {}
        return float(scorer(y, z > decision_value, **kwargs))

    assert chosen.source == "validation" and chosen.metric == metric
    assert chosen.applies_to == (PROBABILITY if logistic else DECISION_VALUE)
    assert chosen.validation_score == pytest.approx(at(chosen.decision_value), abs=TOL)
    values = np.unique(z)
    best = max(at(c) for c in (values[:-1] + values[1:]) / 2)
    assert chosen.validation_score == pytest.approx(best, abs=TOL)


def test_default_threshold_predicts_as_the_estimator() -> None:
    z = np.array([-1e-300, 0.0, 1e-300, 2.0])
    for proba in (True, False):
        assert Threshold.default(proba).predict(z).tolist() == [0, 0, 1, 1]
