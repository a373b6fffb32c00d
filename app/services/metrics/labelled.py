"""The metrics of a stored model's predictions against labels that come with the rows (a batch
prediction over a labelled data set): the same metrics as a job's, from the decision scores
/predict answers, at the model's stored threshold."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from app.services.jobs.rows import codes_of
from app.services.metrics.classification import ClassificationMetrics
from app.services.metrics.regression import RegressionMetrics
from app.services.metrics.threshold import Threshold
from app.services.model_registry.artifacts import LoadedModel


@dataclass
class LabelledMetrics:
    """Accumulates ``add(labels, scores)`` blocks; labels of another kind than the model's
    (text labels for a regressor) leave no metrics (``result()`` is None)."""

    classes: np.ndarray | None
    accumulator: ClassificationMetrics | RegressionMetrics
    usable: bool = True

    def add(self, labels: np.ndarray, scores: np.ndarray, sample_weight: np.ndarray | None = None) -> None:
        labels = np.asarray(labels)
        if self.classes is None:
            if not _numeric(labels):
                self.usable = False
            if self.usable:
                self.accumulator.add(labels, scores, sample_weight)
            return
        if _numeric(labels) != _numeric(self.classes):
            self.usable = False  # text labels against numeric classes: no row matches
        if self.usable:
            self.accumulator.add(codes_of(self.classes, labels), scores, sample_weight)

    def result(self) -> dict[str, Any] | None:
        return self.accumulator.result() if self.usable else None


def _numeric(a: np.ndarray) -> bool:
    return a.dtype.kind in "iufb"


def labelled_metrics(model: LoadedModel) -> LabelledMetrics:
    if model.classes is None:
        return LabelledMetrics(None, RegressionMetrics())
    classes = np.asarray(model.classes)
    threshold = Threshold.from_dict(model.threshold, model.has_proba)
    return LabelledMetrics(classes, ClassificationMetrics(classes.tolist(), model.has_proba, threshold))
