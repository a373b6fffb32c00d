"""Data sets without labels (``labelled=false``): what refuses them, in one wording."""

from __future__ import annotations

from collections.abc import Sequence

from app.core.errors import field_error, invalid
from app.db.tables import Dataset
from app.schemas.datasets import NO_LABELS_USE


def require_labels(dataset: Dataset, loc: Sequence[str | int], why: str) -> None:
    """A 422 at ``loc`` when ``dataset`` has no labels, which ``why`` needs."""
    if not dataset.labelled:
        msg = f"dataset {dataset.id} has no labels, and {why}; {NO_LABELS_USE}"
        raise invalid(msg, [field_error(list(loc), msg)])
