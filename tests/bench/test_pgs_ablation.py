"""The small-m ablation (bench/pgs_ablation.py): a continuation is charged every epoch of every
stage and really starts each stage from the previous model, and the table beside Snap ML reads a
case Snap ML never reached as such instead of dividing by nothing."""

from __future__ import annotations

import numpy as np
import pytest

from bench import pgs_ablation
from bench.pgs_ablation import Variant, run_variant
from bench.tables import RENDERERS


@pytest.fixture(scope="module")
def separable():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5))
    y = np.where(X @ np.array([1.0, -2.0, 0.5, 0.0, 1.0]) > 0.0, 1.0, -1.0)
    return X[:300], y[:300], X[300:], y[300:]


def test_a_continuation_is_charged_its_stages_epochs(separable):
    X, y, Xt, yt = separable
    stages = Variant(stages=(100.0, 10.0), stage_epochs=0.5)
    outcome = run_variant(X, y, Xt, yt, 1e-3, 0.8, stages, t0_auto=1.0, seed=0, epochs=5)
    # Two stages of half an epoch each come before the target sigma's first checkpoint (which, on
    # data this easy, is already at the target).
    assert outcome.epochs is not None and outcome.epochs >= 2 * 0.5
    assert outcome.seconds > 0.0


def test_each_stage_starts_from_the_previous_model(separable, monkeypatch):
    X, y, Xt, yt = separable
    starts = []
    fit = pgs_ablation.PGSClassifier.fit

    def recording_fit(self, X, y, **kwargs):
        starts.append((self.sigma, kwargs.get("coef_init")))
        return fit(self, X, y, **kwargs)

    monkeypatch.setattr(pgs_ablation.PGSClassifier, "fit", recording_fit)
    run_variant(X, y, Xt, yt, 1e-3, 0.8, Variant(stages=(10.0,)), t0_auto=1.0, seed=0, epochs=2)
    (first_sigma, first_start), (last_sigma, last_start) = starts
    assert first_sigma == pytest.approx(1e-2) and first_start is None
    assert last_sigma == pytest.approx(1e-3) and last_start is not None and np.any(last_start != 0.0)


def _case(snapml_epochs: float | None) -> dict:
    labels = [pgs_ablation.DEFAULT, "average_power=1"]
    return {
        "set": "s",
        "sigma": 1e-5,
        "m": 1000,
        "target": 0.9,
        "epochs": {labels[0]: [1.0, 1.2, None], labels[1]: [0.8, 0.9, 1.0]},
        "seconds": {labels[0]: [0.02, 0.02, 0.03], labels[1]: [0.01, 0.01, 0.02]},
        "peers": {
            "record": "python -m bench.peers (commit abc, 2026-01-01)",
            "target": 0.9,
            "max_epochs": 20,
            "snapml_epochs": snapml_epochs,
            "snapml_seconds": None if snapml_epochs is None else 0.04,
            "pgs_epochs": 1.0,
            "pgs_seconds": 0.02,
        },
    }


def test_the_snapml_table_names_the_fewest_epochs_and_a_case_snapml_never_reached():
    results = {
        "family": "small_m",
        "seeds": 3,
        "epoch_cap": 30,
        "variants": [pgs_ablation.DEFAULT, "average_power=1"],
        "cases": [_case(5.0), _case(None)],
    }
    table = RENDERERS["pgs_ablation", "snapml"](results)
    assert "average_power=1: 0.90" in table
    assert "| 5 | 0.50 |" in table
    assert "never (20 epochs) | - |" in table
