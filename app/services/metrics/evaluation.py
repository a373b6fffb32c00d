"""A fitted model's metrics over evaluation rows read a shard at a time (a ShardedMatrix whose
labels are class codes for a classifier, targets for a regressor), from one decision score per
row and class: the model's ``decision_function``."""

from __future__ import annotations

from typing import Any

import numpy as np

from app.services.metrics.classification import ClassificationMetrics
from app.services.metrics.regression import RegressionMetrics
from app.services.metrics.threshold import Threshold
from solver import ShardedMatrix


def has_proba(estimator: Any) -> bool:
    return hasattr(estimator, "predict_proba")


def model_metrics(
    estimator: Any, rows: ShardedMatrix, classes: list[Any] | None, threshold: Threshold | None = None
) -> dict[str, Any]:
    """The metrics of ``estimator`` on ``rows`` (``classes``: the labels of its class codes,
    None for a regressor); ``threshold``: a binary classifier's (None: the default)."""
    if classes is None:
        regression = RegressionMetrics()
        for X, y in rows.shards():
            if X.shape[0]:
                regression.add(y, estimator.predict(X))
        return regression.result()
    proba = has_proba(estimator)
    metrics = ClassificationMetrics(classes, proba, threshold or Threshold.default(proba))
    for X, y in rows.shards():
        if X.shape[0]:
            metrics.add(np.asarray(y), estimator.decision_function(X))
    return metrics.result()
