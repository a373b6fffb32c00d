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
    estimator: Any,
    rows: ShardedMatrix,
    classes: list[Any] | None,
    threshold: Threshold | None = None,
    sample_weight: np.ndarray | None = None,
) -> dict[str, Any]:
    """The metrics of ``estimator`` on ``rows`` (``classes``: the labels of its class codes,
    None for a regressor); ``threshold``: a binary classifier's (None: the default);
    ``sample_weight``: the rows' weights, in the shards' order (None: every row weighs 1)."""
    proba = has_proba(estimator)
    metrics: RegressionMetrics | ClassificationMetrics = (
        RegressionMetrics()
        if classes is None
        else ClassificationMetrics(classes, proba, threshold or Threshold.default(proba))
    )
    start = 0
    for X, y in rows.shards():
        n = X.shape[0]
        weights = None if sample_weight is None else sample_weight[start : start + n]
        start += n
        if n:
            scores = estimator.predict(X) if classes is None else estimator.decision_function(X)
            metrics.add(np.asarray(y), scores, weights)
    return metrics.result()
