"""/v1/jobs: create (validated, idempotent), list, read, cancel, trace."""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Header, Query, Request, Response
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.api.deps import JobDep, PrincipalDep, RunnerDep, SessionDep, require_json
from app.api.pagination import CursorQuery, LimitQuery, paginate
from app.core.errors import conflict, field_error, invalid
from app.models import Dataset, IdempotencyKey, Job, JobStatus, TracePoint
from app.schemas import JobCreate, JobList, JobRead, TraceRead
from app.services import jobs as job_service
from app.solvers import InvalidParams, build_estimator

router = APIRouter(prefix="/v1/jobs", tags=["jobs"])

IdempotencyHeader = Annotated[
    str | None,
    Header(alias="Idempotency-Key", max_length=255,
           description="Retrying with the same key and body returns the same job"),
]


def job_read(job: Job) -> dict[str, Any]:
    fraction = None
    if job.iteration is not None and job.n_iter:
        fraction = min(job.iteration / job.n_iter, 1.0)
    return {
        **{c: getattr(job, c) for c in (
            "id", "status", "solver", "task", "dataset_id", "test_dataset_id", "test_fraction",
            "split_seed", "params", "targets", "time_budget_s", "metrics", "stop_reason", "error",
            "model_id", "attempts", "cancel_requested", "created_at", "started_at", "finished_at",
            "study_id", "study_run", "study_repeat", "train_size", "subsample_seed", "select_sigma",
        )},
        "progress": {"iteration": job.iteration, "n_iter": job.n_iter, "fraction": fraction,
                     "samples_seen": job.samples_seen},
    }


def _dataset(session: Session, ident: int, field: str) -> Dataset:
    ds = session.get(Dataset, ident)
    if ds is None:
        msg = f"dataset {ident} does not exist"
        raise invalid(msg, [field_error(["body", field], msg)])
    return ds


def validate_job_request(session: Session, body: JobCreate) -> str:
    """Check the request against the data and the estimator; returns the task (also used for
    each run of a study)."""
    train = _dataset(session, body.dataset_id, "dataset_id")
    task = train.task
    if task != "regression" and len(train.classes or []) < 2:
        msg = f"dataset {train.id} has a single class; a classifier needs two or more"
        raise invalid(msg, [field_error(["body", "dataset_id"], msg)])
    if body.test_dataset_id is not None:
        test = _dataset(session, body.test_dataset_id, "test_dataset_id")
        loc = ["body", "test_dataset_id"]
        if task == "regression":
            compatible = test.label_kind == "numeric"
        else:
            compatible = test.task != "regression" and test.label_kind == train.label_kind
        if not compatible:
            msg = (f"test dataset {test.id} ({test.task}, {test.label_kind} labels) does not fit "
                   f"the training set ({task}, {train.label_kind} labels)")
            raise invalid(msg, [field_error(loc, msg)])
        if test.n_features > train.n_features:
            msg = (f"test dataset {test.id} has {test.n_features} features, more than the "
                   f"training set's {train.n_features}")
            raise invalid(msg, [field_error(loc, msg)])
    has_test = body.test_dataset_id is not None or body.test_fraction is not None
    _check_test_scores(body.targets, "targets", task, has_test, ["body", "targets"])
    n_train = train.n_samples
    if body.test_fraction is not None:
        n_test = round(train.n_samples * body.test_fraction)
        if train.n_samples < 2 or n_test < 1 or n_test >= train.n_samples:
            msg = f"test_fraction leaves no training or no test rows of {train.n_samples}"
            raise invalid(msg, [field_error(["body", "test_fraction"], msg)])
        n_train -= n_test
    try:
        estimator = build_estimator(body.solver, task, body.params)
    except InvalidParams as exc:
        raise invalid(str(exc), exc.errors) from exc
    check_batch_fits(estimator, n_train, "training rows")
    target_score = getattr(estimator, "target_score", None)
    if target_score is not None:
        _check_test_scores([target_score], "params.target_score", task, has_test,
                           ["body", "params", "target_score"])
    return task


def _check_test_scores(values, name: str, task: str, has_test: bool, loc: list) -> None:
    """Scores to reach on the evaluation data (``targets``, ``params.target_score``): they need
    evaluation data, and are accuracies in [0, 1] or RMSEs >= 0."""
    if values and not has_test:
        msg = f"{name} can only be checked on evaluation data: give test_dataset_id or test_fraction"
    elif task != "regression" and any(not 0.0 <= t <= 1.0 for t in values):
        msg = f"classification {name} are accuracies in [0, 1]"
    elif task == "regression" and any(t < 0 for t in values):
        msg = f"regression {name} are RMSEs (>= 0)"
    else:
        return
    raise invalid(msg, [field_error(loc, msg)])


def check_batch_fits(estimator: Any, n_rows: int, rows: str) -> None:
    """The one parameter that must fit the data: every minibatch solver refuses a batch larger
    than the rows it fits on at fit time; saying so now is a 422 instead of a failed job."""
    batch_size = getattr(estimator, "batch_size", None)
    if isinstance(batch_size, int) and batch_size > n_rows:
        msg = f"batch_size {batch_size} is larger than the {n_rows} {rows}"
        raise invalid(msg, [field_error(["body", "params", "batch_size"], msg)])


def _hash(body: JobCreate) -> str:
    canonical = json.dumps(body.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def _replay(session: Session, principal: str, key: str, digest: str) -> Job | None:
    row = session.get(IdempotencyKey, (principal, key))
    if row is None:
        return None
    if row.request_hash != digest:
        raise conflict(f"Idempotency-Key {key!r} was already used with a different request body")
    job = session.get(Job, row.job_id)
    assert job is not None  # cascade: the key goes with its job
    return job


def _accepted(request: Request, response: Response, job: Job) -> dict[str, Any]:
    response.headers["Location"] = request.app.url_path_for("get_job", job_id=str(job.id))
    return job_read(job)


@router.post(
    "",
    status_code=202,
    response_model=JobRead,
    summary="Queue a training job",
    dependencies=[Depends(require_json)],
    responses={409: {"description": "Idempotency-Key reused with another body"},
               415: {"description": "Body is not JSON"}},
)
def create_job(
    body: JobCreate,
    request: Request,
    response: Response,
    session: SessionDep,
    runner: RunnerDep,
    principal: PrincipalDep,
    idempotency_key: IdempotencyHeader = None,
) -> dict[str, Any]:
    digest = _hash(body)
    if idempotency_key is not None:
        existing = _replay(session, principal, idempotency_key, digest)
        if existing is not None:
            response.headers["Idempotent-Replayed"] = "true"
            return _accepted(request, response, existing)
    task = validate_job_request(session, body)
    job = Job(
        status=JobStatus.QUEUED, solver=body.solver, task=task, dataset_id=body.dataset_id,
        test_dataset_id=body.test_dataset_id, test_fraction=body.test_fraction,
        split_seed=body.split_seed, params=body.params, targets=body.targets,
        time_budget_s=body.time_budget_s,
    )
    session.add(job)
    session.flush()
    if idempotency_key is not None:
        session.add(IdempotencyKey(principal=principal, key=idempotency_key,
                                   request_hash=digest, job_id=job.id))
    try:
        session.commit()
    except IntegrityError:
        # A concurrent request with the same key won the race: answer with its job.
        session.rollback()
        assert idempotency_key is not None
        existing = _replay(session, principal, idempotency_key, digest)
        assert existing is not None
        response.headers["Idempotent-Replayed"] = "true"
        return _accepted(request, response, existing)
    # Submitted after the commit: a worker must find the row.
    runner.submit(job.id)
    return _accepted(request, response, job)


StatusQuery = Annotated[
    Literal["queued", "running", "succeeded", "failed", "cancelled"] | None,
    Query(description="Only jobs in this state"),
]


@router.get("", response_model=JobList, summary="List jobs, newest first")
def list_jobs(
    session: SessionDep,
    status: StatusQuery = None,
    limit: LimitQuery = 50,
    cursor: CursorQuery = None,
) -> dict[str, Any]:
    stmt = select(Job)
    if status is not None:
        stmt = stmt.where(Job.status == status)
    items, next_cursor = paginate(session, stmt, Job.id, limit, cursor)
    return {"items": [job_read(j) for j in items], "next_cursor": next_cursor}


@router.get("/{job_id}", response_model=JobRead, summary="Status, progress and metrics")
def get_job(job: JobDep) -> dict[str, Any]:
    return job_read(job)


@router.post(
    "/{job_id}/cancel",
    response_model=JobRead,
    summary="Cancel a queued or running job",
    responses={202: {"description": "Running: the worker stops within about a second"},
               409: {"description": "The job already finished"}},
)
def cancel_job(job: JobDep, session: SessionDep, response: Response) -> dict[str, Any]:
    if job.status in (JobStatus.SUCCEEDED, JobStatus.FAILED):
        raise conflict(f"job {job.id} already {job.status}")
    if job.status in JobStatus.ACTIVE:
        job_service.request_cancel(session, job)
        session.commit()
    response.status_code = 202 if job.status == JobStatus.RUNNING else 200
    return job_read(job)


@router.get("/{job_id}/trace", response_model=TraceRead, summary="Checkpoints of the run")
def get_trace(job: JobDep, session: SessionDep) -> dict[str, Any]:
    points = list(
        session.scalars(
            select(TracePoint).where(TracePoint.job_id == job.id).order_by(TracePoint.seq)
        )
    )
    score_name = next((p.score_name for p in points if p.score_name), None)
    return {"job_id": job.id, "score_name": score_name, "points": points}
