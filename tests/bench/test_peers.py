"""bench.peers scores Snap ML by a decision function of its own: it must label the test rows as
Snap ML's predict() does, or Snap ML is scored as missing a target it reached."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from bench.peers import Problem, _snapml


def _problem(tmp_path) -> Problem:
    rng = np.random.default_rng(0)
    X = sp.random(400, 30, density=0.3, format="csr", random_state=1)
    y = np.where(X @ rng.normal(size=30) + 0.8 > 0.0, 1.0, -1.0)  # an intercept that matters
    # s far from 1, as the shared sets' intercept_scaling "auto" is (0.15-0.2)
    return Problem(X[:300], y[:300], X[300:], y[300:], sigma=1e-3, s=0.17, workdir=tmp_path)


def _agrees_with_predict(decision: np.ndarray, predicted: np.ndarray) -> float:
    return float(np.mean(np.where(decision > 0.0, 1.0, -1.0) == predicted))


def test_snapml_s_decision_function_applies_the_intercept_scaling(tmp_path):
    snapml = pytest.importorskip("snapml")
    problem = _problem(tmp_path)
    decision = _snapml(problem, threads=1, seed=0)(5)()
    clf = snapml.LogisticRegression(
        max_iter=5,
        regularizer=problem.sigma * problem.m,
        n_jobs=1,
        fit_intercept=True,
        intercept_scaling=problem.s,
        tol=1e-12,
        random_state=0,
    ).fit(problem.X, problem.y)
    assert _agrees_with_predict(decision, clf.predict(problem.Xt)) == 1.0


def _case(name: str, seconds: dict[str, float | None]) -> dict:
    seconds = {"PGS p=1.8": 1.0, **seconds}
    rows = [
        {"solver": solver, "seconds": s, "budget": 1, "epochs": 1.0, "accuracy": 0.9, "runs": []}
        for solver, s in seconds.items()
    ]
    return {"set": name, "rows": rows}


def test_the_goals_judge_auto_against_the_fastest_peer_and_sdca_against_snap_ml_on_text():
    from bench.tables.wall_clock import peers_goals

    cases = [
        _case(
            "rt_polarity",
            {
                "PGS p=2": 0.4,
                "SDCA (ours)": 1.1,
                "auto (PGS p=2)": 0.45,
                "Snap ML 1 thread": 1.0,
                "SGDClassifier": 2.0,
            },
        ),
        _case(
            "reuters_moneyfx",
            {"PGS p=2": 0.3, "SDCA (ours)": 1.5, "auto (PGS p=2)": 0.6, "Snap ML 1 thread": 1.0},
        ),
        # a9a: not an SDCA goal set; no peer reached the target, so auto is not judged there
        _case("a9a", {"PGS p=2": 0.3, "SDCA (ours)": 9.0, "auto (PGS p=2)": 0.3, "Snap ML 1 thread": None}),
    ]
    auto, sdca, p2, _ = peers_goals({"cases": cases})
    assert (auto.met, auto.cases, auto.measured) == (1, 2, "0.45-0.60x")
    assert (sdca.met, sdca.cases, sdca.measured) == (1, 2, "1.10-1.50x")
    assert (p2.met, p2.cases) == (2, 2)  # the auto and SDCA rows are ours, not peers
