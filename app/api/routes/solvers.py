"""/v1/solvers: the solvers a job can name, their tasks, losses and parameters
(app/services/solvers/catalogue.py)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path

from app.api.openapi import example, problems
from app.core.errors import not_found
from app.schemas.solvers import SolverList, SolverRead
from app.services.solvers.catalogue import solver_catalogue

router = APIRouter(prefix="/v1/solvers", tags=["solvers"])

# The schema's own example (app/schemas/), shown as the answer's.
_SOLVER_EXAMPLE = SolverRead.model_config["json_schema_extra"]["examples"][0]  # type: ignore[index]


@router.get(
    "",
    response_model=SolverList,
    summary="Every solver, its losses and parameters",
    responses=example(200, {"solvers": [_SOLVER_EXAMPLE]}),
)
def list_solvers() -> dict[str, Any]:
    return {"solvers": list(solver_catalogue().values())}


@router.get(
    "/{name}",
    response_model=SolverRead,
    summary="One solver, its losses and parameters",
    responses={**example(200, _SOLVER_EXAMPLE), **problems((404, "No solver of that name"))},
)
def get_solver(name: Annotated[str, Path(description="As in a job's solver")]) -> dict[str, Any]:
    solver = solver_catalogue().get(name)
    if solver is None:
        raise not_found("solver", name)
    return solver
