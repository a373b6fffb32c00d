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


# The values a metric takes (a target outside them can never be reached).
UNIT_INTERVAL = ("accuracy", "balanced_accuracy", "roc_auc", "average_precision", "precision", "recall", "f1")
NON_NEGATIVE = ("log_loss", "rmse", "mae")
# The metrics of the probabilities: a model without them (hinge loss) has none.
NEEDS_PROBABILITIES = ("log_loss",)
# What targets without a metric are: the trace's own test score.
DEFAULT = {"classification": "accuracy", "regression": "rmse"}


def value_rule(name: str) -> str:
    if name in UNIT_INTERVAL:
        return "in [0, 1]"
    return ">= 0" if name in NON_NEGATIVE else "<= 1"


def in_range(name: str, value: float) -> bool:
    if name in UNIT_INTERVAL:
        return 0.0 <= value <= 1.0
    return value >= 0.0 if name in NON_NEGATIVE else value <= 1.0


def of_task(task: str) -> dict[str, bool]:
    return REGRESSION if task == "regression" else CLASSIFICATION


def higher_is_better(name: str) -> bool:
    return {**CLASSIFICATION, **REGRESSION}[name]
