"""A job's progress as the API answers it: the fraction done, the seconds since it started and an
estimate of the seconds left (``JobRead.progress``).

The fraction is iterations over ``n_iter`` while the fit runs. A job that succeeded is complete
whatever its iteration count: L-BFGS and the convergence and target stops end well before
``n_iter``, and a finished job shown at 18 % reads as stalled. The estimate is the rate so far
carried to the end (elapsed x (1 - f) / f), never beyond the job's time limit; for a solver that
may stop early it is an upper bound.

A job may run other fits before its own (a sigma search, a threshold's validation fit): the
running job's ``phase`` names what the fraction counts, and the rate is the phase's own, from
when it began (the reporter records both in the live metrics, app/training/reporter.py), so the
fraction restarting at 0 for the final fit does not make the estimate jump.
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
    status: str,
    fraction: float | None,
    elapsed: float | None,
    time_limit_s: float | None,
    phase_elapsed: float | None = None,
) -> float | None:
    """Seconds left at the rate so far (the phase's, when given); null until a running job has
    made some progress."""
    if status != RUNNING or elapsed is None or not fraction:
        return None
    spent = elapsed if phase_elapsed is None else min(phase_elapsed, elapsed)
    left = spent * (1.0 - fraction) / fraction
    if time_limit_s is not None:
        left = min(left, max(0.0, time_limit_s - elapsed))
    return left


def running_phase(
    status: str, metrics: dict[str, Any] | None, now: dt.datetime
) -> tuple[str | None, float | None]:
    """The running job's phase and the seconds since it began; (None, None) for a job that is
    not running, ("fit", None) before its first progress write."""
    if status != RUNNING:
        return None, None
    live = metrics or {}
    started = live.get("phase_started")
    since = None if started is None else max(0.0, now.timestamp() - float(started))
    return live.get("phase", "fit"), since


def job_progress(job: Any, now: dt.datetime) -> dict[str, Any]:
    """``job`` is a jobs row (app/db/tables.Job)."""
    fraction = fraction_done(job.status, job.iteration, job.n_iter)
    elapsed = elapsed_seconds(job.started_at, job.finished_at, now)
    phase, phase_elapsed = running_phase(job.status, job.metrics, now)
    return {
        "phase": phase,
        "iteration": job.iteration,
        "n_iter": job.n_iter,
        "fraction": fraction,
        "samples_seen": job.samples_seen,
        "elapsed_s": elapsed,
        "eta_s": eta_seconds(job.status, fraction, elapsed, job.time_limit_s, phase_elapsed),
    }
