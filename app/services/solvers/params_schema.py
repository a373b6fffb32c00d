"""Each solver's ``params`` as a JSON Schema in the OpenAPI document, so that a client generated
from it types them: a component ``<Solver>Params`` per solver (``PGSParams``, ``SCDParams``, ...),
from the same declarations and bounds the check of a request applies, and the ``params`` of a job
and of a study's run as any of them (the one of its ``solver``, which lists the solvers' names,
and for a job "auto", whose params are those of the solver it chooses).
"""

from __future__ import annotations

import json
from typing import Any

from app.services.jobs.selection import SELECTION_PARAMS
from app.services.solvers import bounds
from app.services.solvers.catalogue import CATALOGUE_TASKS

_COMPONENTS = "#/components/schemas/"
# The request models whose ``solver`` names a solver and whose ``params`` are its parameters.
REQUEST_MODELS = ("JobCreate", "StudyRun")
# The request models whose ``solver`` may also be "auto" (a study names its solvers).
AUTO_MODELS = ("JobCreate",)


def add_params_schemas(document: dict[str, Any]) -> None:
    """Add the solvers' ``<Solver>Params`` to ``document``'s components and refer to them from
    the ``params`` of REQUEST_MODELS."""
    from solver import SOLVERS

    schemas = document["components"]["schemas"]
    components = {}
    for name, spec in SOLVERS.items():
        # Named as its estimators are: PGSClassifier and PGSRegressor take PGSParams.
        component = (
            spec.estimators[0].__name__.removesuffix("Classifier").removesuffix("Regressor") + "Params"
        )
        schemas[component] = _params_schema(component, spec.describe())
        components[name] = component
    which = ", ".join(f"{component} for {name}" for name, component in components.items())
    for model in REQUEST_MODELS:
        properties = schemas[model]["properties"]
        properties["solver"]["enum"] = list(components) + (["auto"] if model in AUTO_MODELS else [])
        properties["params"] = {
            "title": properties["params"]["title"],
            "description": f"{properties['params']['description']}; the schema of its solver's: {which}",
            "anyOf": [{"$ref": _COMPONENTS + component} for component in components.values()],
        }


def _params_schema(component: str, solver: dict[str, Any]) -> dict[str, Any]:
    """The ``params`` a job of ``solver`` (``solver.SolverSpec.describe``) may set, on any task."""
    per_task = {
        task: {
            name: info
            for name, info in solver["tasks"][data_task]["parameters"].items()
            if name not in SELECTION_PARAMS  # set by a job's selection
        }
        for task, data_task in CATALOGUE_TASKS.items()
        if data_task in solver["tasks"]
    }
    names = dict.fromkeys(name for parameters in per_task.values() for name in parameters)
    estimators = " and ".join(solver["tasks"][CATALOGUE_TASKS[task]]["estimator"] for task in per_task)
    return {
        "title": component,
        "description": f'The params of a job whose solver is "{solver["name"]}": the parameters of '
        f"{estimators}, within the service's bounds on numbers",
        "type": "object",
        "properties": {
            name: _property(
                name, {task: parameters[name] for task, parameters in per_task.items() if name in parameters}
            )
            for name in names
        },
        "additionalProperties": False,
    }


def _property(name: str, by_task: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """One parameter (``solver.parameters.describe_parameters``) as a JSON Schema property."""
    infos = list(by_task.values())
    if all(info == infos[0] for info in infos):
        return {
            **bounds.bounded(name, infos[0]["schema"]),
            "default": infos[0]["default"],
            "description": infos[0]["description"],
        }
    # Declared apart for classification and regression (each estimator's losses): both, and
    # which is which in the description.
    return {
        "anyOf": [bounds.bounded(name, info["schema"]) for info in infos],
        "description": " ".join(
            f"{task}: {info['description']} Default {json.dumps(info['default'])}."
            for task, info in by_task.items()
        ),
    }
