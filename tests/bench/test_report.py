"""docs/benchmarks.md from its template and the records: the figures drawn into the prose, the
goals table, and the two ways `python -m bench.report --check` fails (a figure typed by hand into
the template's prose, a stale page)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import report, typed_figures
from bench.tables import Goal, goals_table
from bench.tables.goals import ratio_goal


@pytest.fixture
def checked(tmp_path, monkeypatch):
    """Point `--check` at a template and a page of the test's own; returns their paths."""
    template, page = tmp_path / "template.md", tmp_path / "page.md"
    monkeypatch.setattr(report, "TEMPLATE", template)
    monkeypatch.setattr(report, "PAGE", page)
    return template, page


def _check_fails(template: Path, page: Path, text: str) -> str:
    template.write_text(text)
    page.write_text(report.render(text))
    with pytest.raises(SystemExit) as failed:
        report.main(["--check"])
    return str(failed.value)


def test_a_typed_figure_fails_the_check_and_names_its_line(checked):
    message = _check_fails(*checked, "# Benchmarks\n\nThe fit took\n3.2 s on this machine.\n")
    assert "template.md:4: typed figure '3.2 s'" in message


def test_a_typed_count_of_cases_fails_the_check(checked):
    message = _check_fails(*checked, "PGS is faster\nin 7 of 16 cases.\n")
    assert "template.md:2: typed figure '7 of 16'" in message


def test_a_stale_page_fails_the_check(checked):
    template, page = checked
    template.write_text("# Benchmarks\n\nNo figures here.\n")
    page.write_text(report.render(template.read_text()) + "edited by hand\n")
    with pytest.raises(SystemExit, match="page.md is stale"):
        report.main(["--check"])


def test_the_real_template_has_no_typed_figure_and_renders_the_page_as_it_is():
    assert typed_figures.find(report.TEMPLATE.read_text()) == []
    assert report.problems(report.TEMPLATE.read_text(), report.PAGE.read_text()) == []


@pytest.mark.parametrize(
    "text",
    [
        "took 0.9 s",
        "at 54 ms",
        "a 2.1 GiB peak",
        "parses 21-25 MB/s",
        "1.3x as fast",
        "sits at 0.5-0.7x",
        "within about 10 % of",
        "in 8 of 16 cases",
        "38 of the 20,000 test rows",
        "about 50 minutes",
    ],
)
def test_measured_figures_are_found(text):
    assert typed_figures.find(f"Some prose:\n{text} and more.\n") != []


@pytest.mark.parametrize(
    "text",
    [
        "took {{= cold_start.training_starts }}",  # a placeholder
        "the `--time-budget 150` s",  # a code span
        "| 0.9 s | 1.3x |",  # a table row
        "python -m bench.peers --max-epochs 20",  # a command line
        "sigma 1e-5, k = 300, Figures 5-9, p = 14-19",  # numbers without a unit
        "494k x 119, 3e-8 x 800,000 / m",  # sizes and a product
        "||w/||w|| - w*|| < 0.05",  # a norm, not a table
        "the test problem's 3 of 23\nfeatures",  # listed as not measured, across a line end
    ],
)
def test_what_is_not_a_typed_measurement_passes(text):
    assert typed_figures.find(f"Some prose:\n{text} and more.\n") == []


def _write_record(directory: Path, name: str, benchmark: str, results: dict) -> None:
    record = {
        "benchmark": benchmark,
        "command": f"python -m bench.{benchmark}",
        "commit": "abc1234",
        "started_at": "2026-01-01T00:00:00+00:00",
        "wall_seconds": 660.0,
        "load_average": {"start": [4.5, 4.0, 3.0], "end": [5.04, 4.0, 3.0]},
        "machine": {"cpus": 2, "cpu_model": "cpu", "memory_gib": 8.0, "python": "3.11"},
        "results": results,
    }
    (directory / f"{name}.json").write_text(json.dumps(record))


def test_a_figure_is_drawn_from_its_record(tmp_path):
    _write_record(
        tmp_path, "cold_start", "cold_start", {"training_s": 0.86, "posted_s": 0.5, "running_s": 0.52}
    )
    text = (
        "Training starts {{= cold_start.training_starts }} after /readyz (goal {{= cold_start.goal }}), "
        "{{= cold_start.claimed }} after the POST; load {{= cold_start.load }}, {{= cold_start.minutes }}.\n"
    )
    assert report.render(text, tmp_path) == report.HEADER + (
        "Training starts 0.9 s after /readyz (goal 10 s), 20 ms after the POST; "
        "load 4.5 at the start and 5.0 at the end, 11 minutes.\n"
    )


def test_an_unknown_figure_fails_naming_the_placeholder_and_its_line(tmp_path):
    _write_record(tmp_path, "cold_start", "cold_start", {"training_s": 0.86})
    with pytest.raises(SystemExit, match=r":2: \{\{= cold_start.no_such_figure \}\}"):
        report.render("# T\nsee {{= cold_start.no_such_figure }}\n", tmp_path)


def test_a_placeholder_broken_over_two_lines_fails(tmp_path):
    _write_record(tmp_path, "cold_start", "cold_start", {"training_s": 0.86})
    with pytest.raises(SystemExit, match=":2: a placeholder that is neither"):
        report.render("# T\nstarts {{= cold_start.training_starts\n}} after\n", tmp_path)


def test_a_goal_over_cases_is_met_only_when_every_case_meets_it():
    goal = ratio_goal("PGS against the peer", [0.4, 0.6, None], 0.5)
    assert (goal.target, goal.measured, goal.verdict) == (
        "at most 0.5x",
        "0.40-0.60x",
        "missed (met in 1 of 2)",
    )
    assert ratio_goal("threads", [1.4], 1.3, at_least=True).verdict == "met"


def test_the_goals_table_names_each_goal_with_its_benchmark_and_record():
    record = {"benchmark": "cold_start"}
    table = goals_table([(record, "cold_start", Goal("First job", "at most 10 s", "0.9 s", met=1))])
    assert table.splitlines()[-1] == (
        "| First job | at most 10 s | 0.9 s | **met** | "
        "`python -m bench.cold_start` ([cold_start.json](results/cold_start.json)) |"
    )
