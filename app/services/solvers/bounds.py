"""The service's bounds on every numeric solver parameter, whatever the solver accepts: beyond them
a count (n_iter=10**18) runs for ever or overflows the kernels' int64 (2**63), and a time
(time_budget=1e300) means no limit at all."""

from __future__ import annotations

import math
from typing import Any

MAX_PARAM_MAGNITUDE = 10**12
# The longest time budget, in seconds (the same cap as a job's time_budget_s).
MAX_TIME_BUDGET_S = 7 * 86400


def limit(name: str) -> float:
    """The largest magnitude the service accepts for the numeric parameter ``name``."""
    return MAX_TIME_BUDGET_S if name == "time_budget" else MAX_PARAM_MAGNITUDE


def rule(name: str) -> str:
    """The bound of ``name`` in words."""
    return f"a finite number of magnitude at most {limit(name):g}"


def within(name: str, value: Any) -> bool:
    """Whether ``value`` of parameter ``name`` keeps the bound (a value that is not a number is the
    solver's to judge)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return True
    return math.isfinite(value) and abs(value) <= limit(name)


def bounded(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """``schema``, the JSON Schema of parameter ``name``'s values, with its numbers cut to the
    bound: one lower and one upper bound, each inclusive or exclusive."""
    if "anyOf" in schema:
        return {**schema, "anyOf": [bounded(name, branch) for branch in schema["anyOf"]]}
    kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    if "number" not in kinds and "integer" not in kinds:
        return schema
    low, low_key = -limit(name), "minimum"
    for key in ("minimum", "exclusiveMinimum"):
        if key in schema and schema[key] >= low:
            low, low_key = schema[key], key
    high, high_key = limit(name), "maximum"
    for key in ("maximum", "exclusiveMaximum"):
        if key in schema and schema[key] <= high:
            high, high_key = schema[key], key
    unbounded = {key: value for key, value in schema.items() if "imum" not in key}
    return {**unbounded, low_key: low, high_key: high}
