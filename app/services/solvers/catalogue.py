"""The listing of ``GET /v1/solvers``: each solver of the catalogue (``solver.SolverSpec.describe``)
in API terms, the parameters a job's ``params`` may set with the ranges the service lets through."""

from __future__ import annotations

import functools
from typing import Any

from app.services.jobs.selection import SELECTION_PARAMS
from app.services.solvers import bounds

# The tasks a solver is listed with, and the data set task whose estimator each one names (a
# classifier trains binary and multiclass data sets alike).
CATALOGUE_TASKS = {"classification": "binary", "regression": "regression"}


@functools.cache
def solver_catalogue() -> dict[str, dict[str, Any]]:
    """Every solver as ``GET /v1/solvers`` lists it (``app.schemas.solvers.SolverRead``), by name."""
    from solver import SOLVERS

    return {name: _describe(spec.describe()) for name, spec in SOLVERS.items()}


def _describe(solver: dict[str, Any]) -> dict[str, Any]:
    """The catalogue's description (``solver.SolverSpec.describe``) in API terms: the parameters a
    job's ``params`` may set, each with the range the service lets through."""
    tasks = []
    for task, data_task in CATALOGUE_TASKS.items():
        entry = solver["tasks"].get(data_task)
        if entry is not None:
            # The parameters a job's params may set are the estimator's declared ones but the
            # options of sigma "auto", which a job sets in its selection.
            params = [
                _describe_param(name, info)
                for name, info in entry["parameters"].items()
                if name not in SELECTION_PARAMS
            ]
            tasks.append(
                {"task": task, "estimator": entry["estimator"], "losses": entry["losses"], "params": params}
            )
    return {
        "name": solver["name"],
        "title": solver["title"],
        "paper": solver["paper"],
        "algorithm": solver["algorithm"],
        "streams": solver["streams"],
        "warm_starts": solver["warm_starts"],
        "tasks": tasks,
    }


def _describe_param(name: str, info: dict[str, Any]) -> dict[str, Any]:
    """One parameter (``solver.parameters.describe_parameters``): the JSON Schema of its values
    within the service's bounds (``bounds.bounded``) split into its kind, the interval of its
    numbers, the strings it takes and whether it takes null."""
    schema = bounds.bounded(name, info["schema"])
    described: dict[str, Any] = {
        "name": name,
        "type": "string",
        "nullable": False,
        "default": info["default"],
        "range": None,
        "choices": None,
        "description": info["description"],
    }
    for branch in schema.get("anyOf", [schema]):
        kinds = branch["type"] if isinstance(branch["type"], list) else [branch["type"]]
        for kind in kinds:
            if kind == "null":
                described["nullable"] = True
            elif kind == "string":
                described["choices"] = branch["enum"]
            else:
                described["type"] = kind
                if kind in ("number", "integer"):
                    described["range"] = _range(branch)
    return described


def _range(schema: dict[str, Any]) -> dict[str, Any]:
    """The interval of a bounded number schema (``bounds.bounded``)."""
    low_open, high_open = "exclusiveMinimum" in schema, "exclusiveMaximum" in schema
    return {
        "min": schema["exclusiveMinimum" if low_open else "minimum"],
        "max": schema["exclusiveMaximum" if high_open else "maximum"],
        "min_inclusive": not low_open,
        "max_inclusive": not high_open,
    }
