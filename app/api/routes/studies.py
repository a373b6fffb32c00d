"""/v1/studies: time-to-accuracy studies (create, list, read with the table, its jobs, cancel).

The plot lives in ``routes/plots.py``. A study is only a request plus ordinary jobs; see
``app.services.studies.state``.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request, Response
from sqlalchemy import select

from app.api import examples
from app.api.deps import (
    CallerDep,
    IdempotencyKeyHeader,
    RunnerDep,
    SessionDep,
    SettingsDep,
    StudyDep,
    require_json,
)
from app.api.filters import SearchQuery, SortQuery, search_filter, sort_columns
from app.api.openapi import BODY_GUARDS, example, problems
from app.api.pagination import CursorQuery, LimitQuery, paginate
from app.db.tables import Job, Study
from app.schemas.jobs import JobList
from app.schemas.studies import StudyCreate, StudyList, StudyRead
from app.services.idempotency import idempotency
from app.services.ownership import visible_to
from app.services.studies import requests as study_requests
from app.services.studies import state as study_service

router = APIRouter(prefix="/v1/studies", tags=["studies"])


@router.post(
    "",
    status_code=202,
    response_model=StudyRead,
    summary="Start a time-to-accuracy study (runs x sizes x repeats jobs)",
    dependencies=[Depends(require_json)],
    responses={
        **example(202, {**examples.STUDY, "status": "queued"}),
        **problems(
            *BODY_GUARDS,
            (409, "The Idempotency-Key was used with another body"),
            (415, "The body is not JSON"),
            (429, "The caller's or the server's queue cannot take the study's jobs"),
        ),
    },
)
def create_study(
    body: StudyCreate,
    request: Request,
    response: Response,
    session: SessionDep,
    runner: RunnerDep,
    caller: CallerDep,
    settings: SettingsDep,
    idempotency_key: IdempotencyKeyHeader = None,
) -> dict[str, Any]:
    idem = idempotency(caller.key_id, idempotency_key, "POST /v1/studies", body.model_dump(mode="json"))
    study, planned, replayed = study_requests.create_study(session, body, idem, settings, caller)
    if replayed:
        response.headers["Idempotent-Replayed"] = "true"
    # After the commit: a worker must find the rows. Repeat-major order (see plan_jobs).
    for job in planned:
        runner.submit(job.id)
    response.headers["Location"] = request.app.url_path_for("get_study", study_id=str(study.id))
    return study_service.study_read(session, study, with_table=True)


@router.get(
    "",
    response_model=StudyList,
    summary="List studies, newest first (no tables)",
    responses=example(200, examples.page({**examples.STUDY, "table": None})),
)
def list_studies(
    session: SessionDep,
    caller: CallerDep,
    q: SearchQuery = None,
    sort: SortQuery = None,
    limit: LimitQuery = 50,
    cursor: CursorQuery = None,
) -> dict[str, Any]:
    """``q`` searches the name; ``sort``: id, created_at, name."""
    stmt = visible_to(select(Study), Study, caller).where(*search_filter([Study.name], q))
    order = sort_columns(sort, {"created_at": Study.created_at, "name": Study.name}, Study.id)
    items, next_cursor = paginate(session, stmt, Study.id, limit, cursor, order)
    counts = study_service.job_counts(session, [s.id for s in items])
    return {
        "items": [study_service.study_read(session, s, counts[s.id], with_table=False) for s in items],
        "next_cursor": next_cursor,
    }


@router.get(
    "/{study_id}",
    response_model=StudyRead,
    summary="Status, progress and the time-to-target table",
    responses={**example(200, examples.STUDY), **problems(404)},
)
def get_study(study: StudyDep, session: SessionDep) -> dict[str, Any]:
    return study_service.study_read(session, study, with_table=True)


@router.get(
    "/{study_id}/jobs",
    response_model=JobList,
    summary="The study's jobs, newest first",
    responses={**example(200, examples.page(examples.JOB)), **problems(404)},
)
def list_study_jobs(
    study: StudyDep, session: SessionDep, limit: LimitQuery = 50, cursor: CursorQuery = None
) -> dict[str, Any]:
    stmt = select(Job).where(Job.study_id == study.id)
    items, next_cursor = paginate(session, stmt, Job.id, limit, cursor)
    return {"items": items, "next_cursor": next_cursor}


@router.post(
    "/{study_id}/cancel",
    response_model=StudyRead,
    summary="Cancel every queued or running job of the study",
    responses={
        **example(
            200,
            {**examples.STUDY, "status": "cancelled", "cancel_requested": True},
            "No job was running: all are cancelled",
        ),
        **example(
            202,
            {**examples.STUDY, "cancel_requested": True},
            "Some jobs were running: their workers stop within about a second",
        ),
        **problems(*BODY_GUARDS, 404, (409, "All its jobs had already finished")),
    },
)
def cancel_study(study: StudyDep, session: SessionDep, response: Response) -> dict[str, Any]:
    running = study_requests.cancel_study(session, study)
    response.status_code = 202 if running else 200
    return study_service.study_read(session, study, with_table=True)
