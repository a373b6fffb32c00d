"""The warnings for a degenerate model (app/services/jobs/fit_warnings.py) on their own: from a
model's metrics on its evaluation rows (the majority class's share from their confusion matrix;
R^2 as scikit-learn's r2_score computes it), each threshold warns on its side only."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import r2_score

from app.services.jobs.fit_warnings import no_better_than_baseline, zero_weights


def _classification(confusion: np.ndarray) -> dict:
    """metrics.test of a classifier with this confusion matrix (rows: true classes)."""
    support = confusion.sum(axis=1)
    return {
        "task": "classification",
        "accuracy": float(np.trace(confusion) / confusion.sum()),
        "per_class": [{"support": float(s)} for s in support],
    }


def test_accuracy_at_the_majority_share_is_warned_and_above_it_is_not():
    # Every row predicted as the majority class (61 of 100): the majority share.
    majority = _classification(np.array([[0, 39], [0, 61]]))
    warned = no_better_than_baseline(majority)
    assert warned is not None and warned["code"] == "majority_class" and "0.61" in warned["message"]
    assert no_better_than_baseline(_classification(np.array([[5, 34], [0, 61]]))) is None
    assert no_better_than_baseline(None) is None


@pytest.mark.parametrize("quality", ["mean", "worse", "good"])
def test_r2_at_or_below_zero_is_warned(quality: str):
    rng = np.random.default_rng(1)
    y = rng.normal(10, 3, 500)
    predicted = {
        "mean": np.full(500, y.mean()),
        "worse": np.full(500, y.mean() + 2),
        "good": y + rng.normal(0, 1, 500),
    }[quality]
    r2 = r2_score(y, predicted)
    found = no_better_than_baseline({"task": "regression", "r2": r2})
    if quality == "good":
        assert r2 > 0 and found is None
    else:
        assert found is not None and found["code"] == "no_better_than_mean"
        assert f"{r2:.4g}" in found["message"] or abs(r2) < 1e-12


def test_zero_weights_warns_at_or_below_the_threshold_only():
    exact = zero_weights(np.zeros(0), 1e12)
    assert exact is not None and exact["message"].startswith("sigma 1e12 leaves every weight at 0")
    near = zero_weights(np.array([3e-13, -2e-9]), 1e12)
    assert near is not None and "the largest |w| is 2e-09" in near["message"]
    assert zero_weights(np.array([1e-9, 0.02]), 1e-4) is None
    unknown = zero_weights(np.zeros(0), None)
    assert unknown is not None and unknown["message"].startswith("the fit leaves every weight at 0")
