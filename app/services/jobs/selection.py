"""``params.sigma: "auto"`` and the job body's ``selection``: the one place where its options
become the estimator's parameters (``solver/estimators/sigma_search.py``), and the rules checked
before the job queues. The options have one spelling in a request, ``selection``; the estimator's
names for them are refused in ``params`` with a 422 that points there.

Folds that a classifier's smallest class cannot fill (StratifiedKFold needs every class in every
fold) are refused here from the label counts stored with the data set's statistics
(``LabelCounts``), for the folds given and for "auto" when it means k folds. Without a test split
the training rows are the data set and the check is exact. A test split takes rows the request
does not know: a class of c rows keeps between c - held_out and c of them, so the check refuses
only the folds that certainly fail (a class surely left with fewer rows than folds) and leaves the
doubtful ones to the fit, which fails the job with the solver's message naming ``folds``. A data
set whose statistics predate the label counts gets the check the class count alone allows: folds
beyond the training rows per class on average (then some class is smaller).
"""

from __future__ import annotations

import secrets
from typing import Any

from app.core.errors import field_error, invalid
from app.core.storage.base import Store
from app.db.tables import Dataset
from app.schemas.jobs import JobCreate, Selection
from app.services.datasets.dataset_stats import stored_label_counts
from solver.selection import DEFAULT_FOLDS, KFOLD_MAX_ROWS

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
    """The params a job stores: without a ``random_state``, one drawn now and recorded, so that
    any run can be repeated exactly by sending its params back. It seeds the solver's draws and
    the validation splits of sigma "auto" and early stopping; a solver with no draws of its own
    (gd, lbfgs) records it too, as those splits still use it."""
    if "random_state" not in body.params and "random_state" in estimator.get_params():
        return {**body.params, "random_state": draw_seed()}
    return body.params


def draw_seed() -> int:
    """A fresh seed in the range every estimator and splitter takes (0 to 2**32 - 1)."""
    return secrets.randbelow(2**32)


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


def check_request(body: JobCreate, train: Dataset, n_train: int, store: Store) -> None:
    """422s naming ``body.selection.<field>`` (or ``body.params.<name>``) for the rules of the
    selection options that the request and the data set's stored statistics can check:
    ``n_train`` of the training set ``train``'s rows are the fit's (the rest a test split)."""
    _check_params_names(body.params)
    selection = body.selection
    classification = train.task != "regression"
    if selection is not None:
        if not is_auto(body.params):
            msg = 'selection chooses sigma; it needs params.sigma "auto"'
            raise invalid(msg, [field_error(["body", "selection"], msg)])
        _check_grid(selection)
        if selection.metric != "auto" and (selection.metric == "accuracy") != classification:
            expected = "accuracy" if classification else "rmse"
            _refuse(
                "metric", f"metric {selection.metric} is not a score of {train.task}; use {expected} or auto"
            )
    if not is_auto(body.params):
        return
    given = (selection or Selection()).folds
    folds = _folds_of(given, n_train)
    if folds is None:
        return
    said = f"folds {given}" if isinstance(given, int) else f"folds auto ({folds} for {n_train} training rows)"
    if not classification:
        if folds > n_train:
            _refuse("folds", f"{said} is more than the {n_train} training rows")
        return
    _check_folds_per_class(said, folds, n_train, len(train.classes or []))
    counts = stored_label_counts(store, train.file_name)
    if counts is not None and counts.counts is not None:
        _check_smallest_class(said, folds, counts.counts, train.n_samples - n_train)


def _folds_of(given: int | str, n_train: int) -> int | None:
    """The k of k-fold cross-validation the fit will use (None: a validation split), as the
    estimator resolves folds="auto" (solver.estimators.sigma_search)."""
    if isinstance(given, int):
        return given
    if given == "auto" and n_train <= KFOLD_MAX_ROWS:
        return DEFAULT_FOLDS
    return None


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


def _check_folds_per_class(said: str, folds: int, n_train: int, n_classes: int) -> None:
    # The smallest class has at most n_train / n_classes rows: folds beyond that cannot all hold it.
    if folds * n_classes > n_train:
        _refuse(
            "folds",
            f"{said} is more than the smallest class can fill: {n_train} training rows over "
            f"{n_classes} classes; every fold must hold every class",
        )


def _check_smallest_class(said: str, folds: int, counts: Any, held_out: int) -> None:
    """Refuse when some class certainly has fewer training rows than folds: it has fewer rows
    than folds in the data set, and more than a test split of ``held_out`` rows can take (so it
    keeps at least one training row and stays a class of the fit)."""
    short = [int(c) for c in counts if held_out < c < folds]
    if not short:
        return
    smallest = min(short)
    where = "" if not held_out else f" (before the test split takes {held_out} rows)"
    _refuse(
        "folds",
        f"{said} is more than the {smallest} rows of the smallest class{where}; every fold must hold "
        'every class: give at most that many folds, or "validation"',
    )


def _refuse(name: str, msg: str) -> None:
    raise invalid(msg, [field_error(["body", "selection", name], msg)])
