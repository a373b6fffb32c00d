"""app/services/solvers/estimators.py: an EstimatorSpec builds the estimator a job asks for (its params,
time budget and a study's sigma), and a refusal names the field at fault, the rule and the value."""

from __future__ import annotations

import pytest

from app.services.solvers.estimators import EstimatorSpec, InvalidParams


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


def test_a_refusal_gives_each_fields_rule_and_the_value_received():
    params = {"p": 2.5, "colour": "red", "n_iter": 2**63, "sigma": float("nan"), "loss": "hinge"}
    with pytest.raises(InvalidParams) as refused:
        EstimatorSpec("pgs", "binary", params).build()
    errors = {e["field"]: e for e in refused.value.errors}
    assert set(errors) == {"body.params.p", "body.params.colour", "body.params.n_iter", "body.params.sigma"}
    p = errors["body.params.p"]
    assert (p["loc"], p["type"], p["rule"], p["input"]) == (
        ["body", "params", "p"],
        "value_error",
        "float in [1.01, 2]",
        2.5,
    )
    assert p["msg"] == "p: expected float in [1.01, 2], got 2.5"
    colour = errors["body.params.colour"]
    assert (colour["type"], colour["input"]) == ("extra_forbidden", "red")
    assert "batch_size" in colour["rule"] and "sigma" in colour["rule"]
    # The solver accepts any count; the service's bound does not.
    n_iter = errors["body.params.n_iter"]
    assert (n_iter["rule"], n_iter["input"]) == ("a finite number of magnitude at most 1e+12", 2**63)
    # JSON has no NaN: the value received is named.
    assert errors["body.params.sigma"]["input"] == "nan"
    assert str(refused.value).startswith("invalid params for PGSClassifier: p: expected")


def test_a_rule_over_two_parameters_blames_the_step():
    with pytest.raises(InvalidParams) as refused:
        EstimatorSpec("sgd", "regression", {"eta": 2.0, "sigma": 1.0}).build()
    (error,) = refused.value.errors
    assert (error["field"], error["input"]) == ("body.params.eta", 2.0)
    assert error["rule"].startswith("eta * sigma at most 1")
    assert error["msg"].endswith("got 2.0 with sigma=1.0")
