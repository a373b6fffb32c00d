"""Annotated dependencies: settings, sessions, the caller, the runner, and lookups that 404.

The ones that only read app.state are ``async def``: FastAPI runs plain ``def`` dependencies in the
thread pool, and a thread hop per dependency is most of a small prediction's overhead.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Path, Request
from sqlalchemy.orm import Session, sessionmaker

from app.core.config import Settings
from app.core.errors import ProblemError, not_found
from app.core.security import require_api_key
from app.models import Dataset, Job, Model, Study
from app.runner import JobRunner
from app.services.model_store import ModelCache


async def get_settings_dep(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


async def get_factory(request: Request) -> sessionmaker[Session]:
    factory: sessionmaker[Session] = request.app.state.session_factory
    return factory


def get_session(request: Request) -> Iterator[Session]:
    factory: sessionmaker[Session] = request.app.state.session_factory
    with factory() as session:
        yield session


async def get_runner(request: Request) -> JobRunner:
    runner: JobRunner = request.app.state.runner
    return runner


async def get_cache(request: Request) -> ModelCache:
    cache: ModelCache = request.app.state.model_cache
    return cache


SettingsDep = Annotated[Settings, Depends(get_settings_dep)]
FactoryDep = Annotated[sessionmaker[Session], Depends(get_factory)]
SessionDep = Annotated[Session, Depends(get_session)]
RunnerDep = Annotated[JobRunner, Depends(get_runner)]
CacheDep = Annotated[ModelCache, Depends(get_cache)]
PrincipalDep = Annotated[str, Depends(require_api_key)]


def get_dataset(dataset_id: Annotated[int, Path(ge=1)], session: SessionDep) -> Dataset:
    ds = session.get(Dataset, dataset_id)
    if ds is None:
        raise not_found("dataset", dataset_id)
    return ds


def get_job(job_id: Annotated[int, Path(ge=1)], session: SessionDep) -> Job:
    job = session.get(Job, job_id)
    if job is None:
        raise not_found("job", job_id)
    return job


def get_model_row(model_id: Annotated[int, Path(ge=1)], session: SessionDep) -> Model:
    model = session.get(Model, model_id)
    if model is None:
        raise not_found("model", model_id)
    return model


def get_study(study_id: Annotated[int, Path(ge=1)], session: SessionDep) -> Study:
    study = session.get(Study, study_id)
    if study is None:
        raise not_found("study", study_id)
    return study


DatasetDep = Annotated[Dataset, Depends(get_dataset)]
JobDep = Annotated[Job, Depends(get_job)]
ModelRowDep = Annotated[Model, Depends(get_model_row)]
StudyDep = Annotated[Study, Depends(get_study)]


def require_json(request: Request) -> None:
    """415 for a body that is not JSON (instead of a confusing validation error)."""
    ctype = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if ctype != "application/json" and not ctype.endswith("+json"):
        raise ProblemError(415, "send the request body as application/json",
                           kind="unsupported-media-type")
