"""Warnings for a degenerate model, found at the end of its fit.

A fit can end "succeeded" with a model that learned nothing: a sigma so large that every weight
stays at (about) zero, or a model no better on the evaluation rows than always answering the
majority class (classification) or the mean label (regression: R^2 <= 0). Such a model is kept,
with ``warnings`` ([{code, message}]) in its metrics, which the job's and the model's answers, the
CLI and the console show.
"""

from __future__ import annotations

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


def no_better_than_baseline(test: dict[str, Any] | None) -> dict[str, str] | None:
    """The warning for a model's metrics on its evaluation rows (``metrics.test``,
    app/services/metrics) no better than a model that learned nothing: an accuracy at most the
    majority class's share of those rows (their confusion matrix's largest row), or an R^2 <= 0
    (the mean label's). None without evaluation rows."""
    if not test:
        return None
    if test.get("task") == "classification":
        accuracy, per_class = test.get("accuracy"), test.get("per_class")
        if accuracy is None or not per_class:
            return None
        support = np.array([c["support"] for c in per_class], dtype=np.float64)
        share = float(support.max() / support.sum())
        # Equal up to float rounding of the two shares.
        if accuracy > share + 1e-12:
            return None
        return {
            "code": "majority_class",
            "message": f"test accuracy {accuracy:.4g} is no better than always predicting the "
            f"majority class ({share:.4g} of the evaluation rows): the model learned nothing "
            "that generalises; check sigma and the features",
        }
    r2 = test.get("r2")
    # Zero up to float rounding: the mean label itself scores an R^2 of about +-1e-16.
    if r2 is None or r2 > 1e-12:
        return None
    return {
        "code": "no_better_than_mean",
        "message": f"test R^2 {r2:.4g} <= 0: the model predicts no better than the mean label of "
        "the evaluation rows; check sigma and the features",
    }
