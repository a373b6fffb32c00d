"""The service's view of the solver catalogue (``solver.SOLVERS``): build a validated estimator for
a job, or explain in API terms (the field and the reason) why it cannot be built; and describe each
solver for ``GET /v1/solvers`` from the same declarations and the same bounds the build checks.

:class:`EstimatorSpec` is what a job's estimator is built from, in the API (to check a request)
and in the worker (to fit): the request's ``params`` as they are stored, plus the job's time
budget and, for a study's sigma selection, a sigma.

Adding a solver is one entry in ``solver/catalogue.py``; nothing here changes. ``solver`` is imported
on first use, so importing the web app does not load Numba.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.core.errors import field_error


class InvalidParams(ValueError):
    """Parameters the estimator refuses; ``errors`` name each bad field for the problem body."""

    def __init__(self, message: str, errors: list[dict[str, Any]]) -> None:
        super().__init__(message)
        self.errors = errors


# The service's bounds on every numeric parameter, whatever the solver accepts: beyond them a
# count (n_iter=10**18) runs for ever or overflows the kernels' int64 (2**63), and a time
# (time_budget=1e300) means no limit at all.
MAX_PARAM_MAGNITUDE = 10**12
# The longest time budget, in seconds (the same cap as a job's time_budget_s).
MAX_TIME_BUDGET_S = 7 * 86400


def _limit(name: str) -> float:
    """The largest magnitude the service accepts for the numeric parameter ``name``."""
    return MAX_TIME_BUDGET_S if name == "time_budget" else MAX_PARAM_MAGNITUDE


def _check_ranges(params: Mapping[str, Any]) -> None:
    """Every number in ``params`` is finite and within the service's bounds."""
    errors = []
    for name, value in sorted(params.items()):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        limit = _limit(name)
        if not (math.isfinite(value) and abs(value) <= limit):
            errors.append(
                field_error(
                    ["body", "params", name],
                    f"{name} must be a finite number of magnitude at most {limit:g}, got {value:g}",
                )
            )
    if errors:
        raise InvalidParams("; ".join(e["msg"] for e in errors), errors)


def _blame(message: str, params: dict[str, Any]) -> list[str | int]:
    # scikit-learn style messages quote the parameter ("The 'p' parameter ..."); fall back to a
    # bare word, then to the whole params object.
    for pattern in ("'{}'", r"\b{}\b"):
        for name in sorted(params, key=len, reverse=True):
            if re.search(pattern.format(re.escape(name)), message):
                return ["body", "params", name]
    return ["body", "params"]


def _build(solver: str, task: str, params: dict[str, Any]) -> Any:
    """An unfitted, validated estimator for ``task``; raises :class:`InvalidParams`."""
    from solver import SOLVERS, estimator_for

    spec = SOLVERS.get(solver)
    if spec is None:
        msg = f"unknown solver {solver!r}; available: {', '.join(sorted(SOLVERS))}"
        raise InvalidParams(msg, [field_error(["body", "solver"], msg)])
    cls = spec.regressor if task == "regression" else spec.classifier
    if cls is None:
        msg = f"solver {solver!r} does not support {task} data sets"
        raise InvalidParams(msg, [field_error(["body", "solver"], msg)])
    allowed = set(cls().get_params())
    unknown = sorted(set(params) - allowed)
    if unknown:
        hint = f"unknown parameter for {cls.__name__}; allowed: {', '.join(sorted(allowed))}"
        errors = [field_error(["body", "params", k], hint, "extra_forbidden") for k in unknown]
        raise InvalidParams(f"unknown parameter(s) for {cls.__name__}: {', '.join(unknown)}", errors)
    _check_ranges(params)
    try:
        return estimator_for(solver, task, params)
    except (ValueError, TypeError) as exc:
        msg = str(exc)
        raise InvalidParams(msg, [field_error(_blame(msg, params), msg)]) from exc


@dataclass(frozen=True)
class EstimatorSpec:
    """A job's estimator, unbuilt."""

    solver: str
    task: str
    params: Mapping[str, Any]
    time_budget_s: float | None = None

    @property
    def classification(self) -> bool:
        return self.task != "regression"

    def build(self, sigma: float | None = None) -> Any:
        """An unfitted, validated estimator (``sigma`` overrides the params' own, for a study's
        sigma selection); raises :class:`InvalidParams`."""
        params = dict(self.params)
        if self.time_budget_s is not None:
            params["time_budget"] = self.time_budget_s
        if sigma is not None:
            params["sigma"] = sigma
        return _build(self.solver, self.task, params)


# -- the catalogue: GET /v1/solvers ----------------------------------------------------------------

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
    job's ``params`` may set, each with the range this module lets through."""
    tasks = []
    for task, data_task in CATALOGUE_TASKS.items():
        entry = solver["tasks"].get(data_task)
        if entry is not None:
            # The parameters _build accepts are the estimator's get_params(): these same ones.
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
    split into its kind, the interval of its numbers (within the service's bounds, as
    ``_check_ranges`` applies them), the strings it takes and whether it takes null."""
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
                    described["range"] = _range(branch, _limit(name))
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
