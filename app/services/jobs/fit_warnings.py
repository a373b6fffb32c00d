"""Warnings for a degenerate model, found at the end of its fit.

A fit can end "succeeded" with a model that learned nothing: a sigma so large that every weight
stays at (about) zero, or a model no better on the evaluation rows than always answering the
majority class (classification) or the mean label (regression: R^2 <= 0). Such a model is kept,
with ``warnings`` ([{code, message}]) in its metrics, which the job's and the model's answers, the
CLI and the console show.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

# A model's weights apply to the preprocessed features, which scaling brings to unit size: a
# weight this small moves a score by less than 1e-6 per unit, nothing a prediction notices.
ZERO_WEIGHT = 1e-6


def zero_weights(values: np.ndarray, sigma: float | None) -> dict[str, str] | None:
    """The warning for weights ``values`` (the model's non-zeros) that are all (near) zero."""
    largest = float(np.max(np.abs(values))) if values.size else 0.0
    if largest > ZERO_WEIGHT:
        return None
    how = "every weight at 0" if largest == 0 else f"every weight near 0 (the largest |w| is {largest:.3g})"
    # 1e12, as a request writes it, rather than Python's 1e+12.
    cause = f"sigma {sigma:g} leaves".replace("e+", "e") if sigma is not None else "the fit leaves"
    return {
        "code": "zero_weights",
        "message": f'{cause} {how}: every row gets about the same score; try sigma: "auto"',
    }


def label_baseline(labels: Iterable[np.ndarray], classification: bool) -> float | None:
    """What a model that learned nothing scores on evaluation rows with these ``labels`` (class
    codes or values, a shard at a time): the majority class's share, or the labels' variance
    (the mean squared error of predicting their mean); None without rows."""
    counts: np.ndarray = np.zeros(0)
    n, total, squares = 0, 0.0, 0.0
    for y in labels:
        if classification:
            found = np.bincount(np.asarray(y, dtype=np.int64))
            counts = np.pad(counts, (0, max(0, len(found) - len(counts))))
            counts[: len(found)] += found
        else:
            y = np.asarray(y, dtype=np.float64)
            total, squares = total + float(y.sum()), squares + float(np.square(y).sum())
        n += len(y)
    if n == 0:
        return None
    if classification:
        return float(counts.max()) / n
    return max(squares / n - (total / n) ** 2, 0.0)


def no_better_than_baseline(metrics: dict[str, Any], baseline: float | None) -> dict[str, str] | None:
    """The warning for a test score no better than ``baseline`` (:func:`label_baseline`)."""
    if baseline is None:
        return None
    accuracy = metrics.get("test_accuracy")
    if accuracy is not None:
        # Equal up to float rounding of the two shares.
        if accuracy > baseline + 1e-12:
            return None
        return {
            "code": "majority_class",
            "message": f"test accuracy {accuracy:.4g} is no better than always predicting the "
            f"majority class ({baseline:.4g} of the evaluation rows): the model learned nothing "
            "that generalises; check sigma and the features",
        }
    rmse = metrics.get("test_rmse")
    if rmse is None or not np.isfinite(rmse):
        return None
    r2 = 1.0 - rmse**2 / baseline if baseline > 0 else (1.0 if rmse == 0 else -np.inf)
    # Zero up to float rounding: the mean label itself scores an R^2 of about +-1e-16.
    if r2 > 1e-12:
        return None
    return {
        "code": "no_better_than_mean",
        "message": f"test R^2 {r2:.4g} <= 0: the model predicts no better than the mean label of "
        "the evaluation rows; check sigma and the features",
    }
