"""A regressor's metrics over its evaluation rows, accumulated a shard at a time: RMSE, MAE and
R², equal to scikit-learn's ``root_mean_squared_error``, ``mean_absolute_error`` and
``r2_score`` on the same predictions. A shard adds its (weighted) sums of squared and absolute
errors, and its weight, mean and sum of squared deviations of the targets, merged into the
running ones (Chan et al.'s parallel update), which keeps R²'s total sum of squares exact where a
running sum of y² would cancel."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class RegressionMetrics:
    weight_sum: float = 0.0
    squared_error: float = 0.0
    absolute_error: float = 0.0
    mean: float = 0.0  # weighted mean of the targets so far
    deviation: float = 0.0  # weighted sum of squared deviations from ``mean``
    rows: int = 0

    def add(self, y: np.ndarray, predicted: np.ndarray, sample_weight: np.ndarray | None = None) -> None:
        y = np.asarray(y, dtype=np.float64)
        if y.shape[0] == 0:
            return
        w = np.ones(y.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        error = np.asarray(predicted, dtype=np.float64) - y
        self.squared_error += float(np.sum(w * error**2))
        self.absolute_error += float(np.sum(w * np.abs(error)))
        w_b = float(w.sum())
        if w_b == 0:
            return
        mean_b = float(np.sum(w * y) / w_b)
        deviation_b = float(np.sum(w * (y - mean_b) ** 2))
        total = self.weight_sum + w_b
        delta = mean_b - self.mean
        self.deviation += deviation_b + delta**2 * self.weight_sum * w_b / total
        self.mean += delta * w_b / total
        self.weight_sum = total
        self.rows += y.shape[0]

    def result(self) -> dict[str, Any]:
        if self.weight_sum == 0:
            return {"task": "regression", "rows": self.rows, "rmse": None, "mae": None, "r2": None}
        # r2_score's force_finite: constant targets give 1 for a perfect fit, else 0.
        if self.deviation == 0:
            r2 = 1.0 if self.squared_error == 0 else 0.0
        else:
            r2 = 1.0 - self.squared_error / self.deviation
        return {
            "task": "regression",
            "rows": self.rows,
            "weight_sum": self.weight_sum,
            "rmse": float(np.sqrt(self.squared_error / self.weight_sum)),
            "mae": self.absolute_error / self.weight_sum,
            "r2": r2,
        }
