"""The job body's ``threshold``: the rules checked before the job queues, and what the job
stores. A decision threshold is a binary classifier's; a given value must be a probability in
(0, 1) for a model with probabilities (logistic loss), and finite otherwise. A threshold chosen
for a metric needs a first fit on a validation split of the training rows, held in memory."""

from __future__ import annotations

from typing import Any

from app.core.errors import field_error, invalid
from app.schemas.jobs import JobCreate
from app.services.metrics.evaluation import has_proba
from app.services.metrics.threshold import in_range, valid_range


def stored_options(body: JobCreate) -> dict[str, Any] | None:
    return None if body.threshold is None else body.threshold.model_dump(mode="json")


def needs_validation_fit(options: dict[str, Any] | None) -> bool:
    """Whether the threshold is chosen on validation rows (a fit on rows held in memory)."""
    return options is not None and options.get("metric") is not None


def check_request(body: JobCreate, task: str, n_classes: int, estimator: Any) -> None:
    options = body.threshold
    if options is None:
        return
    if task == "regression" or n_classes != 2:
        kind = "a regression" if task == "regression" else f"a {n_classes}-class classification"
        msg = f"threshold is a binary classifier's decision threshold; this job is {kind}"
        raise invalid(msg, [field_error(["body", "threshold"], msg)])
    proba = has_proba(estimator)
    if options.value is not None and not in_range(options.value, proba):
        msg = f"threshold.value must be {valid_range(proba)} (the model's positive-class probability)"
        raise invalid(msg, [field_error(["body", "threshold", "value"], msg)])
