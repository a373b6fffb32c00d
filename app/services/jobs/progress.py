"""A job's progress as the API answers it: the fraction done, the seconds since it started and an
estimate of the seconds left (``JobRead.progress``).

The fraction is iterations over ``n_iter`` while the fit runs. A job that succeeded is complete
whatever its iteration count: L-BFGS and the convergence and target stops end well before
``n_iter``, and a finished job shown at 18 % reads as stalled. The estimate is the rate so far
carried to the end (elapsed x (1 - f) / f), never beyond the job's time limit; for a solver that
may stop early it is an upper bound.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

SUCCEEDED = "succeeded"
RUNNING = "running"


def fraction_done(status: str, iteration: int | None, n_iter: int | None) -> float | None:
    if status == SUCCEEDED:
        return 1.0
    if iteration is None or not n_iter:
        return None
    return min(iteration / n_iter, 1.0)


def elapsed_seconds(
    started: dt.datetime | None, finished: dt.datetime | None, now: dt.datetime
) -> float | None:
    if started is None:
        return None
    return max(0.0, ((finished or now) - started).total_seconds())


def eta_seconds(
    status: str, fraction: float | None, elapsed: float | None, time_limit_s: float | None
) -> float | None:
    """Seconds left at the rate so far; null until a running job has made some progress."""
    if status != RUNNING or elapsed is None or not fraction:
        return None
    left = elapsed * (1.0 - fraction) / fraction
    if time_limit_s is not None:
        left = min(left, max(0.0, time_limit_s - elapsed))
    return left


def job_progress(job: Any, now: dt.datetime) -> dict[str, Any]:
    """``job`` is a jobs row (app/db/tables.Job)."""
    fraction = fraction_done(job.status, job.iteration, job.n_iter)
    elapsed = elapsed_seconds(job.started_at, job.finished_at, now)
    return {
        "iteration": job.iteration,
        "n_iter": job.n_iter,
        "fraction": fraction,
        "samples_seen": job.samples_seen,
        "elapsed_s": elapsed,
        "eta_s": eta_seconds(job.status, fraction, elapsed, job.time_limit_s),
    }
