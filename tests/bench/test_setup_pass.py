"""bench.setup_pass on a tiny kdd_like: the record has every part it times, the set-up is the fit's
time outside the solver clock, and the table and goal render from it. No timing asserted."""

from __future__ import annotations

import json

from bench import setup_pass, tables


def test_a_small_run_records_the_parts_and_renders(tmp_path):
    setup_pass.main(["--rows", "2000", "--n-iter", "300", "--repeats", "2", "--results-dir", str(tmp_path)])
    results = json.loads((tmp_path / "setup_pass.json").read_text())["results"]
    assert (results["m"], results["n"], results["n_iter"]) == (1600, 119, 300)
    assert len(results["runs"]) == 2
    for run in results["runs"]:
        assert 0.0 < run["solver"] < run["fit"]
        assert run["setup"] <= run["fit"] - run["solver"]
    assert results["ratio"] > 0.0
    assert "kdd_like (1,600 x 119, 32,000)" in tables.setup_pass(results)
    (goal,) = tables.setup_pass_goals(results)
    assert goal.cases == 1 and goal.target == "at most 2x"
