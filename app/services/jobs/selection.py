"""``params.sigma: "auto"`` and the job body's ``selection``: the one place where its options
become the estimator's parameters (``solver/estimators/sigma_search.py``), and the rules checked
before the job queues. The options have one spelling in a request, ``selection``; the estimator's
names for them are refused in ``params`` with a 422 that points there.

What is not known before the fit: a classifier's smallest class among its training rows (the
data set stores its classes, not their counts, and a test split changes them). Folds that cannot
fit are refused here when they pass the rows per class on average (then some class is smaller);
the rest fail the job at fit with the solver's message naming ``folds``.
"""

from __future__ import annotations

from typing import Any

from app.core.errors import field_error, invalid
from app.schemas.jobs import JobCreate, Selection

# The estimator parameters a Selection sets, by the Selection field that sets each.
ESTIMATOR_NAMES = {
    "folds": "folds",
    "validation_fraction": "validation_fraction",
    "grid": "sigma_grid",
    "n_sigmas": "n_sigmas",
    "sigma_min": "sigma_min",
    "sigma_max": "sigma_max",
    "patience": "patience",
    "metric": "metric",
}
_FIELD_OF = {estimator: field for field, estimator in ESTIMATOR_NAMES.items()}
# Early stopping's split is params.validation_fraction; with sigma "auto", the one split both
# use is selection.validation_fraction.
EARLY_STOPPING_SPLIT = "validation_fraction"
# Not a job's params: the solver catalogue and the params schemas leave them out.
SELECTION_PARAMS = frozenset(_FIELD_OF) - {EARLY_STOPPING_SPLIT}


def is_auto(params: dict[str, Any]) -> bool:
    return params.get("sigma") == "auto"


def stored_options(body: JobCreate) -> dict[str, Any] | None:
    """What the job stores: the request's selection with its defaults, for sigma "auto" only."""
    if not is_auto(body.params):
        return None
    return (body.selection or Selection()).model_dump(mode="json")


def seeded_params(body: JobCreate, estimator: Any) -> dict[str, Any]:
    """The params a job stores: with sigma "auto" or early stopping and no ``random_state``, the
    job's split_seed as it, since their validation splits are drawn with it and the same request
    should choose the same sigma and stop at the same point (as a study seeds its runs)."""
    if (
        (is_auto(body.params) or body.params.get("early_stopping") is True)
        and "random_state" not in body.params
        and "random_state" in estimator.get_params()
    ):
        return {**body.params, "random_state": body.split_seed}
    return body.params


def estimator_params(options: dict[str, Any] | None) -> dict[str, Any]:
    """The estimator's parameters of stored ``options`` (None: not sigma "auto", nothing). A null
    grid bound or count is left to the estimator's own default; a null ``patience`` (the whole
    grid) and the validation split (``folds`` None) are values of their own."""
    if options is None:
        return {}
    values = Selection.model_validate(options).model_dump()
    if values["folds"] == "validation":
        values["folds"] = None
    return {
        ESTIMATOR_NAMES[name]: value
        for name, value in values.items()
        if value is not None or name in ("folds", "patience")
    }


def check_request(body: JobCreate, task: str, n_train: int, n_classes: int) -> None:
    """422s naming ``body.selection.<field>`` (or ``body.params.<name>``) for the rules of the
    selection options that the request alone can check."""
    _check_params_names(body.params)
    selection = body.selection
    if selection is None:
        return
    if not is_auto(body.params):
        msg = 'selection chooses sigma; it needs params.sigma "auto"'
        raise invalid(msg, [field_error(["body", "selection"], msg)])
    _check_grid(selection)
    classification = task != "regression"
    if selection.metric != "auto" and (selection.metric == "accuracy") != classification:
        expected = "accuracy" if classification else "rmse"
        _refuse("metric", f"metric {selection.metric} is not a score of {task}; use {expected} or auto")
    if isinstance(selection.folds, int):
        _check_folds(selection.folds, n_train, n_classes if classification else 1)


def _check_params_names(params: dict[str, Any]) -> None:
    for name in params:
        if name == EARLY_STOPPING_SPLIT and not is_auto(params):
            continue  # early stopping's split (unused without params.early_stopping)
        if name in _FIELD_OF:
            where = f"selection.{_FIELD_OF[name]}"
            msg = f'{name} is an option of sigma "auto": a job gives it as {where}, not in params'
            raise invalid(msg, [field_error(["body", "params", name], msg)])


def _check_grid(selection: Selection) -> None:
    if selection.grid is not None:
        given = selection.model_fields_set
        clash = [name for name in ("n_sigmas", "sigma_min", "sigma_max") if name in given]
        if clash:
            _refuse(clash[0], f"give grid or {'/'.join(clash)} (the default grid's), not both")
    low, high = selection.sigma_min, selection.sigma_max
    if low is not None and high is not None and low >= high:
        _refuse("sigma_min", f"sigma_min {low} must be below sigma_max {high}")


def _check_folds(folds: int, n_train: int, n_classes: int) -> None:
    # The smallest class has at most n_train / n_classes rows: folds beyond that cannot all hold it.
    if folds * n_classes <= n_train:
        return
    if n_classes == 1:
        _refuse("folds", f"folds {folds} is more than the {n_train} training rows")
    _refuse(
        "folds",
        f"folds {folds} is more than the smallest class can fill: {n_train} training rows over "
        f"{n_classes} classes; every fold must hold every class",
    )


def _refuse(name: str, msg: str) -> None:
    raise invalid(msg, [field_error(["body", "selection", name], msg)])
