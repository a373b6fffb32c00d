"""How ``pgs`` writes a job's progress for a person: what it counts, how far, the time spent and
the time left, in words rather than the API's raw seconds."""

from __future__ import annotations

from pgs_client.cli.output import duration, job_progress


def test_durations_read_as_a_person_says_them():
    assert [duration(s) for s in (0.25, 9.5, 42.4, 185, 7805)] == [
        "0.25 s",
        "9.5 s",
        "42 s",
        "3 min 5 s",
        "2 h 10 min",
    ]


def test_a_running_fit_says_how_far_it_is_and_how_long_it_has_left():
    line = job_progress(
        {
            "phase": "fit",
            "iteration": 2500,
            "n_iter": 10000,
            "fraction": 0.25,
            "elapsed_s": 30.0,
            "eta_s": 90.0,
        }
    )
    assert line == "iterations 2,500 of 10,000 (25%), 30 s elapsed, about 1 min 30 s left"


def test_a_sigma_search_says_its_count_is_the_path_s_fits():
    line = job_progress(
        {
            "phase": "select_sigma",
            "iteration": 3,
            "n_iter": 60,
            "fraction": 0.05,
            "elapsed_s": 4.0,
            "eta_s": 76.0,
        }
    )
    assert (
        line
        == "choosing sigma: fits of the path 3 of 60 (5%), 4 s elapsed, about 1 min 16 s left in this phase"
    )


def test_a_queued_job_has_not_started():
    progress = {
        "phase": None,
        "iteration": None,
        "n_iter": None,
        "fraction": None,
        "elapsed_s": None,
        "eta_s": None,
    }
    assert job_progress(progress) == "not started"
