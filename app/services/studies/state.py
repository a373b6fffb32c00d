"""Time-to-accuracy studies: fan a study out into ordinary jobs, and derive everything else
(status, progress, the time-to-target table) from those jobs and their stored traces.

A study is runs x sizes x repeats jobs. Each job trains on a seeded subsample of m rows of the
training part and is evaluated on the same evaluation rows as every other job of the study (the
same test data set, or the same ``test_fraction`` split with ``split_seed = seed``); see
``app.services.studies.phases`` for what the worker does with that.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.db.tables import Job, JobStatus, Study, TracePoint
from app.services.jobs import state as job_service
from app.services.studies.phases import subsample_seed

# Bounds the work one request can queue (runs x sizes x repeats).
MAX_STUDY_JOBS = 2000


def default_label(solver: str, params: dict[str, Any]) -> str:
    parts = [f"{k}={params[k]}" for k in ("loss", "p", "kernel") if k in params]
    return f"{solver} ({', '.join(parts)})" if parts else solver


def plan_jobs(study: Study, estimators: Sequence[Any], preprocessing: dict[str, Any] | None) -> list[Job]:
    """The study's jobs, repeat-major (every size has a result early), all queued.

    ``preprocessing``: the resolved preprocessing every job fits on its own training rows (one
    training set, so one for all runs); without it a data set with text columns or missing
    cells would reach the solver raw.

    ``estimators[i]``: run i's (unfitted) estimator. A run whose estimator takes a
    ``random_state`` but does not fix it gets the repeat's subsample seed, so a rerun of the
    study reproduces the solver's sampling as well as the subsample.
    """
    seeded = ["random_state" in est.get_params() for est in estimators]
    planned = []
    for repeat in range(study.repeats):
        seed = subsample_seed(study.seed, repeat)
        for m in study.sizes:
            for index, run in enumerate(study.runs):
                params = dict(run["params"])
                if seeded[index] and "random_state" not in params:
                    params["random_state"] = seed
                planned.append(
                    Job(
                        status=JobStatus.QUEUED,
                        solver=run["solver"],
                        task=study.task,
                        dataset_id=study.dataset_id,
                        test_dataset_id=study.test_dataset_id,
                        test_fraction=study.test_fraction,
                        split_seed=study.seed,
                        params=params,
                        targets=list(study.targets),
                        time_budget_s=study.time_budget_s,
                        study_id=study.id,
                        study_run=index,
                        study_repeat=repeat,
                        train_size=m,
                        subsample_seed=seed,
                        select_sigma=study.select_sigma,
                        preprocessing=preprocessing,
                    )
                )
    return planned


# -- state, derived from the jobs ---------------------------------------------------------------


def job_counts(session: Session, study_ids: Iterable[int]) -> dict[int, dict[str, int]]:
    ids = list(study_ids)
    counts: dict[int, dict[str, int]] = {i: dict.fromkeys(JobStatus.ALL, 0) for i in ids}
    if not ids:
        return counts
    rows = session.execute(
        select(Job.study_id, Job.status, func.count())
        .where(Job.study_id.in_(ids))
        .group_by(Job.study_id, Job.status)
    ).all()
    for study_id, status, n in rows:
        if study_id is not None:
            counts[study_id][status] = int(n)
    return counts


def derive_status(counts: dict[str, int]) -> str:
    """queued (nothing started), running, or once all jobs ended: succeeded, failed or cancelled
    when they all ended alike, partial otherwise."""
    total = sum(counts.values())
    queued, running = counts[JobStatus.QUEUED], counts[JobStatus.RUNNING]
    if queued or running:
        return JobStatus.QUEUED if queued == total else JobStatus.RUNNING
    for status in JobStatus.TERMINAL:
        if counts[status] == total:
            return status
    return "partial"


def progress(counts: dict[str, int]) -> dict[str, Any]:
    total = sum(counts.values())
    done = sum(counts[s] for s in JobStatus.TERMINAL)
    return {"total": total, "done": done, "fraction": done / total if total else 1.0, **counts}


def finished_at(session: Session, study: Study, counts: dict[str, int]) -> dt.datetime | None:
    if counts[JobStatus.QUEUED] or counts[JobStatus.RUNNING]:
        return None
    value: dt.datetime | None = session.scalar(
        select(func.max(Job.finished_at)).where(Job.study_id == study.id)
    )
    # SQLite hands the aggregate back naive (the column stores naive UTC).
    if value is not None and value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return value


def request_cancel(session: Session, study: Study) -> int:
    """Cancel every queued or running job of the study; returns how many were running."""
    study.cancel_requested = True
    running = 0
    for job in session.scalars(
        select(Job)
        .where(Job.study_id == study.id, Job.status.in_(JobStatus.ACTIVE))
        .with_for_update()  # PostgreSQL: a worker cannot claim a job between read and write
        .execution_options(populate_existing=True)
    ):
        running += job.status == JobStatus.RUNNING
        job_service.request_cancel(session, job)
    return running


# -- the time-to-target table -------------------------------------------------------------------


def _first_reach(
    points: Sequence[tuple[int, float, float | None]], target: float, higher_is_better: bool
) -> tuple[int, float] | None:
    """(iteration, solver seconds) of the first checkpoint whose test score reached ``target``:
    the rule of ``solver.tracing.time_to_target``, on the stored trace."""
    for iteration, seconds, score in points:
        if score is None:
            continue
        if (score >= target) if higher_is_better else (score <= target):
            return iteration, seconds
    return None


def _median(values: list[float]) -> float | None:
    """Median with unreached runs as +inf: undefined (None) once half or more never got there."""
    if not values:
        return None
    med = float(np.median(values))
    return med if math.isfinite(med) else None


def study_table(session: Session, study: Study) -> list[dict[str, Any]]:
    """One row per (run, m, target) over the study's succeeded jobs.

    Jobs still running, cancelled or failed are left out: their traces are not whole runs.
    """
    higher_is_better = study.task != "regression"
    jobs = list(
        session.execute(
            select(Job.id, Job.study_run, Job.train_size, Job.metrics).where(
                Job.study_id == study.id, Job.status == JobStatus.SUCCEEDED
            )
        ).all()
    )
    traces: dict[int, list[tuple[int, float, float | None]]] = defaultdict(list)
    for job_id, iteration, seconds, score in session.execute(
        select(TracePoint.job_id, TracePoint.iteration, TracePoint.solver_seconds, TracePoint.test_score)
        .join(Job, Job.id == TracePoint.job_id)
        .where(Job.study_id == study.id, Job.status == JobStatus.SUCCEEDED)
        .order_by(TracePoint.job_id, TracePoint.seq)
    ):
        traces[job_id].append((iteration, seconds, score))

    cells: dict[tuple[int, int], list[int]] = defaultdict(list)
    sigmas: dict[tuple[int, int], list[float]] = defaultdict(list)
    for job_id, run, m, metrics in jobs:
        cells[(run, m)].append(job_id)
        if metrics and metrics.get("selected_sigma") is not None:
            sigmas[(run, m)].append(float(metrics["selected_sigma"]))

    rows = []
    for index, run in enumerate(study.runs):
        for m in sorted(study.sizes):
            ids = cells.get((index, m), [])
            for target in study.targets:
                hits = [_first_reach(traces[i], target, higher_is_better) for i in ids]
                reached = [h for h in hits if h is not None]
                secs = [h[1] if h else math.inf for h in hits]
                its = [float(h[0]) if h else math.inf for h in hits]
                rows.append(
                    {
                        "run": index,
                        "solver": run["solver"],
                        "label": run["label"],
                        "m": m,
                        "target": target,
                        "repeats": len(ids),
                        "reached": len(reached),
                        "median_seconds": _median(secs),
                        "min_seconds": min((h[1] for h in reached), default=None),
                        "max_seconds": max((h[1] for h in reached), default=None),
                        "median_iterations": _median(its),
                        "min_iterations": min((h[0] for h in reached), default=None),
                        "max_iterations": max((h[0] for h in reached), default=None),
                        "selected_sigmas": sorted(sigmas[(index, m)]) if study.select_sigma else None,
                    }
                )
    return rows


def study_read(
    session: Session, study: Study, counts: dict[str, int] | None = None, *, with_table: bool
) -> dict[str, Any]:
    """The study as the API shows it (schemas.StudyRead); ``counts``: its job counts, when the
    caller read them for several studies at once."""
    if counts is None:
        counts = job_counts(session, [study.id])[study.id]
    return {
        **{
            c: getattr(study, c)
            for c in (
                "id",
                "name",
                "task",
                "dataset_id",
                "test_dataset_id",
                "test_fraction",
                "seed",
                "n_train",
                "runs",
                "sizes",
                "repeats",
                "targets",
                "time_budget_s",
                "select_sigma",
                "cancel_requested",
                "created_at",
            )
        },
        "score_name": "rmse" if study.task == "regression" else "accuracy",
        "status": derive_status(counts),
        "progress": progress(counts),
        "finished_at": finished_at(session, study, counts),
        "table": study_table(session, study) if with_table else None,
    }
