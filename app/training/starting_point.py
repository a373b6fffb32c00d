"""The worker's side of a warm start (a job's ``init_model``, app/services/jobs/warm_start.py):
the stored model's weights, classes and fitted preprocessing, read from its files."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from app.core.storage.base import Store
from app.services.datasets.parse_base import json_label
from app.services.model_registry.artifacts import load_model_files, stored_preprocessing


@dataclass(frozen=True)
class InitModel:
    """Which model a job starts from: its id and its files' stem."""

    model_id: int
    file_stem: str


@dataclass(frozen=True)
class StartingPoint:
    """A stored model as a fit's start: ``coef`` and ``intercept`` as the estimator holds them
    (fit's coef_init and intercept_init), the labels its outputs stand for (None: regression),
    and its fitted preprocessing (None: raw features), which the fit reuses."""

    model_id: int
    coef: np.ndarray
    intercept: Any
    classes: list[Any] | None
    preprocessor: Any

    def check_classes(self, classes: np.ndarray | None) -> None:
        """ValueError unless the training rows have the model's classes, in its order: each
        output's weights belong to one class (one-vs-rest)."""
        if self.classes is None or classes is None:
            return
        ours = [json_label(c) for c in classes]
        if ours != self.classes:
            raise ValueError(
                f"the training rows' classes {ours} are not those of model {self.model_id} "
                f"(init_model), {self.classes}: its weights are one set per class"
            )


def load_start(store: Store, init: InitModel) -> StartingPoint:
    """``init``'s model from the store; RuntimeError when it was deleted since the job was queued."""
    from solver import load_model  # the solver imports Numba: not at this module's import

    try:
        meta, arrays = load_model_files(store, init.file_stem)
    except FileNotFoundError:
        raise RuntimeError(f"model {init.model_id} (init_model) was deleted before the job ran") from None
    estimator = load_model(meta["estimator"], arrays)
    return StartingPoint(
        model_id=init.model_id,
        coef=np.asarray(estimator.coef_),
        intercept=estimator.intercept_,
        classes=meta.get("service", {}).get("classes"),
        preprocessor=stored_preprocessing(meta, arrays)["preprocessor"],
    )
