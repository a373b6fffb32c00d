"""/v1/studies: time-to-accuracy studies (create, list, read with the table, its jobs, cancel).

The plot lives in ``routes/plots.py``. A study is only a request plus ordinary jobs; see
``app.services.studies``.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request, Response
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.api.deps import RunnerDep, SessionDep, StudyDep, require_json
from app.api.pagination import CursorQuery, LimitQuery, paginate
from app.api.routes.jobs import check_batch_fits, job_read, validate_job_request
from app.core.errors import ProblemError, conflict, field_error, invalid
from app.models import Dataset, Job, Study
from app.schemas import JobCreate, JobList, StudyCreate, StudyList, StudyRead
from app.services import studies as study_service
from app.solvers import InvalidParams, build_estimator

router = APIRouter(prefix="/v1/studies", tags=["studies"])

# Fields of a job request that come from one run of the study (the others are the study's own).
_RUN_FIELDS = ("solver", "params")


def _in_run(exc: ProblemError, index: int) -> ProblemError:
    """Re-address a job validation error about the solver or its params to ``runs[index]``."""
    errors = []
    moved = False
    for e in exc.errors or []:
        loc = list(e["loc"])
        if loc[:1] == ["body"] and len(loc) > 1 and loc[1] in _RUN_FIELDS:
            loc = ["body", "runs", index, *loc[1:]]
            moved = True
        errors.append(field_error(loc, e["msg"], e.get("type", "value_error")))
    detail = f"runs[{index}]: {exc.detail}" if moved else exc.detail
    return invalid(detail, errors)


def _n_test(n: int, fraction: float) -> int:
    # The rule of app.services.datasets.split_indices (without drawing the permutation).
    return min(max(int(round(n * fraction)), 1), n - 1)


def _validate(session: Session, body: StudyCreate) -> tuple[str, int, list[set[str]]]:
    """Check the whole study before anything is queued; returns (task, n_train, the parameter
    names each run's estimator takes)."""
    n_jobs = len(body.runs) * len(body.sizes) * body.repeats
    if n_jobs > study_service.MAX_STUDY_JOBS:
        msg = (f"runs x sizes x repeats = {len(body.runs)} x {len(body.sizes)} x {body.repeats} "
               f"= {n_jobs} jobs, more than the limit of {study_service.MAX_STUDY_JOBS}")
        raise invalid(msg, [field_error(["body"], msg)])
    task = ""
    accepted: list[set[str]] = []
    estimators: list[Any] = []
    for index, run in enumerate(body.runs):
        request = JobCreate(
            dataset_id=body.dataset_id, test_dataset_id=body.test_dataset_id,
            test_fraction=body.test_fraction, split_seed=body.seed, solver=run.solver,
            params=run.params, targets=body.targets, time_budget_s=body.time_budget_s,
        )
        try:
            task = validate_job_request(session, request)
        except ProblemError as exc:
            raise _in_run(exc, index) from exc
        estimators.append(build_estimator(run.solver, task, run.params))
        names = set(estimators[-1].get_params())
        accepted.append(names)
        if body.select_sigma is not None:
            _check_grid(run.solver, run.params, task, names, body.select_sigma.grid, index)

    train = session.get(Dataset, body.dataset_id)
    assert train is not None  # validate_job_request checked it
    n_train = train.n_samples
    if body.test_fraction is not None:
        n_train -= _n_test(train.n_samples, body.test_fraction)
    for k, m in enumerate(body.sizes):
        if m > n_train:
            msg = (f"size {m} is larger than the training part ({n_train} rows of data set "
                   f"{train.id}{' after the test_fraction split' if body.test_fraction else ''})")
            raise invalid(msg, [field_error(["body", "sizes", k], msg)])
        n_fit = m
        if body.select_sigma is not None:
            n_fit = m - _n_test(m, body.select_sigma.validation_fraction)
            if n_fit < 2:
                msg = (f"size {m} leaves {n_fit} row(s) to fit after the validation split of "
                       "select_sigma; need 2 or more")
                raise invalid(msg, [field_error(["body", "sizes", k], msg)])
        # As for a job (validate_job_request), but against the rows a study's fit gets: the
        # subsample of m rows, less the validation part when select_sigma chooses sigma.
        for index, estimator in enumerate(estimators):
            try:
                check_batch_fits(estimator, n_fit, f"rows a fit gets at size {m}")
            except ProblemError as exc:
                raise _in_run(exc, index) from exc
    return task, n_train, accepted


def _check_grid(
    solver: str, params: dict[str, Any], task: str, names: set[str], grid: list[float], index: int
) -> None:
    if "sigma" not in names:
        msg = f"solver {solver!r} has no sigma parameter; select_sigma cannot choose one"
        raise invalid(msg, [field_error(["body", "runs", index, "solver"], msg)])
    if "sigma" in params:
        msg = "sigma is chosen by select_sigma; leave it out of the run's params"
        raise invalid(msg, [field_error(["body", "runs", index, "params", "sigma"], msg)])
    for j, sigma in enumerate(grid):
        try:
            build_estimator(solver, task, {**params, "sigma": sigma})
        except InvalidParams as exc:
            msg = f"runs[{index}] with sigma={sigma}: {exc}"
            raise invalid(msg, [field_error(["body", "select_sigma", "grid", j], msg)]) from exc


@router.post(
    "",
    status_code=202,
    response_model=StudyRead,
    summary="Start a time-to-accuracy study (runs x sizes x repeats jobs)",
    dependencies=[Depends(require_json)],
    responses={415: {"description": "Body is not JSON"}},
)
def create_study(
    body: StudyCreate, request: Request, response: Response, session: SessionDep,
    runner: RunnerDep,
) -> dict[str, Any]:
    task, n_train, accepted = _validate(session, body)
    study = Study(
        name=body.name, task=task, dataset_id=body.dataset_id,
        test_dataset_id=body.test_dataset_id, test_fraction=body.test_fraction, seed=body.seed,
        n_train=n_train,
        runs=[{"solver": r.solver, "params": r.params,
               "label": r.label or study_service.default_label(r.solver, r.params)}
              for r in body.runs],
        sizes=sorted(body.sizes), repeats=body.repeats, targets=body.targets,
        select_sigma=None if body.select_sigma is None else body.select_sigma.model_dump(),
        time_budget_s=body.time_budget_s, cancel_requested=False,
    )
    session.add(study)
    session.flush()
    planned = study_service.plan_jobs(study, accepted)
    session.add_all(planned)
    session.commit()
    # After the commit: a worker must find the rows. Repeat-major order (see plan_jobs).
    for job in planned:
        runner.submit(job.id)
    response.headers["Location"] = request.app.url_path_for("get_study", study_id=str(study.id))
    counts = study_service.job_counts(session, [study.id])[study.id]
    return study_service.study_read(session, study, counts, with_table=True)


@router.get("", response_model=StudyList, summary="List studies, newest first (no tables)")
def list_studies(
    session: SessionDep, limit: LimitQuery = 50, cursor: CursorQuery = None
) -> dict[str, Any]:
    items, next_cursor = paginate(session, select(Study), Study.id, limit, cursor)
    counts = study_service.job_counts(session, [s.id for s in items])
    return {
        "items": [study_service.study_read(session, s, counts[s.id], with_table=False)
                  for s in items],
        "next_cursor": next_cursor,
    }


@router.get("/{study_id}", response_model=StudyRead,
            summary="Status, progress and the time-to-target table")
def get_study(study: StudyDep, session: SessionDep) -> dict[str, Any]:
    counts = study_service.job_counts(session, [study.id])[study.id]
    return study_service.study_read(session, study, counts, with_table=True)


@router.get("/{study_id}/jobs", response_model=JobList, summary="The study's jobs, newest first")
def list_study_jobs(
    study: StudyDep, session: SessionDep, limit: LimitQuery = 50, cursor: CursorQuery = None
) -> dict[str, Any]:
    stmt = select(Job).where(Job.study_id == study.id)
    items, next_cursor = paginate(session, stmt, Job.id, limit, cursor)
    return {"items": [job_read(j) for j in items], "next_cursor": next_cursor}


@router.post(
    "/{study_id}/cancel",
    response_model=StudyRead,
    summary="Cancel every queued or running job of the study",
    responses={202: {"description": "Some jobs were running: their workers stop within ~1 s"},
               409: {"description": "All its jobs had already finished"}},
)
def cancel_study(study: StudyDep, session: SessionDep, response: Response) -> dict[str, Any]:
    counts = study_service.job_counts(session, [study.id])[study.id]
    active = counts["queued"] + counts["running"]
    if not active and not study.cancel_requested:
        raise conflict(f"study {study.id} already {study_service.derive_status(counts)}")
    running = study_service.request_cancel(session, study)
    session.commit()
    response.status_code = 202 if running else 200
    counts = study_service.job_counts(session, [study.id])[study.id]
    return study_service.study_read(session, study, counts, with_table=True)
