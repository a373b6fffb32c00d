"""/v1/jobs: create (validated, idempotent), list, read (or wait for the end), edit labels,
cancel, trace."""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from sqlalchemy import select

from app.api import examples
from app.api.deps import (
    CallerDep,
    FactoryDep,
    IdempotencyKeyHeader,
    JobDep,
    MetricsDep,
    RunnerDep,
    SessionDep,
    SettingsDep,
    require_json,
)
from app.api.filters import NameQuery, SearchQuery, SortQuery, TagsQuery, search_filter, sort_columns
from app.api.openapi import BODY_GUARDS, example, problems
from app.api.pagination import CursorQuery, LimitQuery, paginate
from app.background.job_ends import JobEnds
from app.core.server import SHUTTING_DOWN
from app.core.tenants import Caller
from app.db.engine import SessionFactory
from app.db.tables import Job, JobStatus
from app.schemas.jobs import JobCreate, JobList, JobPatch, JobRead, TraceRead
from app.services import labels
from app.services.idempotency import idempotency
from app.services.jobs import requests as job_requests
from app.services.jobs import state as job_service
from app.services.ownership import owned_or_404, visible_to
from app.training.runner import JobRunner

router = APIRouter(prefix="/v1/jobs", tags=["jobs"])


@router.post(
    "",
    status_code=202,
    response_model=JobRead,
    summary="Queue a training job",
    dependencies=[Depends(require_json)],
    responses={
        **example(202, examples.QUEUED_JOB),
        **problems(
            *BODY_GUARDS,
            (409, "The Idempotency-Key was used with another body"),
            (415, "The body is not JSON"),
            (422, "Invalid request, or its model would pass PGS_MAX_MODEL_BYTES"),
            (429, "The caller's or the server's queue is full"),
        ),
    },
)
def create_job(
    body: JobCreate,
    request: Request,
    response: Response,
    session: SessionDep,
    runner: RunnerDep,
    caller: CallerDep,
    settings: SettingsDep,
    idempotency_key: IdempotencyKeyHeader = None,
) -> Job:
    idem = idempotency(caller.key_id, idempotency_key, "POST /v1/jobs", body.model_dump(mode="json"))
    job, replayed = job_requests.create_job(session, body, idem, settings, caller)
    if replayed:
        response.headers["Idempotent-Replayed"] = "true"
    else:
        runner.submit(job.id)  # after the commit: a worker must find the row
    response.headers["Location"] = request.app.url_path_for("get_job", job_id=str(job.id))
    return job


StatusQuery = Annotated[
    Literal["queued", "running", "succeeded", "failed", "cancelled"] | None,
    Query(description="Only jobs in this state"),
]


DatasetQuery = Annotated[int | None, Query(ge=1, description="Only jobs trained on this data set")]
TestDatasetQuery = Annotated[
    int | None, Query(ge=1, description="Only jobs evaluated on this data set (their test_dataset_id)")
]
SolverQuery = Annotated[str | None, Query(max_length=32, description="Only jobs of this solver")]
JOB_SORTS = {
    "created_at": Job.created_at,
    "started_at": Job.started_at,
    "finished_at": Job.finished_at,
    "name": Job.name,
    "status": Job.status,
    "solver": Job.solver,
}


@router.get(
    "",
    response_model=JobList,
    summary="List jobs, newest first",
    responses=example(200, examples.page(examples.JOB)),
)
def list_jobs(
    session: SessionDep,
    caller: CallerDep,
    status: StatusQuery = None,
    dataset_id: DatasetQuery = None,
    test_dataset_id: TestDatasetQuery = None,
    solver: SolverQuery = None,
    name: NameQuery = None,
    tag: TagsQuery = None,
    q: SearchQuery = None,
    sort: SortQuery = None,
    limit: LimitQuery = 50,
    cursor: CursorQuery = None,
) -> dict[str, Any]:
    """``q`` searches the name and the model name; ``sort``: id, created_at, started_at,
    finished_at, name, status, solver."""
    stmt = visible_to(select(Job), Job, caller).where(*labels.tag_filter(Job.tags, tag or []))
    stmt = stmt.where(*search_filter([Job.name, Job.model_name], q))
    if name is not None:
        stmt = stmt.where(Job.name == name)
    if status is not None:
        stmt = stmt.where(Job.status == status)
    if dataset_id is not None:
        stmt = stmt.where(Job.dataset_id == dataset_id)
    if test_dataset_id is not None:
        stmt = stmt.where(Job.test_dataset_id == test_dataset_id)
    if solver is not None:
        stmt = stmt.where(Job.solver == solver)
    order = sort_columns(sort, JOB_SORTS, Job.id)
    items, next_cursor = paginate(session, stmt, Job.id, limit, cursor, order)
    return {"items": items, "next_cursor": next_cursor}


MAX_WAIT_S = 30.0
# What a poll that may not wait (its owner's polls are at PGS_MAX_LONG_POLLS_PER_OWNER) is asked
# to pause before the next: a client that polls in a loop must not spin.
BUSY_RETRY_AFTER_S = 5

JobId = Annotated[int, Path(ge=1)]
WaitQuery = Annotated[
    float,
    Query(
        ge=0,
        le=MAX_WAIT_S,
        description="Long poll: answer as soon as the job has ended (succeeded, failed or cancelled), "
        "or after this many seconds (or when the server begins to stop) with the job as it is then. "
        "0 answers at once. A client that waits for a job sees its end when it happens instead of "
        "at its next poll. When the caller's owner already has PGS_MAX_LONG_POLLS_PER_OWNER polls "
        f"waiting, the answer comes at once, with `Retry-After: {BUSY_RETRY_AFTER_S}`.",
    ),
]


@router.get(
    "/{job_id}",
    response_model=JobRead,
    summary="Status, progress and metrics",
    responses={**example(200, examples.JOB), **problems(404)},
)
async def get_job(
    job_id: JobId,
    request: Request,
    response: Response,
    factory: FactoryDep,
    runner: RunnerDep,
    metrics: MetricsDep,
    caller: CallerDep,
    wait: WaitQuery = 0.0,
) -> JobRead:
    deadline = time.monotonic() + wait
    read = await run_in_threadpool(_read_job, factory, runner, job_id, caller)
    if _answers_now(read, deadline):
        return read
    job_ends: JobEnds = request.app.state.job_ends
    with job_ends.admitted(caller.owner) as admitted:
        if not admitted:
            response.headers["Retry-After"] = str(BUSY_RETRY_AFTER_S)
            return read
        with metrics.long_polls.track_inprogress():
            while not _answers_now(read, deadline):
                # No thread and no connection while it waits: see app/background/job_ends.py.
                await job_ends.wait(job_id, deadline - time.monotonic())
                read = await run_in_threadpool(_read_job, factory, runner, job_id, caller)
    return read


def _answers_now(read: JobRead, deadline: float) -> bool:
    return read.status in JobStatus.TERMINAL or time.monotonic() >= deadline or SHUTTING_DOWN.is_set()


def _read_job(factory: SessionFactory, runner: JobRunner, job_id: int, caller: Caller) -> JobRead:
    with factory() as session:
        read = JobRead.model_validate(owned_or_404(session, Job, job_id, "job", caller))
    if read.status == JobStatus.QUEUED:
        read.waiting_reason = runner.waiting_reason(job_id)
    return read


@router.patch(
    "/{job_id}",
    response_model=JobRead,
    dependencies=[Depends(require_json)],
    summary="Name, describe or tag a job",
    responses={**example(200, examples.JOB), **problems(*BODY_GUARDS, 404, (415, "The body is not JSON"))},
)
def patch_job(job: JobDep, body: JobPatch, session: SessionDep) -> Job:
    labels.apply_changes(job, body.changes())
    session.commit()
    return job


@router.post(
    "/{job_id}/cancel",
    response_model=JobRead,
    summary="Cancel a queued or running job",
    responses={
        **example(200, examples.CANCELLED_JOB, "Was queued: cancelled"),
        **example(
            202,
            {**examples.JOB, "status": "running", "cancel_requested": True},
            "Running: the worker stops within about a second",
        ),
        **problems(*BODY_GUARDS, 404, (409, "The job already succeeded or failed")),
    },
)
def cancel_job(job: JobDep, session: SessionDep, request: Request, response: Response) -> Job:
    job_requests.cancel_job(session, job)
    if job.status == JobStatus.CANCELLED:  # was queued: no run will come back to say so
        request.app.state.job_ends.ended(job.id)
    response.status_code = 202 if job.status == JobStatus.RUNNING else 200
    return job


@router.get(
    "/{job_id}/trace",
    response_model=TraceRead,
    summary="Checkpoints of the run",
    responses={**example(200, examples.TRACE), **problems(404)},
)
def get_trace(job: JobDep, session: SessionDep) -> dict[str, Any]:
    points = job_service.trace_points(session, job.id)
    score_name = next((p.score_name for p in points if p.score_name), None)
    return {"job_id": job.id, "score_name": score_name, "points": points}
