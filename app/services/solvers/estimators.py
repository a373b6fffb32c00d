"""A job's estimator: built from its solver, task and ``params``, which are checked first against
the solver's own parameter declarations (``solver.parameters.check_parameters``) and the service's
bounds, so that a refusal names each field at fault, the rule it breaks and the value received.

:class:`EstimatorSpec` is what a job's estimator is built from, in the API (to check a request)
and in the worker (to fit): the request's ``params`` as they are stored, plus the job's time
budget and, for a study's sigma selection, a sigma.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.core.errors import field_error
from app.services.solvers import bounds

if TYPE_CHECKING:
    from solver.parameters import ParameterProblem


class InvalidParams(ValueError):
    """Parameters the estimator refuses; ``errors`` name each bad field for the problem body."""

    def __init__(self, message: str, errors: list[dict[str, Any]]) -> None:
        super().__init__(message)
        self.errors = errors


def _build(solver: str, task: str, params: Mapping[str, Any]) -> Any:
    """An unfitted estimator for ``task`` whose parameters fit passes; raises :class:`InvalidParams`."""
    from solver import SOLVERS

    spec = SOLVERS.get(solver)
    if spec is None:
        msg = f"unknown solver {solver!r}; available: {', '.join(sorted(SOLVERS))}"
        raise InvalidParams(msg, [field_error(["body", "solver"], msg)])
    cls = spec.estimator_class(task)
    if cls is None:
        msg = f"solver {solver!r} does not support {task} data sets"
        raise InvalidParams(msg, [field_error(["body", "solver"], msg)])
    problems = _problems(cls, params)
    if problems:
        errors = [_field_error(problem) for problem in problems]
        detail = f"invalid params for {cls.__name__}: " + "; ".join(str(problem) for problem in problems)
        raise InvalidParams(detail, errors)
    return cls(**params)


def _problems(cls: type, params: Mapping[str, Any]) -> list[ParameterProblem]:
    """What estimator class ``cls`` refuses of ``params`` (at most one problem per parameter), and
    then the numbers it accepts beyond the service's bounds."""
    from solver.parameters import ParameterProblem, check_parameters

    problems = check_parameters(cls, params)
    refused = {problem.name for problem in problems}
    return problems + [
        ParameterProblem(name, bounds.rule(name), value)
        for name, value in params.items()
        if name not in refused and not bounds.within(name, value)
    ]


def _field_error(problem: ParameterProblem) -> dict[str, Any]:
    return field_error(
        ["body", "params", problem.name],
        str(problem),
        "extra_forbidden" if problem.unknown else "value_error",
        rule=problem.rule,
        input=_as_json(problem.value),
    )


def _as_json(value: Any) -> Any:
    """``value`` as JSON carries it: a number that is not finite (which Python's JSON parser reads
    from NaN and Infinity) as its name, "nan" or "inf"."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, list):
        return [_as_json(item) for item in value]
    if isinstance(value, dict):
        return {key: _as_json(item) for key, item in value.items()}
    return value


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
        """An unfitted estimator whose parameters fit passes (``sigma`` overrides the params' own,
        for a study's sigma selection); raises :class:`InvalidParams`."""
        params = dict(self.params)
        if self.time_budget_s is not None:
            params["time_budget"] = self.time_budget_s
        if sigma is not None:
            params["sigma"] = sigma
        return _build(self.solver, self.task, params)
