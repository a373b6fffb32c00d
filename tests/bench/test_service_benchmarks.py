"""The end-to-end and cold-start benchmarks' helpers: their arithmetic and verdicts, on made-up
records (the benchmarks themselves are timed runs, not tests)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from bench import tables
from bench.cold_start import clean_env, since
from bench.end_to_end import seconds_between


def _sample(client_s: float, fit_s: float, read_s: float, prep_s: float = 0.0) -> dict:
    return {
        "job_id": 1,
        "client_s": client_s,
        "server_s": client_s - 0.01,
        "dispatch_s": 0.005,
        "run_s": client_s - 0.02,
        "solver_s": fit_s / 2,
        "fit_s": fit_s,
        "read_s": read_s,
        "prep_s": prep_s,
        "preprocessing": None,
    }


STEPS = {
    "load_job": 0.01,
    "load_data": 0.3,
    "fit": 0.4,
    "fit_traced": 0.5,
    "package": 0.0,
    "metrics": 0.0,
    "store_model": 0.05,
}


def _end_to_end_record(client_s: list[float]) -> dict:
    samples = [_sample(c, 0.5, 0.5) for c in client_s]
    median = {k: sorted(s[k] for s in samples)[len(samples) // 2] for k in samples[0] if k != "preprocessing"}
    return {
        "set": "kdd_like",
        "m": 494021,
        "n": 119,
        "nnz": 9880420,
        "upload_s": 40.0,
        "sigma": 1e-6,
        "n_iter": 120000,
        "repeats": len(samples),
        "profile_repeats": 3,
        "cases": [
            {
                "p": 2.0,
                "preprocessing": "none",
                "first_job": samples[0],
                "samples": samples,
                "median": median,
                "worker_steps": STEPS,
            }
        ],
    }


def test_ratio_is_the_job_time_over_read_preprocessing_and_fit():
    assert tables.end_to_end_ratio(_sample(1.5, 0.5, 0.25)) == pytest.approx(2.0)
    assert tables.end_to_end_ratio(_sample(1.5, 0.5, 0.25), "server_s") == pytest.approx(1.49 / 0.75)
    assert tables.end_to_end_ratio(_sample(2.0, 0.5, 0.25, prep_s=0.25)) == pytest.approx(2.0)


@pytest.mark.parametrize(("client_s", "verdict"), [([1.2, 1.3, 2.0], "met"), ([1.2, 1.31, 2.0], "missed")])
def test_end_to_end_goal_is_judged_on_the_median_ratio(client_s, verdict):
    record = _end_to_end_record(client_s)
    [goal] = tables.end_to_end_goals(record)
    assert (goal.target, goal.verdict) == ("at most 1.3x", verdict)
    assert tables.end_to_end(record).endswith(f"goal at most 1.3x, {verdict}")


def test_end_to_end_table_shows_each_case_and_the_worker_steps():
    text = tables.end_to_end(_end_to_end_record([1.2, 1.3, 2.0]))
    assert "| PGS p=2, raw features | 1300 |" in text
    # Steps of the replay, the trace's share (traced - untraced fit) and the run's remainder:
    # the median run (1.28 s) less the steps the worker runs (0.86 s).
    assert "| PGS p=2, raw features | 10 | 300 | 500 | 0 | 0 | 50 | 100 | 420 |" in text


@pytest.mark.parametrize(("training_s", "verdict"), [(9.9, "met"), (10.1, "missed")])
def test_cold_start_goal(training_s, verdict):
    record = {
        "commit": "abc1234",
        "make_serve_to_ready_s": 300.0,
        "uploaded_s": 0.05,
        "posted_s": 0.1,
        "running_s": training_s - 1,
        "running_seen_s": None,
        "compile_s": 1.0,
        "training_s": training_s,
        "succeeded_s": training_s + 1,
    }
    [goal] = tables.cold_start_goals(record)
    assert (goal.target, goal.measured, goal.verdict) == ("at most 10 s", f"{training_s:.1f} s", verdict)
    assert "| 300 | 0.05 | 0.10 |" in tables.cold_start(record)


def test_job_timestamps_are_read_as_utc():
    ready = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert since(ready, "2026-01-01T12:00:02.500000") == 2.5
    assert since(ready, "2026-01-01T12:00:02.500000+00:00") == 2.5
    assert since(ready, None) is None
    job = {"created_at": "2026-01-01T12:00:00", "finished_at": "2026-01-01T12:00:01.250000"}
    assert seconds_between(job, "created_at", "finished_at") == 1.25


def test_a_fresh_install_inherits_no_cache_or_settings(monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", "/elsewhere/numba-cache")
    monkeypatch.setenv("PGS_WORKERS", "7")
    monkeypatch.setenv("VIRTUAL_ENV", "/elsewhere/.venv")
    env = clean_env(8123, Path("/tmp/clone/var"))
    assert "NUMBA_CACHE_DIR" not in env and "VIRTUAL_ENV" not in env and "PGS_WORKERS" not in env
    assert env["PGS_PORT"] == "8123" and env["PGS_DATA_DIR"] == "/tmp/clone/var"
    assert env["PGS_HOST"] == "127.0.0.1"


def _files_record(service_s: list[float], notebook_s: list[float]) -> dict:
    parts = {
        "upload_train_s": 0.2,
        "upload_test_s": 0.1,
        "dispatch_s": 0.01,
        "run_s": 0.1,
        "job_s": 0.15,
        "load_seconds": 0.02,
        "preprocessing_seconds": 0.01,
        "compile_seconds": 0.0,
        "solver_seconds": 0.03,
        "checkpoint_seconds": 0.01,
        "progress_seconds": 0.0,
        "final_metrics_seconds": 0.01,
        "model_write_seconds": 0.01,
        "other_seconds": 0.01,
        "overhead_seconds": 0.07,
    }
    service = [{**parts, "total_s": s, "reached": True} for s in service_s]
    notebook = [
        {"read_train_s": 0.3, "read_test_s": 0.1, "scale_s": 0.0, "fit_s": 0.1, "solver_s": 0.03}
        | {"total_s": n, "reached": True}
        for n in notebook_s
    ]
    median = {k: sorted(x[k] for x in service)[len(service) // 2] for k in parts | {"total_s": 0}}
    median_nb = {k: sorted(x[k] for x in notebook)[len(notebook) // 2] for k in notebook[0] if k != "reached"}
    case = {
        "set": "a9a",
        "target": 0.845,
        "train_mb": 2.3,
        "test_mb": 1.1,
        "m": 32561,
        "n": 123,
        "m_test": 16281,
        "notebook": notebook,
        "service": service,
        "median_notebook": median_nb,
        "median_service": median,
    }
    return {"measure": "files", "sigma": 1e-6, "repeats": len(service), "cases": [case]}


@pytest.mark.parametrize(
    ("service_s", "verdicts"),
    [
        ([0.4, 0.5, 1.0], ("met", "met")),
        ([0.5, 0.9, 2.0], ("met", "missed")),
        ([1.05, 1.1, 0.4], ("missed", "missed")),
    ],
)
def test_files_to_model_is_judged_on_the_median_of_the_repeats_ratios(service_s, verdicts):
    """Each repeat's ratio is its service time over its own notebook time (1 s each here)."""
    record = _files_record(service_s, [1.0, 1.0, 1.0])
    goal, stretch = tables.end_to_end_files_goals(record)
    assert (goal.target, stretch.target) == ("at most 1x", "at most 0.5x")
    assert (goal.verdict, stretch.verdict) == verdicts


def test_files_to_model_table_shows_where_the_service_time_goes():
    text = tables.end_to_end_files(_files_record([0.5, 0.5, 0.5], [1.0, 1.0, 1.0]))
    assert (
        "| a9a | 32,561 / 16,281 x 123 | 3 | 0.845 | 0.40 | 0.00 | 0.10 | 1.00 "
        "| 0.30 | 0.15 | 0.50 | 0.50 | 6 of 6 |" in text
    )
    # The parts, then what they leave of the job's time: 0.15 - 0.01 - 0.03 - 0.07.
    assert (
        "| a9a | 0.20 | 0.10 | 0.01 | 0.02 | 0.01 | 0.00 | 0.03 | 0.01 | 0.00 | 0.01 | 0.01 | 0.01 "
        "| 0.04 | 0.03 |" in text
    )
