"""The listing of ``GET /v1/solvers``: each solver of the catalogue (``solver.SolverSpec.describe``)
in API terms, the parameters a job's ``params`` may set with the ranges the service lets through."""

from __future__ import annotations

import functools
from typing import Any

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
            # The parameters a job's params may set are the estimator's declared ones: these.
            params = [_describe_param(name, info) for name, info in entry["parameters"].items()]
            tasks.append(
                {"task": task, "estimator": entry["estimator"], "losses": entry["losses"], "params": params}
            )
    return {
        "name": solver["name"],
        "title": solver["title"],
        "paper": solver["paper"],
        "algorithm": solver["algorithm"],
        "tasks": tasks,
    }


def _describe_param(name: str, info: dict[str, Any]) -> dict[str, Any]:
    """One parameter (``solver.parameters.describe_parameters``): the JSON Schema of its values
    split into its kind, the interval of its numbers (within the service's bounds, ``bounds``),
    the strings it takes and whether it takes null."""
    schema = info["schema"]
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
                    described["range"] = _range(branch, bounds.limit(name))
    return described


def _range(schema: dict[str, Any], limit: float) -> dict[str, Any]:
    """The interval of a number schema, cut to [-limit, limit]."""
    low, low_open = -limit, False
    for key, is_open in (("minimum", False), ("exclusiveMinimum", True)):
        if key in schema and schema[key] >= low:
            low, low_open = schema[key], is_open
    high, high_open = limit, False
    for key, is_open in (("maximum", False), ("exclusiveMaximum", True)):
        if key in schema and schema[key] <= high:
            high, high_open = schema[key], is_open
    return {"min": low, "max": high, "min_inclusive": not low_open, "max_inclusive": not high_open}
