"""A classifier's metrics over its evaluation rows, accumulated a shard at a time.

What a shard adds is kept only as far as a metric needs it: the (weighted) confusion matrix,
which gives accuracy, balanced accuracy and precision, recall and F1 per class; the sum of the
log-losses; the calibration bins' sums. ROC AUC, average precision and the ROC curve rank every
row, so each row's ranking score (one float a class, for multiclass) and label are kept: O(rows)
floats, 8 bytes a row for a binary model (80 MB at 10 million rows).

Each value equals scikit-learn's on the same predictions (``labels`` = the model's classes):
``accuracy_score``, ``balanced_accuracy_score``, ``log_loss``, ``roc_auc_score`` (binary; one-vs-rest
macro for multiclass), ``average_precision_score`` (binary; macro over the classes),
``precision_recall_fscore_support`` (zero_division=0), ``confusion_matrix``, ``roc_curve`` and
``sklearn.calibration.calibration_curve`` (uniform bins). Rows whose label the model never saw
in training (code -1) are left out and counted in ``unknown_label_rows``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.special import expit, softmax
from sklearn.metrics import average_precision_score, roc_auc_score, roc_curve

from app.services.metrics.threshold import Threshold

CALIBRATION_BINS = 10
# A stored ROC curve keeps at most this many points (evenly spaced over sklearn's, ends kept).
ROC_POINTS = 201


@dataclass
class ClassificationMetrics:
    """Accumulates ``add(codes, scores)`` shards: the class codes 0..k-1 of the labels and the
    model's decision scores (shape (rows,) for two classes, (rows, k) beyond). ``has_proba``:
    the model's probabilities are the sigmoid (binary) or softmax of its scores."""

    classes: list[Any]
    has_proba: bool
    threshold: Threshold
    confusion: np.ndarray = field(init=False)
    log_loss_sum: float = 0.0
    weight_sum: float = 0.0
    unknown_label_rows: int = 0
    calibration_sums: np.ndarray = field(init=False)
    _codes: list[np.ndarray] = field(default_factory=list)
    _ranking: list[np.ndarray] = field(default_factory=list)
    _weights: list[np.ndarray] = field(default_factory=list)

    def __post_init__(self) -> None:
        k = len(self.classes)
        self.confusion = np.zeros((k, k))
        # Per bin: weight, sum of weight * probability, sum of weight * positive.
        self.calibration_sums = np.zeros((3, CALIBRATION_BINS))

    @property
    def binary(self) -> bool:
        return len(self.classes) == 2

    def add(self, codes: np.ndarray, scores: np.ndarray, sample_weight: np.ndarray | None = None) -> None:
        codes = np.asarray(codes, dtype=np.intp)
        scores = np.asarray(scores, dtype=np.float64)
        w = np.ones(codes.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        known = codes >= 0
        self.unknown_label_rows += int(np.sum(~known))
        codes, scores, w = codes[known], scores[known], w[known]
        if codes.shape[0] == 0:
            return
        if self.binary and scores.ndim == 2:
            scores = scores[:, 0]
        predicted = self.threshold.predict(scores) if self.binary else np.argmax(scores, axis=1)
        np.add.at(self.confusion, (codes, predicted), w)
        self.weight_sum += float(w.sum())
        ranking = scores
        if self.has_proba:
            proba = _proba(scores)
            eps = np.finfo(np.float64).eps
            p_true = np.clip(proba[np.arange(codes.shape[0]), codes], eps, 1 - eps)
            self.log_loss_sum += float(np.sum(w * -np.log(p_true)))
            ranking = proba[:, 1] if self.binary else proba
            if self.binary:
                self._add_calibration(proba[:, 1], codes, w)
        self._codes.append(codes)
        self._ranking.append(ranking)
        self._weights.append(w)

    def _add_calibration(self, p: np.ndarray, codes: np.ndarray, w: np.ndarray) -> None:
        # calibration_curve's uniform bins: bin i holds (i/n, (i+1)/n], the first one 0 too.
        bins = np.searchsorted(np.linspace(0.0, 1.0, CALIBRATION_BINS + 1)[1:-1], p)
        self.calibration_sums[0] += np.bincount(bins, weights=w, minlength=CALIBRATION_BINS)
        self.calibration_sums[1] += np.bincount(bins, weights=w * p, minlength=CALIBRATION_BINS)
        self.calibration_sums[2] += np.bincount(bins, weights=w * (codes == 1), minlength=CALIBRATION_BINS)

    def result(self) -> dict[str, Any]:
        """The metrics (JSON); a value that cannot be computed is null with its reason in
        ``absent``."""
        absent: dict[str, str] = {}
        c = self.confusion
        out: dict[str, Any] = {
            "task": "classification",
            "rows": int(sum(len(x) for x in self._codes)),
            "unknown_label_rows": self.unknown_label_rows,
            "weight_sum": self.weight_sum,
        }
        if self.weight_sum == 0:
            absent["all"] = "no evaluation row has a label the model was trained on"
            return out | {"absent": absent, "threshold": self._threshold()}
        tp, predicted, actual = np.diag(c), c.sum(axis=0), c.sum(axis=1)
        precision = _ratio(tp, predicted)
        recall = _ratio(tp, actual)
        f1 = _ratio(2 * tp, predicted + actual)
        present = actual > 0
        out |= {
            "accuracy": float(tp.sum() / c.sum()),
            "balanced_accuracy": float(np.mean(recall[present])),
            "per_class": [
                {
                    "label": label,
                    "precision": float(precision[i]),
                    "recall": float(recall[i]),
                    "f1": float(f1[i]),
                    "support": float(actual[i]),
                }
                for i, label in enumerate(self.classes)
            ],
            "macro": {
                "precision": float(precision.mean()),
                "recall": float(recall.mean()),
                "f1": float(f1.mean()),
            },
            "confusion_matrix": {"labels": list(self.classes), "matrix": c.tolist()},
        }
        # The single-number precision, recall and F1: of the positive class for a binary
        # model (sklearn's average="binary"), else their macro averages.
        summary = out["per_class"][1] if self.binary else out["macro"]
        out |= {name: summary[name] for name in ("precision", "recall", "f1")}
        out |= self._ranked(absent)
        if self.has_proba:
            out["log_loss"] = self.log_loss_sum / self.weight_sum
            out["calibration"] = self._calibration() if self.binary else None
            if not self.binary:
                absent["calibration"] = "a calibration curve is drawn for a binary classifier"
        else:
            out["log_loss"] = out["calibration"] = None
            reason = "the model has no probabilities (its loss is not logistic)"
            absent["log_loss"] = absent["calibration"] = reason
        return out | {"absent": absent, "threshold": self._threshold()}

    def _threshold(self) -> dict[str, Any] | None:
        """The decision threshold the predictions were made at: a binary classifier's only."""
        return self.threshold.as_dict() if self.binary else None

    def _ranked(self, absent: dict[str, str]) -> dict[str, Any]:
        """ROC AUC, average precision and the ROC curves, from every row's ranking score."""
        codes = np.concatenate(self._codes)
        ranking = np.concatenate(self._ranking)
        w = np.concatenate(self._weights)
        positive_classes = [1] if self.binary else list(range(len(self.classes)))
        missing = [self.classes[i] for i in positive_classes if not np.any(codes == i)]
        if self.binary and not np.any(codes == 0):
            missing.append(self.classes[0])
        if missing:
            reason = f"the evaluation rows lack class(es) {missing[:5]}: a ranking needs both sides"
            absent["roc_auc"] = absent["average_precision"] = absent["roc_curves"] = reason
            return {"roc_auc": None, "average_precision": None, "roc_curves": None}
        curves, aucs, aps = [], [], []
        for i in positive_classes:
            y, s = codes == i, ranking if self.binary else ranking[:, i]
            aucs.append(float(roc_auc_score(y, s, sample_weight=w)))
            aps.append(float(average_precision_score(y, s, sample_weight=w)))
            fpr, tpr, _ = roc_curve(y, s, sample_weight=w)
            keep = np.unique(np.linspace(0, len(fpr) - 1, min(len(fpr), ROC_POINTS)).round().astype(int))
            curves.append(
                {
                    "label": self.classes[i],
                    "auc": aucs[-1],
                    "fpr": fpr[keep].tolist(),
                    "tpr": tpr[keep].tolist(),
                }
            )
        return {
            "roc_auc": float(np.mean(aucs)),
            "average_precision": float(np.mean(aps)),
            "roc_curves": curves,
        }

    def _calibration(self) -> dict[str, Any]:
        weight, predicted, positive = self.calibration_sums
        filled = weight > 0
        return {
            "bins": CALIBRATION_BINS,
            "mean_predicted": (predicted[filled] / weight[filled]).tolist(),
            "fraction_positive": (positive[filled] / weight[filled]).tolist(),
            "weight": weight[filled].tolist(),
        }


def _proba(scores: np.ndarray) -> np.ndarray:
    """The estimator's predict_proba of its scores (solver/estimators/tasks.py)."""
    if scores.ndim == 1:
        pos = expit(scores)
        return np.column_stack([1.0 - pos, pos])
    return softmax(scores, axis=1)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den, 0 where den is 0 (scikit-learn's zero_division=0)."""
    return np.divide(num, den, out=np.zeros_like(num, dtype=np.float64), where=den > 0)
