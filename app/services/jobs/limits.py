"""The server's limits on what a job may cost, checked before a job is queued: the size of the
model it could write, the memory its data takes when its solver cannot stream it, and how many
jobs may wait in the queue (per owner and in all).

Both are answers to hostile or careless requests: a 40-byte svmlight file with the feature index
16,777,216 makes every linear model 134 MB per class, and a loop of POSTs fills the queue faster
than any worker empties it.
"""

from __future__ import annotations

import threading
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.core.config import MIB
from app.core.errors import ProblemError, field_error, invalid
from app.db.tables import Dataset, Job, JobStatus

# What a 429 asks the caller to wait: about the time a worker takes to finish a short job.
RETRY_AFTER_S = 10
# One API process checks the queue and inserts its jobs under this lock, so its concurrent
# requests cannot all see the same free room (several API processes on PostgreSQL may overshoot
# by at most one request each).
queue_lock = threading.Lock()


def model_bytes(estimator: Any, train: Dataset) -> int:
    """The most bytes the job's model can take: 8 per weight of the dense n_features x n_outputs
    matrix and its intercepts (one output per class beyond two; what the worker allocates while
    it trains), plus for a kernel model its support vectors (every training row at worst)."""
    n_classes = len(train.classes or [])
    n_outputs = n_classes if n_classes > 2 else 1
    total = 8 * n_outputs * (train.n_features + 1)
    if hasattr(estimator, "kernel"):
        # CSR support vectors (8-byte values, 4-byte indices), their row pointers and indices,
        # and one dual coefficient per row and output.
        total += 12 * train.nnz + 8 * train.n_samples * (n_outputs + 2)
    return total


def check_model_size(estimator: Any, train: Dataset, limit: int) -> None:
    """422 when the job's model could exceed ``limit`` bytes (PGS_MAX_MODEL_BYTES)."""
    size = model_bytes(estimator, train)
    if size <= limit:
        return
    n_classes = len(train.classes or [])
    shape = f"{train.n_features} features" + (f" x {n_classes} classes" if n_classes > 2 else "")
    msg = (
        f"the model of dataset {train.id} ({shape}) could take {_mib(size)} "
        f"({size} bytes), more than the limit of {_mib(limit)} ({limit} bytes, "
        "PGS_MAX_MODEL_BYTES); use fewer features (renumber the svmlight indices) or classes"
    )
    raise invalid(msg, [field_error(["body", "dataset_id"], msg)])


def data_bytes(dataset: Dataset) -> int:
    """What the data set takes in memory as one CSR matrix with its labels: its shards' bytes
    (the manifest's arrays), estimated from its counts for one not yet converted to shards."""
    if dataset.stored_bytes is not None:
        return dataset.stored_bytes
    return 12 * dataset.nnz + 16 * dataset.n_samples + 8


def check_data_memory(
    solver: str, datasets: list[Dataset], in_memory: bool, limit: int, why: str | None = None
) -> None:
    """422 when the job would hold its data sets whole in memory (its solver does not stream,
    or ``in_memory``: a study's sigma selection, or ``why`` says what else) and they take more
    than ``limit`` bytes (PGS_WORKER_MEMORY_BYTES); the detail names the solvers that stream
    instead."""
    from solver import SOLVERS

    if SOLVERS[solver].streams and not in_memory:
        return
    size = sum(data_bytes(d) for d in datasets)
    if size <= limit:
        return
    names = ", ".join(sorted(name for name, spec in SOLVERS.items() if spec.streams))
    what = (
        f"solver {solver!r} needs every row in memory at once"
        if not SOLVERS[solver].streams
        else why or "a sigma selection (select_sigma) fits on rows held in memory"
    )
    ids = " and ".join(f"dataset {d.id}" for d in datasets)
    takes = "takes" if len(datasets) == 1 else "take"
    msg = (
        f"{what}: {ids} {takes} {_mib(size)} ({size} bytes) as a CSR matrix, more than the "
        f"worker memory budget of {_mib(limit)} ({limit} bytes, PGS_WORKER_MEMORY_BYTES); "
        f"train on it with a solver that streams from its shards: {names}"
        + ("" if not SOLVERS[solver].streams else ", without select_sigma" if why is None else ", without it")
    )
    raise invalid(msg, [field_error(["body", "solver"], msg)])


def _mib(n: int) -> str:
    return f"{n / MIB:.1f} MiB"


def check_queue_room(session: Session, owner: str, n_new: int, per_owner: int, total: int) -> None:
    """429 with Retry-After when ``n_new`` more queued jobs would pass the owner's quota
    (PGS_MAX_QUEUED_JOBS_PER_OWNER) or the server's (PGS_MAX_QUEUED_JOBS) now; 422 when they
    could never fit, since waiting would not help. Call it under :data:`queue_lock`, in the
    transaction that inserts the jobs."""
    limit, setting = min((per_owner, "PGS_MAX_QUEUED_JOBS_PER_OWNER"), (total, "PGS_MAX_QUEUED_JOBS"))
    if n_new > limit:
        msg = f"{n_new} jobs can never be queued at once: the limit is {limit} ({setting})"
        raise invalid(msg, [field_error(["body"], msg)])
    queued = Job.status == JobStatus.QUEUED
    mine = session.scalar(select(func.count()).where(queued, Job.owner == owner)) or 0
    if mine + n_new > per_owner:
        _too_many(
            f"owner {owner!r} has {mine} queued job(s); {n_new} more would pass its quota "
            f"of {per_owner} (PGS_MAX_QUEUED_JOBS_PER_OWNER)"
        )
    everyone = session.scalar(select(func.count()).where(queued)) or 0
    if everyone + n_new > total:
        _too_many(
            f"the server has {everyone} queued job(s); {n_new} more would pass its limit "
            f"of {total} (PGS_MAX_QUEUED_JOBS)"
        )


def _too_many(detail: str) -> None:
    raise ProblemError(
        429,
        f"{detail}; retry once some have started",
        kind="too-many-queued-jobs",
        headers={"Retry-After": str(RETRY_AFTER_S)},
    )
