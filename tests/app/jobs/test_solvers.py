"""app/services/solvers.py: an EstimatorSpec builds the estimator a job asks for (its params, time budget
and a study's sigma), and a refusal names the field at fault."""

from __future__ import annotations

import pytest

from app.services.solvers import EstimatorSpec, InvalidParams


def test_the_spec_builds_the_jobs_estimator():
    spec = EstimatorSpec("pgs", "binary", {"loss": "hinge", "sigma": 0.5}, time_budget_s=3.0)
    est = spec.build()
    assert type(est).__name__ == "PGSClassifier"
    assert (est.loss, est.sigma, est.time_budget) == ("hinge", 0.5, 3.0)
    assert spec.build(sigma=0.01).sigma == 0.01  # a study's sigma selection
    assert spec.params == {"loss": "hinge", "sigma": 0.5}  # the stored params are left alone
    assert type(EstimatorSpec("pgs", "regression", {}).build()).__name__ == "PGSRegressor"


@pytest.mark.parametrize(
    ("spec", "loc"),
    [
        (EstimatorSpec("no-such-solver", "binary", {}), ["body", "solver"]),
        (EstimatorSpec("pgs", "binary", {"colour": "red"}), ["body", "params", "colour"]),
        (EstimatorSpec("pgs", "binary", {"p": 2.5}), ["body", "params", "p"]),
        (EstimatorSpec("pgs", "regression", {"loss": "hinge"}), ["body", "params", "loss"]),
    ],
)
def test_a_refusal_names_the_field(spec: EstimatorSpec, loc: list[str]):
    with pytest.raises(InvalidParams) as refused:
        spec.build()
    assert [e["loc"] for e in refused.value.errors] == [loc]
