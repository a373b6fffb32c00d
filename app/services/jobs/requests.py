"""The rules of a job request, checked before anything is queued, and the requests that change a
job: create (idempotent) and cancel. Errors are problem+json (app.core.errors).

A request is checked against its data sets (they exist, the test set fits the training set), its
evaluation (scores to reach need evaluation data) and its estimator, built once from the request
as the worker will build it (:class:`app.services.solvers.estimators.EstimatorSpec`); the one
parameter that must fit the data, the batch size, is checked against the rows the fit will get.
A study checks each of its runs with the same rules (app/services/studies/requests.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from app.core.config import Settings
from app.core.errors import conflict, field_error, invalid
from app.core.tenants import Caller
from app.db.tables import Dataset, Job, JobStatus
from app.schemas.jobs import JobCreate
from app.services.datasets.splits import held_out_rows
from app.services.datasets.unlabelled import require_labels
from app.services.idempotency import Idempotency, commit_created, replay
from app.services.jobs import auto_solver, selection, threshold, warm_start
from app.services.jobs import limits as job_limits
from app.services.jobs import state as jobs
from app.services.jobs import weights as job_weights
from app.services.jobs.preprocessing import resolve as resolve_preprocessing
from app.services.metrics import names as metric_names
from app.services.metrics.evaluation import has_proba
from app.services.ownership import referenced_or_422
from app.services.solvers.estimators import EstimatorSpec, InvalidParams
from solver.auto import SolverChoice


@dataclass(frozen=True)
class JobPlan:
    """A checked request: its task, how many rows its fit gets, its (unfitted) estimator, its
    solver."""

    task: str
    n_train: int
    estimator: Any
    preprocessing: dict[str, Any] | None
    # The solver it trains with: the request's, or the one "auto" chose.
    solver: str
    # The model the fit starts from (init_model), None for a cold start.
    init_model_id: int | None = None
    # For "auto": {"requested", "chosen", "reason"} (solver.auto.SolverChoice.as_dict).
    solver_choice: dict[str, str] | None = None


def check_job_request(
    session: Session, body: JobCreate, settings: Settings, caller: Caller, in_memory: bool = False
) -> JobPlan:
    """``in_memory``: the job holds its rows in memory whatever its solver (a study's sigma
    selection). Its data sets must exist for ``caller``."""
    train = referenced_or_422(session, Dataset, body.dataset_id, caller, ["body", "dataset_id"], "dataset")
    require_labels(train, ["body", "dataset_id"], "a model is trained on labelled rows")
    task = train.task
    if task != "regression" and len(train.classes or []) < 2:
        msg = f"dataset {train.id} has a single class; a classifier needs two or more"
        raise invalid(msg, [field_error(["body", "dataset_id"], msg)])
    datasets = [train]
    if body.test_dataset_id is not None:
        datasets.append(
            referenced_or_422(
                session, Dataset, body.test_dataset_id, caller, ["body", "test_dataset_id"], "dataset"
            )
        )
        _check_test_dataset(train, datasets[-1])
    has_test = body.test_dataset_id is not None or body.test_fraction is not None
    check_target_metric(body, task)
    loc: list[str | int] = (
        ["body", "targets"] if body.target_metric is None else ["body", "targets", "values"]
    )
    check_test_scores(body.target_values, "targets", task, has_test, loc, body.target_metric)
    n_train = train.n_samples
    if body.test_fraction is not None:
        n_train -= _held_out(train.n_samples, body.test_fraction)
    body, choice = auto_solver.resolve(body, train, task, n_train)
    selection.check_request(body, train, n_train, settings.store)
    weight_column = job_weights.check_request(body, task, datasets, settings, in_memory)
    params = body.params | selection.estimator_params(selection.stored_options(body))
    estimator = checked_estimator(EstimatorSpec(body.solver, task, params, body.time_budget_s), choice)
    check_batch_fits(estimator, n_train, "training rows")
    threshold.check_request(body, task, len(train.classes or []), estimator)
    if body.target_metric in metric_names.NEEDS_PROBABILITIES and not has_proba(estimator):
        msg = f"targets.metric {body.target_metric} needs probabilities: a logistic loss"
        raise invalid(msg, [field_error(["body", "targets", "metric"], msg)])
    job_limits.check_model_size(estimator, train, settings.max_model_bytes)
    in_memory = in_memory or threshold.needs_validation_fit(threshold.stored_options(body))
    early_stopping = bool(getattr(estimator, "early_stopping", False))
    job_limits.check_data_memory(
        body.solver,
        datasets,
        in_memory or early_stopping,
        settings.worker_memory_bytes,
        why="early stopping (params.early_stopping) sets validation rows apart from rows held in memory"
        if early_stopping and not in_memory
        else None,
    )
    target_score = getattr(estimator, "target_score", None)
    if target_score is not None:
        check_test_scores(
            [target_score], "params.target_score", task, has_test, ["body", "params", "target_score"]
        )
    preprocessing = job_weights.with_weight_column_ignored(
        resolve_preprocessing(body.preprocessing, train), weight_column, train
    )
    init_model_id = None
    if body.init_model is not None:
        start = warm_start.referenced_model(session, body.init_model, caller)
        warm_start.check_start(start, body.solver, task, estimator, train, preprocessing)
        init_model_id = start.id
    return JobPlan(
        task,
        n_train,
        estimator,
        preprocessing,
        body.solver,
        init_model_id,
        None if choice is None else choice.as_dict(),
    )


def _check_test_dataset(train: Dataset, test: Dataset) -> None:
    loc = ["body", "test_dataset_id"]
    require_labels(test, loc, "a test score compares predictions with labels")
    if train.task == "regression":
        compatible = test.label_kind == "numeric"
    else:
        compatible = test.task != "regression" and test.label_kind == train.label_kind
    if not compatible:
        msg = (
            f"test dataset {test.id} ({test.task}, {test.label_kind} labels) does not fit "
            f"the training set ({train.task}, {train.label_kind} labels)"
        )
        raise invalid(msg, [field_error(loc, msg)])
    if (test.text_columns or []) != (train.text_columns or []):
        msg = (
            f"test dataset {test.id} has text columns {test.text_columns or []}, the training "
            f"set {train.text_columns or []}"
        )
        raise invalid(msg, [field_error(loc, msg)])
    if test.n_features != train.n_features:
        # A sparse test file may lack the training set's last features: then it says so by
        # its width at upload (n_features); a narrower one is more likely other data.
        msg = (
            f"test dataset {test.id} ({test.n_samples} rows x {test.n_features} features) "
            f"does not have the features of training dataset {train.id} ({train.n_samples} "
            f"rows x {train.n_features} features); if its columns are the same, upload it "
            f"with n_features={train.n_features}"
        )
        raise invalid(msg, [field_error(loc, msg)])


def _held_out(n: int, test_fraction: float) -> int:
    try:
        return held_out_rows(n, test_fraction)
    except ValueError as exc:
        msg = f"test_fraction leaves no training or no test rows of {n}"
        raise invalid(msg, [field_error(["body", "test_fraction"], msg)]) from exc


def check_target_metric(body: JobCreate, task: str) -> None:
    """The metric ``targets`` name is one of the task's."""
    metric = body.target_metric
    allowed = metric_names.of_task(task)
    if metric is None or metric in allowed:
        return
    kind = "regression" if task == "regression" else "classification"
    msg = f"targets.metric must be a {kind} metric: one of {', '.join(allowed)}; got {metric!r}"
    raise invalid(msg, [field_error(["body", "targets", "metric"], msg)])


def check_test_scores(
    values: Sequence[float],
    name: str,
    task: str,
    has_test: bool,
    loc: list[str | int],
    metric: str | None = None,
) -> None:
    """Scores to reach on the evaluation data (``targets``, ``params.target_score``): they need
    evaluation data, and are accuracies in [0, 1] or RMSEs >= 0, or values ``metric`` takes."""
    if values and not has_test:
        msg = f"{name} can only be checked on evaluation data: give test_dataset_id or test_fraction"
    elif metric is not None and not all(metric_names.in_range(metric, t) for t in values):
        msg = f"{name} of {metric} are {metric_names.value_rule(metric)}"
    elif metric is not None:
        return
    elif task != "regression" and any(not 0.0 <= t <= 1.0 for t in values):
        msg = f"classification {name} are accuracies in [0, 1]"
    elif task == "regression" and any(t < 0 for t in values):
        msg = f"regression {name} are RMSEs (>= 0)"
    else:
        return
    raise invalid(msg, [field_error(loc, msg)])


def checked_estimator(spec: EstimatorSpec, choice: SolverChoice | None = None) -> Any:
    """The estimator of ``spec``, or a 422 naming the solver or parameter it refuses (and, when
    "auto" chose the solver, which it chose and why)."""
    try:
        return spec.build()
    except InvalidParams as exc:
        detail = str(exc) if choice is None else f'solver "auto" chose {choice.solver}: {exc}'
        raise invalid(detail, exc.errors) from exc


def check_batch_fits(estimator: Any, n_rows: int, rows: str) -> None:
    """The one parameter that must fit the data: every minibatch solver refuses a batch larger
    than the rows it fits on at fit time; saying so now is a 422 instead of a failed job."""
    batch_size = getattr(estimator, "batch_size", None)
    if isinstance(batch_size, int) and batch_size > n_rows:
        msg = f"batch_size {batch_size} is larger than the {n_rows} {rows}"
        raise invalid(msg, [field_error(["body", "params", "batch_size"], msg)])


# -- create and cancel ---------------------------------------------------------------------------


def create_job(
    session: Session, body: JobCreate, idem: Idempotency, settings: Settings, caller: Caller
) -> tuple[Job, bool]:
    """The caller's queued job of a checked request, committed; or, for an ``Idempotency-Key``
    this caller used before with the same body, that request's job. True when it is the earlier
    one. A request that would pass the queue quotas is a 429 (app/services/jobs/limits.py)."""
    existing = replay(session, idem, Job)
    if existing is not None:
        return existing, True
    plan = check_job_request(session, body, settings, caller)
    job = Job(
        status=JobStatus.QUEUED,
        solver=plan.solver,
        solver_choice=plan.solver_choice,
        task=plan.task,
        dataset_id=body.dataset_id,
        test_dataset_id=body.test_dataset_id,
        test_fraction=body.test_fraction,
        split_seed=body.split_seed,
        params=selection.seeded_params(body, plan.estimator),
        selection_options=selection.stored_options(body),
        threshold_options=threshold.stored_options(body),
        targets=body.target_values,
        target_metric=body.target_metric,
        time_budget_s=body.time_budget_s,
        preprocessing=plan.preprocessing,
        owner=caller.owner,
        time_limit_s=time_limit(body.time_budget_s, settings),
        name=body.name,
        description=body.description,
        tags=body.tags,
        model_name=body.model_name,
        init_model_id=plan.init_model_id,
        weight_column=body.weight_column,
    )
    with job_limits.queue_lock:
        job_limits.check_queue_room(
            session, caller.owner, 1, settings.max_queued_jobs_per_owner, settings.max_queued_jobs
        )
        session.add(job)
        session.flush()
        winner = commit_created(session, idem, job)
    return (winner, True) if winner is not None else (job, False)


def time_limit(time_budget_s: float | None, settings: Settings) -> float:
    """The wall-clock seconds a job's run may take: its own budget, else the server's limit."""
    return time_budget_s if time_budget_s is not None else settings.max_job_seconds


def cancel_job(session: Session, job: Job) -> None:
    """Cancel a queued or running job (again: no change); 409 once it succeeded or failed."""
    if job.status in (JobStatus.SUCCEEDED, JobStatus.FAILED):
        raise conflict(f"job {job.id} already {job.status}")
    if job.status in JobStatus.ACTIVE:
        jobs.request_cancel(session, job)
        session.commit()
