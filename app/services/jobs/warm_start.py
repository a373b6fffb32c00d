"""A job's ``init_model``: the stored model whose weights its fit starts from (a warm start,
``fit(coef_init=..., intercept_init=...)`` of every solver but kernel_pgs).

The request names the model by id or ``name@alias``, like a path does
(app/services/model_registry/versions.py); one the caller does not have is "does not exist", as
for any model a request body names (app/services/ownership.py). The model must be a starting point
for this fit: the same task, loss and fit_intercept, the same raw features and classes, and the
same preprocessing. The fit then reuses the model's FITTED preprocessing instead of fitting it on
the new rows: a weight means "per unit of this scaled feature", so the start's weights only mean
the same thing under the scaling they were learned with (a refit scaler would shift every
weight's meaning by the new rows' statistics). Each rule broken is a 422 naming ``init_model``.
"""

from __future__ import annotations

import json
from typing import Any, NoReturn

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.errors import field_error, invalid
from app.core.tenants import Caller
from app.db.tables import Dataset, Model, ModelAlias
from app.services.model_registry.versions import split_ref
from app.services.ownership import referenced_or_422
from solver import SOLVERS

LOC: list[str | int] = ["body", "init_model"]
# The resolved preprocessing's settings (app/services/jobs/preprocessing.py), which a model's
# stored preprocessing carries among others (its format and width).
PREPROCESSING_KEYS = ("scaling", "impute", "categorical", "ignore", "sparse")


def referenced_model(session: Session, ref: int | str, caller: Caller) -> Model:
    """The model ``init_model`` names: an id, or ``name@alias`` of the caller's owner."""
    if isinstance(ref, str) and ref.isascii() and ref.isdigit() and len(ref) <= 18:
        ref = int(ref)
    if isinstance(ref, str):
        parts = split_ref(ref)
        if parts is None:
            _refuse(f"init_model {ref!r} is neither a model id nor name@alias")
        found = session.scalar(
            select(ModelAlias.model_id).where(
                ModelAlias.owner == caller.owner, ModelAlias.name == parts[0], ModelAlias.alias == parts[1]
            )
        )
        if found is None:
            _refuse(f"model alias {ref} does not exist")
        ref = int(found)
    return referenced_or_422(session, Model, ref, caller, LOC, "model")


def check_start(
    model: Model, solver: str, task: str, estimator: Any, train: Dataset, preprocessing: dict[str, Any] | None
) -> None:
    """422 naming ``init_model`` unless ``model`` is a starting point for the job's fit."""
    for name in (solver, model.solver):
        if not SOLVERS[name].warm_starts:
            whose = "the job's solver" if name == solver else f"model {model.id}'s solver"
            _refuse(f"init_model: {whose} {name} cannot start from weights: {SOLVERS[name].cold_only_reason}")
    if model.task != task:
        _refuse(f"init_model: model {model.id} is a {model.task} model; the job is {task}")
    for param in ("loss", "fit_intercept"):
        theirs, ours = model.params.get(param), getattr(estimator, param)
        if theirs != ours:
            _refuse(f"init_model: model {model.id} has {param}={theirs!r}; the job's is {ours!r}")
    if model.n_features != train.n_features:
        _refuse(
            f"init_model: model {model.id} has {model.n_features} features; dataset {train.id} "
            f"has {train.n_features}"
        )
    if task != "regression" and _labels(model.classes) != _labels(train.classes):
        _refuse(
            f"init_model: model {model.id}'s classes {model.classes} are not dataset {train.id}'s "
            f"{train.classes}"
        )
    if _settings(model.preprocessing) != _settings(preprocessing):
        _refuse(
            f"init_model: model {model.id}'s preprocessing {_settings(model.preprocessing)} is not "
            f"the job's {_settings(preprocessing)}; the fit reuses the model's fitted "
            "preprocessing, so its weights mean the same: ask for the same preprocessing"
        )


def _labels(classes: list[Any] | None) -> set[str]:
    return {json.dumps(c) for c in classes or []}


def _settings(preprocessing: dict[str, Any] | None) -> dict[str, Any] | None:
    if preprocessing is None:
        return None
    return {key: preprocessing.get(key) for key in PREPROCESSING_KEYS}


def _refuse(msg: str) -> NoReturn:
    raise invalid(msg, [field_error(LOC, msg)])
