"""``"solver": "auto"``: resolved when the job is created, by ``solver.auto.choose_solver``, from
the training rows the fit gets and the request's params; the job then is a job of the chosen
solver (``job.solver``), its params checked against that solver, and records the choice
(``job.solver_choice``).

The data set's row carries its shape. The rows are those the fit gets (a test split's removed);
the stored values scale with them. The width is the stored one less the ignored columns: a
one-hot encoding's width is known only once it is fitted, and the rule's inputs for sdca and pgs
(rows, values per row: one per encoded column, sigma) do not change with it.
"""

from __future__ import annotations

from typing import Any

from app.core.errors import field_error, invalid
from app.db.tables import Dataset
from app.schemas.jobs import JobCreate
from app.services.jobs import selection
from solver.auto import SolverChoice, choose_solver, smallest_sigma

AUTO = "auto"


def resolve(
    body: JobCreate, train: Dataset, task: str, n_train: int
) -> tuple[JobCreate, SolverChoice | None]:
    """``body`` with its solver chosen when it names "auto" (and the choice), else as it is."""
    if body.solver != AUTO:
        return body, None
    params = body.params | selection.estimator_params(selection.stored_options(body))
    ignored = len(set(body.preprocessing.ignore)) if body.preprocessing is not None else 0
    choice = choose_solver(
        task=task,
        loss=_string(params, "loss"),
        p=_number(params, "p"),
        m=max(n_train, 1),
        d=max(train.n_features - ignored, 1),
        nnz=round(train.nnz * n_train / max(train.n_samples, 1)),
        sigma=_smallest_sigma(params),
        dense=train.format != "svmlight",
    )
    return body.model_copy(update={"solver": choice.solver}), choice


def _string(params: dict[str, Any], name: str) -> str | None:
    value = params.get(name)
    return value if isinstance(value, str) else None


def _number(params: dict[str, Any], name: str) -> float | None:
    """A number the choice can use; anything else is left to the chosen solver's validation,
    which refuses it with a 422 naming the field."""
    value = params.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _smallest_sigma(params: dict[str, Any]) -> float | None:
    try:
        sigma = smallest_sigma(params)
    except (TypeError, ValueError):
        return None  # a malformed sigma: the chosen solver's validation names it
    return sigma if sigma is not None and sigma > 0 else None


def refuse_in_study(index: int) -> None:
    """A study compares named solvers over sizes; auto could choose differently per size."""
    msg = (
        'a study compares named solvers: name one instead of "auto" (a job with solver "auto" '
        "says which it chooses and why)"
    )
    raise invalid(msg, [field_error(["body", "runs", index, "solver"], msg)])
