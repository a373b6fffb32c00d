"""The warnings for a degenerate model (app/services/jobs/fit_warnings.py) on their own: the
baselines read a shard at a time equal the whole labels' (the majority class's share; R^2 as
scikit-learn's r2_score computes it), and each threshold warns on its side only."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import r2_score

from app.services.jobs.fit_warnings import label_baseline, no_better_than_baseline, zero_weights


def test_the_majority_share_over_shards_is_the_whole_labels():
    codes = np.random.default_rng(0).choice(3, size=1000, p=[0.2, 0.5, 0.3])
    shards = np.array_split(codes, 7)
    assert label_baseline(iter(shards), classification=True) == np.bincount(codes).max() / 1000
    assert label_baseline(iter([]), classification=True) is None


def test_accuracy_at_the_majority_share_is_warned_and_above_it_is_not():
    share = 0.61
    warned = no_better_than_baseline({"test_accuracy": share}, share)
    assert warned is not None and warned["code"] == "majority_class"
    assert no_better_than_baseline({"test_accuracy": share + 0.01}, share) is None


@pytest.mark.parametrize("quality", ["mean", "worse", "good"])
def test_r2_is_scikit_learns_and_warned_at_or_below_zero(quality: str):
    rng = np.random.default_rng(1)
    y = rng.normal(10, 3, 500)
    predicted = {
        "mean": np.full(500, y.mean()),
        "worse": np.full(500, y.mean() + 2),
        "good": y + rng.normal(0, 1, 500),
    }[quality]
    rmse = float(np.sqrt(np.mean((predicted - y) ** 2)))
    variance = label_baseline(iter(np.array_split(y, 4)), classification=False)
    assert variance == pytest.approx(np.var(y), rel=1e-12)
    found = no_better_than_baseline({"test_rmse": rmse}, variance)
    r2 = r2_score(y, predicted)
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
