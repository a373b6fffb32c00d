"""The metric ``targets`` name, as the solver's trace scores it at each checkpoint (on the
evaluation rows' ``eval_rows`` sample): the same accumulators as the final metrics, over the
sample's decision scores and class codes, at the job's decision threshold."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from app.services.metrics import names
from app.services.metrics.classification import ClassificationMetrics
from app.services.metrics.regression import RegressionMetrics
from app.services.metrics.threshold import Threshold


def eval_metric(name: str, n_classes: int | None, has_proba: bool, threshold: Threshold | None) -> Any:
    """A ``solver.estimators.base.EvalMetric`` scoring ``name``; ``n_classes`` None for a
    regressor. A metric that cannot be computed on the sample (a ROC AUC without both classes)
    is NaN there, which reaches no target."""
    from solver.estimators.base import EvalMetric

    def score(scores: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
        if n_classes is None:
            regression = RegressionMetrics()
            regression.add(y, scores[:, 0], sample_weight)
            value = regression.result()[name]
        else:
            metrics = ClassificationMetrics(
                list(range(n_classes)), has_proba, threshold or Threshold.default(has_proba)
            )
            metrics.add(y, scores[:, 0] if n_classes == 2 else scores, sample_weight)
            value = metrics.result().get(name)
        return math.nan if value is None else float(value)

    return EvalMetric(name, score, names.higher_is_better(name))
