"""bench.auto_calibration runs end to end on its smallest cases and records what the rule of
solver/auto.py and docs/benchmarks.md's tables read, and the tables render it."""

from __future__ import annotations

import json
from pathlib import Path

from bench import auto_calibration
from bench.tables import auto_calibration as logistic_table
from bench.tables import auto_calibration_hinge, auto_calibration_small


def test_a_small_run_records_every_part_and_renders(tmp_path: Path):
    auto_calibration.main(
        [
            "--sets",
            "agaricus",
            "--sigmas",
            "1e-5",
            "--hinge-sets",
            "agaricus",
            "--small-sets",
            "heart_scale",
            "--max-epochs",
            "5",
            "--results-dir",
            str(tmp_path),
        ]
    )
    results = json.loads((tmp_path / "auto_calibration.json").read_text())["results"]
    (case,) = results["cases"]
    assert case["set"] == "agaricus" and case["sdca_epochs"] >= 1 and case["pgs_epochs"] > 0
    assert case["sdca_epoch"] > 0 and case["pgs_epoch"] > 0
    (hinge,) = results["hinge_cases"]
    assert hinge["loss"] == "hinge" and hinge["sdca_epochs"] is not None
    assert [c["set"] for c in results["small_cases"]] == ["heart_scale", "heart_scale"]
    assert "agaricus" in logistic_table(results) and "agaricus" in auto_calibration_hinge(results)
    assert "heart_scale" in auto_calibration_small(results)
