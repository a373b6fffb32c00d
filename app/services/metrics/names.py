"""The metric names a request may give (``targets.metric``, ``threshold.metric``), by task, and
whether a higher value is better."""

from __future__ import annotations

# name -> higher is better
CLASSIFICATION = {
    "accuracy": True,
    "balanced_accuracy": True,
    "log_loss": False,
    "roc_auc": True,
    "average_precision": True,
    "precision": True,
    "recall": True,
    "f1": True,
}
REGRESSION = {"rmse": False, "mae": False, "r2": True}
# The metrics a decision threshold moves (the others rank or score the probabilities).
THRESHOLD_DEPENDENT = ("accuracy", "balanced_accuracy", "precision", "recall", "f1")


def of_task(task: str) -> dict[str, bool]:
    return REGRESSION if task == "regression" else CLASSIFICATION


def higher_is_better(name: str) -> bool:
    return {**CLASSIFICATION, **REGRESSION}[name]
