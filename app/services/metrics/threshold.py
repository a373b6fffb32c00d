"""A binary classifier's decision threshold: a row is the positive class (the second of the
sorted classes) when its positive-class probability exceeds the threshold (a logistic model;
default 0.5), or, for a model without probabilities (hinge loss), when its decision value does
(default 0). A probability threshold t is applied as the decision value logit(t), so the
default predicts exactly as the estimator's ``predict`` (a positive score).

A threshold is the default, given by the job, or chosen on validation rows for a named metric
(:func:`choose`): the cut between two neighbouring validation scores that maximises it, ties to
the cut nearest the default.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy.special import expit, logit

PROBABILITY, DECISION_VALUE = "probability", "decision_value"


@dataclass(frozen=True)
class Threshold:
    value: float
    applies_to: str  # PROBABILITY or DECISION_VALUE
    source: str = "default"  # default | given | validation
    metric: str | None = None  # the metric it was chosen for (source validation)
    validation_score: float | None = None  # that metric on the validation rows at the threshold

    @classmethod
    def default(cls, has_proba: bool) -> Threshold:
        return cls(0.5, PROBABILITY) if has_proba else cls(0.0, DECISION_VALUE)

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None, has_proba: bool) -> Threshold:
        return cls.default(has_proba) if d is None else cls(**d)

    @property
    def decision_value(self) -> float:
        """The threshold on the decision score."""
        return float(logit(self.value)) if self.applies_to == PROBABILITY else self.value

    def predict(self, scores: np.ndarray) -> np.ndarray:
        """Class codes (0, 1) of binary decision scores."""
        return (np.asarray(scores) > self.decision_value).astype(np.intp)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def valid_range(has_proba: bool) -> str | None:
    """What a given threshold must be, None when any finite number will do."""
    return "a probability strictly between 0 and 1" if has_proba else None


def in_range(value: float, has_proba: bool) -> bool:
    return math.isfinite(value) and (not has_proba or 0.0 < value < 1.0)


def choose(
    scores: np.ndarray,
    codes: np.ndarray,
    metric: str,
    has_proba: bool,
    sample_weight: np.ndarray | None = None,
) -> Threshold:
    """The threshold maximising ``metric`` (one of names.THRESHOLD_DEPENDENT) on validation rows
    with binary decision ``scores`` and class ``codes`` (0, 1)."""
    default = Threshold.default(has_proba)
    z = np.asarray(scores, dtype=np.float64)
    w = np.ones(z.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    values = np.unique(-z)  # the distinct scores, highest first
    if values.shape[0] < 2:
        return default
    # Each cut between neighbouring distinct scores: rows above it are predicted positive.
    group = np.searchsorted(values, -z)
    pos_w = np.bincount(group, weights=w * (codes == 1), minlength=values.shape[0])
    neg_w = np.bincount(group, weights=w * (codes == 0), minlength=values.shape[0])
    tp, fp = np.cumsum(pos_w)[:-1], np.cumsum(neg_w)[:-1]
    cuts = (-values[:-1] - values[1:]) / 2  # midpoints, as decision values
    score = _metric_at_cuts(metric, tp, fp, float(pos_w.sum()), float(neg_w.sum()))
    if has_proba:  # a probability threshold must stay inside (0, 1)
        inside = (expit(cuts) > 0.0) & (expit(cuts) < 1.0)
        cuts, score = cuts[inside], score[inside]
        if cuts.shape[0] == 0:
            return default
    best = np.flatnonzero(score == score.max())
    chosen = best[np.argmin(np.abs(cuts[best] - default.decision_value))]
    value = float(expit(cuts[chosen])) if has_proba else float(cuts[chosen])
    return Threshold(value, default.applies_to, "validation", metric, float(score[chosen]))


def _metric_at_cuts(metric: str, tp: np.ndarray, fp: np.ndarray, p: float, n: float) -> np.ndarray:
    fn, tn = p - tp, n - fp

    def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
        return np.divide(num, den, out=np.zeros_like(num), where=den > 0)

    recall, specificity = ratio(tp, np.full_like(tp, p)), ratio(tn, np.full_like(tn, n))
    return {
        "accuracy": lambda: (tp + tn) / (p + n),
        "balanced_accuracy": lambda: (recall + specificity) / (2 if p > 0 and n > 0 else 1),
        "precision": lambda: ratio(tp, tp + fp),
        "recall": lambda: recall,
        "f1": lambda: ratio(2 * tp, 2 * tp + fp + fn),
    }[metric]()
