"""A job's progress names its phase (a sigma search's fits, a threshold's validation fit, the
model's own fit) and carries on the phase's own rate: the reporter records when each phase
begins, and the API's estimate of the time left starts over with it."""

from __future__ import annotations

import datetime as dt
import time
from types import SimpleNamespace

from sklearn.datasets import make_classification

from app.services.jobs.progress import job_progress
from app.services.studies.phases import select_sigma
from app.training.reporter import Reporter
from solver import PGSClassifier
from solver.tracing import Progress

NOW = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.UTC)


def _reporter() -> Reporter:
    # No database write is due within the hour from now: the calls below only observe.
    reporter = Reporter(
        factory=None,  # type: ignore[arg-type]
        job_id=1,
        token=1,
        interval=3600.0,
        targets=[],
        higher_is_better=True,
    )
    reporter.last_write = time.monotonic()
    return reporter


def _progress(phase: str = "fit", iteration: int = 1) -> Progress:
    return Progress(iteration=iteration, n_iter=10, samples_seen=iteration, solver_seconds=0.0, phase=phase)


def test_the_reporter_names_each_phase_and_when_it_began():
    reporter = _reporter()
    reporter(_progress("select_sigma"))
    path_began = reporter.progress().metrics["phase_started"]
    assert reporter.progress().metrics["phase"] == "select_sigma"
    reporter(_progress("select_sigma", iteration=5))
    assert reporter.progress().metrics["phase_started"] == path_began  # the same phase goes on
    reporter.start_fit()
    reporter(_progress())
    metrics = reporter.progress().metrics
    assert metrics["phase"] == "fit" and metrics["phase_started"] >= path_began


def test_a_phase_the_job_names_holds_while_its_fits_report_their_own_iterations():
    """A study's sigma search and a threshold's validation fit run ordinary fits: the job's
    step names the phase."""
    reporter = _reporter()
    reporter.extra = {"phase": "choose_threshold"}
    reporter(_progress())
    assert reporter.progress().metrics["phase"] == "choose_threshold"
    reporter.extra = {}
    reporter.start_fit()
    reporter(_progress())
    assert reporter.progress().metrics["phase"] == "fit"


def _job(**fields: object) -> SimpleNamespace:
    row = {
        "status": "running",
        "iteration": 25,
        "n_iter": 100,
        "samples_seen": 25,
        "started_at": NOW - dt.timedelta(seconds=60),
        "finished_at": None,
        "time_limit_s": None,
        "metrics": None,
    }
    return SimpleNamespace(**(row | fields))


def test_the_time_left_is_carried_on_from_the_phase_s_own_start():
    # A minute in, of which the last 10 s are the final fit, a quarter done: 30 s left, not 180.
    began = (NOW - dt.timedelta(seconds=10)).timestamp()
    progress = job_progress(_job(metrics={"phase": "fit", "phase_started": began}), NOW)
    assert progress["phase"] == "fit" and progress["eta_s"] == 30.0
    # Before the first write of its phase, the job's whole time is the rate's.
    assert job_progress(_job(), NOW)["eta_s"] == 180.0
    assert job_progress(_job(), NOW)["phase"] == "fit"


def test_a_job_that_does_not_run_has_no_phase():
    for status in ("queued", "succeeded", "failed", "cancelled"):
        progress = job_progress(_job(status=status, metrics={"phase": "fit", "phase_started": 0.0}), NOW)
        assert progress["phase"] is None and progress["eta_s"] is None


def test_a_study_s_sigma_search_counts_its_fits_done_over_planned():
    X, y = make_classification(n_samples=200, n_features=8, random_state=0)
    seen: list[Progress] = []

    def watch(progress: Progress) -> None:
        seen.append(progress)

    grid = [1.0, 0.1, 0.01]
    selection = select_sigma(
        lambda sigma: PGSClassifier(loss="logistic", sigma=sigma, n_iter=2_000, random_state=0),
        X,
        y,
        classification=True,
        grid=grid,
        validation_fraction=0.25,
        seed=0,
        callback=watch,
    )
    assert selection is not None and seen
    assert {(p.phase, p.n_iter) for p in seen} == {("select_sigma", len(grid))}
    assert [p.iteration for p in seen] == sorted(p.iteration for p in seen)
    assert {p.iteration for p in seen} <= set(range(len(grid)))
