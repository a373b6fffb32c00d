"""Annotated dependencies: settings, sessions, the caller, the runner, and lookups that 404.

The ones that only read app.state are ``async def``: FastAPI runs plain ``def`` dependencies in the
thread pool, and a thread hop per dependency is most of a small prediction's overhead.

No ``from __future__ import annotations`` here: FastAPI reads the annotations of the lookup that
:func:`get_or_404` makes, and a postponed one could not see the closure's ``resource``.
"""

from collections.abc import Iterator
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Header, Path, Request
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from sqlalchemy.orm import Session

from app.core.config import Settings
from app.core.errors import ProblemError
from app.core.metrics import ServiceMetrics
from app.core.security import current_caller
from app.core.tenants import Caller
from app.db.engine import SessionFactory
from app.db.tables import Dataset, Job, Model, Study
from app.services.model_registry.artifacts import ModelCache
from app.services.model_registry.versions import resolve_ref
from app.services.ownership import owned_or_404
from app.training.runner import JobRunner

Row = TypeVar("Row", Dataset, Job, Study)


async def get_settings_dep(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


async def get_factory(request: Request) -> SessionFactory:
    factory: SessionFactory = request.app.state.session_factory
    return factory


def get_session(request: Request) -> Iterator[Session]:
    factory: SessionFactory = request.app.state.session_factory
    with factory() as session:
        yield session


async def get_runner(request: Request) -> JobRunner:
    runner: JobRunner = request.app.state.runner
    return runner


async def get_cache(request: Request) -> ModelCache:
    cache: ModelCache = request.app.state.model_cache
    return cache


async def get_metrics(request: Request) -> ServiceMetrics:
    metrics: ServiceMetrics = request.app.state.metrics
    return metrics


SettingsDep = Annotated[Settings, Depends(get_settings_dep)]
FactoryDep = Annotated[SessionFactory, Depends(get_factory)]
SessionDep = Annotated[Session, Depends(get_session)]
RunnerDep = Annotated[JobRunner, Depends(get_runner)]
CacheDep = Annotated[ModelCache, Depends(get_cache)]
CallerDep = Annotated[Caller, Depends(current_caller)]
MetricsDep = Annotated[ServiceMetrics, Depends(get_metrics)]


def get_or_404(model: type[Row], resource: str) -> Any:
    """A dependency that loads the ``model`` row named by the path's ``{resource}_id``, or
    answers 404."""

    def load(
        ident: Annotated[int, Path(alias=f"{resource}_id", ge=1)],
        request: Request,
        session: SessionDep,
        caller: CallerDep,
    ) -> Row:
        row = owned_or_404(session, model, ident, resource, caller)
        request.state.object_owner = row.owner  # whose object a write changes (app/api/audit.py)
        return row

    return Depends(load)


ModelRef = Annotated[str, Path(alias="model_id", max_length=400, description="The model's id, or name@alias")]


def load_model_row(ref: ModelRef, request: Request, session: SessionDep, caller: CallerDep) -> Model:
    """The model a path names by id or by ``name@alias`` of the caller's owner
    (services/model_registry/versions.py), or 404."""
    ident = resolve_ref(session, ref, caller.owner)
    row = owned_or_404(session, Model, ident, "model", caller)
    request.state.object_owner = row.owner
    return row


DatasetDep = Annotated[Dataset, get_or_404(Dataset, "dataset")]
JobDep = Annotated[Job, get_or_404(Job, "job")]
ModelRowDep = Annotated[Model, Depends(load_model_row)]
StudyDep = Annotated[Study, get_or_404(Study, "study")]


def require_json(request: Request) -> None:
    """415 for a body that is not JSON (instead of a confusing validation error)."""
    ctype = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if ctype != "application/json" and not ctype.endswith("+json"):
        raise ProblemError(415, "send the request body as application/json", kind="unsupported-media-type")


def _declared_query(route: APIRoute) -> frozenset[str]:
    """The query parameters of the operation and of all its dependencies."""
    names: set[str] = set()
    pending = [route.dependant]
    while pending:
        dependant = pending.pop()
        names.update(field.alias for field in dependant.query_params)
        pending.extend(dependant.dependencies)
    return frozenset(names)


async def reject_unknown_query(request: Request) -> None:
    """422 naming every query parameter the operation does not declare: a misspelt filter
    (``?dataset=4`` for ``?dataset_id=4``) must not silently answer for everything."""
    route = request.scope.get("route")
    if not request.query_params or not isinstance(route, APIRoute):
        return
    unknown = sorted(set(request.query_params) - _declared_query(route))
    if unknown:
        raise RequestValidationError(
            [
                {"loc": ("query", name), "msg": "unknown query parameter", "type": "extra_forbidden"}
                for name in unknown
            ]
        )


IdempotencyKeyHeader = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        max_length=255,
        description="Retrying with the same key and request answers with the resource the "
        "first request created (Idempotent-Replayed: true), never a second one; the same key "
        "with another request is a 409",
    ),
]
