"""The rules of a study request, checked as a whole before anything is queued, and the requests
that change a study: create and cancel. Errors are problem+json (app.core.errors).

Each run is checked as the job request it becomes (app/services/jobs/requests.py), with its
errors re-addressed to ``runs[i]``; then every size against the training part, and the batch
size against the rows a fit gets at each size (less select_sigma's validation part).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from app.core.config import Settings
from app.core.errors import ProblemError, conflict, field_error, invalid
from app.core.tenants import Caller
from app.db.tables import Job, Study
from app.schemas.jobs import JobCreate
from app.schemas.studies import StudyCreate
from app.services.datasets.splits import held_out_rows
from app.services.idempotency import Idempotency, commit_created, replay
from app.services.jobs import auto_solver
from app.services.jobs import limits as job_limits
from app.services.jobs import requests as job_requests
from app.services.solvers.estimators import EstimatorSpec, InvalidParams
from app.services.studies import state as study_service

# Fields of a job request that come from one run of the study (the others are the study's own).
_RUN_FIELDS = ("solver", "params")


@dataclass(frozen=True)
class StudyPlan:
    """A checked study: its task, the rows of its training part, each run's estimator, and the
    preprocessing its jobs fit (the training set's defaults, as a job without one gets)."""

    task: str
    n_train: int
    estimators: list[Any]
    preprocessing: dict[str, Any] | None


def check_study_request(session: Session, body: StudyCreate, settings: Settings, caller: Caller) -> StudyPlan:
    _check_job_count(body)
    plans = [_check_run(session, body, index, settings, caller) for index in range(len(body.runs))]
    task, n_train = plans[0].task, plans[0].n_train
    for k, m in enumerate(body.sizes):
        n_fit = _rows_to_fit(body, k, m, n_train)
        # As for a job, but against the rows a study's fit gets: the subsample of m rows, less
        # the validation part when select_sigma chooses sigma.
        for index, plan in enumerate(plans):
            try:
                job_requests.check_batch_fits(plan.estimator, n_fit, f"rows a fit gets at size {m}")
            except ProblemError as exc:
                raise _in_run(exc, index) from exc
    return StudyPlan(task, n_train, [plan.estimator for plan in plans], plans[0].preprocessing)


def _check_job_count(body: StudyCreate) -> None:
    n_jobs = len(body.runs) * len(body.sizes) * body.repeats
    if n_jobs > study_service.MAX_STUDY_JOBS:
        msg = (
            f"runs x sizes x repeats = {len(body.runs)} x {len(body.sizes)} x {body.repeats} "
            f"= {n_jobs} jobs, more than the limit of {study_service.MAX_STUDY_JOBS}"
        )
        raise invalid(msg, [field_error(["body"], msg)])


def _check_run(
    session: Session, body: StudyCreate, index: int, settings: Settings, caller: Caller
) -> job_requests.JobPlan:
    """Run ``index`` as the job request it becomes (and its sigma grid, with select_sigma)."""
    run = body.runs[index]
    if run.solver == auto_solver.AUTO:
        auto_solver.refuse_in_study(index)
    request = JobCreate(
        dataset_id=body.dataset_id,
        test_dataset_id=body.test_dataset_id,
        test_fraction=body.test_fraction,
        split_seed=body.seed,
        solver=run.solver,
        params=run.params,
        targets=body.targets,
        time_budget_s=body.time_budget_s,
    )
    try:
        plan = job_requests.check_job_request(
            session, request, settings, caller, in_memory=body.select_sigma is not None
        )
    except ProblemError as exc:
        raise _in_run(exc, index) from exc
    if body.select_sigma is not None:
        spec = EstimatorSpec(run.solver, plan.task, run.params, body.time_budget_s)
        _check_grid(spec, set(plan.estimator.get_params()), body.select_sigma.grid, index)
    return plan


def _in_run(exc: ProblemError, index: int) -> ProblemError:
    """Re-address a job validation error about the solver or its params to ``runs[index]``."""
    errors = []
    moved = False
    for e in exc.errors or []:
        loc = list(e["loc"])
        if loc[:1] == ["body"] and len(loc) > 1 and loc[1] in _RUN_FIELDS:
            loc = ["body", "runs", index, *loc[1:]]
            moved = True
        details = {key: value for key, value in e.items() if key not in ("loc", "field", "msg", "type")}
        errors.append(field_error(loc, e["msg"], e.get("type", "value_error"), **details))
    detail = f"runs[{index}]: {exc.detail}" if moved else exc.detail
    return invalid(detail, errors)


def _check_grid(spec: EstimatorSpec, names: set[str], grid: list[float], index: int) -> None:
    if "sigma" not in names:
        msg = f"solver {spec.solver!r} has no sigma parameter; select_sigma cannot choose one"
        raise invalid(msg, [field_error(["body", "runs", index, "solver"], msg)])
    if "sigma" in spec.params:
        msg = "sigma is chosen by select_sigma; leave it out of the run's params"
        raise invalid(msg, [field_error(["body", "runs", index, "params", "sigma"], msg)])
    for j, sigma in enumerate(grid):
        try:
            spec.build(sigma)
        except InvalidParams as exc:
            msg = f"runs[{index}] with sigma={sigma}: {exc}"
            raise invalid(msg, [field_error(["body", "select_sigma", "grid", j], msg)]) from exc


def _rows_to_fit(body: StudyCreate, k: int, m: int, n_train: int) -> int:
    """The rows a fit gets at size ``m = sizes[k]``: all m, less select_sigma's validation part."""
    loc: list[str | int] = ["body", "sizes", k]
    if m > n_train:
        split = " after the test_fraction split" if body.test_fraction else ""
        msg = (
            f"size {m} is larger than the training part ({n_train} rows of data set {body.dataset_id}{split})"
        )
        raise invalid(msg, [field_error(loc, msg)])
    if body.select_sigma is None:
        return m
    fraction = body.select_sigma.validation_fraction
    try:
        n_fit = m - held_out_rows(m, fraction)
    except ValueError as exc:
        msg = (
            f"size {m} leaves no rows on one side of select_sigma's validation split "
            f"(validation_fraction {fraction})"
        )
        raise invalid(msg, [field_error(loc, msg)]) from exc
    if n_fit < 2:
        msg = (
            f"size {m} leaves {n_fit} row(s) to fit after the validation split of "
            "select_sigma; need 2 or more"
        )
        raise invalid(msg, [field_error(loc, msg)])
    return n_fit


# -- create and cancel ---------------------------------------------------------------------------


def create_study(
    session: Session, body: StudyCreate, idem: Idempotency, settings: Settings, caller: Caller
) -> tuple[Study, list[Job], bool]:
    """The study of a checked request and its queued jobs, committed; or, for an
    ``Idempotency-Key`` this caller used before with the same body, that request's study (and
    no jobs to submit). True when it is the earlier one. 429 when its jobs would pass the queue
    quotas (app/services/jobs/limits.py)."""
    existing = replay(session, idem, Study)
    if existing is not None:
        return existing, [], True
    plan = check_study_request(session, body, settings, caller)
    study = Study(
        owner=caller.owner,
        name=body.name,
        task=plan.task,
        dataset_id=body.dataset_id,
        test_dataset_id=body.test_dataset_id,
        test_fraction=body.test_fraction,
        seed=body.seed,
        n_train=plan.n_train,
        runs=[
            {
                "solver": r.solver,
                "params": r.params,
                "label": r.label or study_service.default_label(r.solver, r.params),
            }
            for r in body.runs
        ],
        sizes=sorted(body.sizes),
        repeats=body.repeats,
        targets=body.targets,
        select_sigma=None if body.select_sigma is None else body.select_sigma.model_dump(),
        time_budget_s=body.time_budget_s,
        cancel_requested=False,
    )
    limit = job_requests.time_limit(body.time_budget_s, settings)
    n_jobs = len(body.runs) * len(body.sizes) * body.repeats
    with job_limits.queue_lock:
        job_limits.check_queue_room(
            session, caller.owner, n_jobs, settings.max_queued_jobs_per_owner, settings.max_queued_jobs
        )
        session.add(study)
        session.flush()
        planned = study_service.plan_jobs(study, plan.estimators, plan.preprocessing)
        for job in planned:
            job.owner, job.time_limit_s = caller.owner, limit
        session.add_all(planned)
        winner = commit_created(session, idem, study)
    return (winner, [], True) if winner is not None else (study, planned, False)


def cancel_study(session: Session, study: Study) -> int:
    """Cancel every queued or running job of the study; returns how many were running. 409 when
    all its jobs had already finished (and it was not cancelled before)."""
    counts = study_service.job_counts(session, [study.id])[study.id]
    if not counts["queued"] + counts["running"] and not study.cancel_requested:
        raise conflict(f"study {study.id} already {study_service.derive_status(counts)}")
    running = study_service.request_cancel(session, study)
    session.commit()
    return running
