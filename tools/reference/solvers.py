"""docs/reference/solver-parameters.md: every solver's parameters, per task, as ``GET /v1/solvers``
lists them (``app.services.solvers.catalogue.solver_catalogue``: the estimators' own declarations within
the service's bounds)."""

from __future__ import annotations

import json
from typing import Any

from tools.reference.markdown import code, header, number, table

INTRO = """\
What a job's `"params"` may set, per solver and task, as `GET /v1/solvers` (and `pgs solvers`)
lists it: the estimators' own parameter declarations, with the ranges the service accepts. How
each solver works: [PGS](../explanation/solver.md), [the L1 solvers](../explanation/solvers-l1.md),
[the lecture's solvers](../explanation/solvers-lecture.md). With `"sigma": "auto"`, the options
of the regularisation path that chooses sigma (folds, grid, patience, ...) are not params but the
job's `"selection"` ([choose sigma](../how-to/choose-sigma.md))."""


def page() -> str:
    from app.services.solvers.catalogue import solver_catalogue

    return render(list(solver_catalogue().values()))


def render(solvers: list[dict[str, Any]]) -> str:
    sections = []
    for solver in solvers:
        text = f"## {code(solver['name'])}: {solver['title']}\n\n{solver['paper']}; {solver['algorithm']}.\n"
        for task in solver["tasks"]:
            text += (
                f"\n### {code(solver['name'])}, {task['task']}: {code(task['estimator'])}\n\n"
                f"Losses: {', '.join(code(loss) for loss in task['losses'])}.\n\n"
            )
            text += table(
                ["parameter", "type", "default", "values", "description"],
                [_row(param) for param in task["params"]],
            )
        sections.append(text)
    return (
        header("Solver parameters", "the solvers' declarations (solver/)", INTRO) + "\n" + "\n".join(sections)
    )


def _row(param: dict[str, Any]) -> list[str]:
    kind = param["type"] + (" or null" if param["nullable"] else "")
    return [
        code(param["name"]),
        kind,
        code(json.dumps(param["default"])),
        _values(param),
        param["description"],
    ]


def _values(param: dict[str, Any]) -> str:
    parts = []
    if param["range"] is not None:
        r = param["range"]
        low, high = ("[" if r["min_inclusive"] else "("), ("]" if r["max_inclusive"] else ")")
        parts.append(f"{low}{number(r['min'])}, {number(r['max'])}{high}")
    if param["choices"]:
        parts.append(", ".join(code(c) for c in param["choices"]))
    return "; ".join(parts)
