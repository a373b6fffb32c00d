"""The registry (solver.registry): every solver with its estimators, built and validated by name,
and described from the same declarations that validate it."""

from __future__ import annotations

import json

import pytest

from solver import (
    SOLVERS,
    GCDClassifier,
    GCDRegressor,
    GDClassifier,
    GDRegressor,
    KernelPGSClassifier,
    KernelPGSRegressor,
    LBFGSClassifier,
    LBFGSRegressor,
    OGDClassifier,
    OGDRegressor,
    SCDClassifier,
    SCDRegressor,
    SGDClassifier,
    SGDRegressor,
    SMIDASClassifier,
    SMIDASRegressor,
    TruncGradClassifier,
    TruncGradRegressor,
    estimator_for,
)
from solver.estimators.base import ESTIMATORS
from solver.losses import CLASSIFICATION_LOSSES, REGRESSION_LOSSES


def test_every_l1_solver_is_registered():
    for name, (clf, reg) in {
        "scd": (SCDClassifier, SCDRegressor),
        "gcd": (GCDClassifier, GCDRegressor),
        "smidas": (SMIDASClassifier, SMIDASRegressor),
        "truncgrad": (TruncGradClassifier, TruncGradRegressor),
    }.items():
        assert SOLVERS[name].classifier is clf and SOLVERS[name].regressor is reg


def test_every_lecture_solver_and_lbfgs_is_registered():
    for name in ("gd", "sgd", "ogd", "kernel_pgs"):
        assert SOLVERS[name].classifier is not None and SOLVERS[name].regressor is not None
    assert (SOLVERS["gd"].classifier, SOLVERS["gd"].regressor) == (GDClassifier, GDRegressor)
    assert (SOLVERS["sgd"].classifier, SOLVERS["sgd"].regressor) == (SGDClassifier, SGDRegressor)
    assert (SOLVERS["ogd"].classifier, SOLVERS["ogd"].regressor) == (OGDClassifier, OGDRegressor)
    assert SOLVERS["kernel_pgs"].regressor is KernelPGSRegressor
    assert SOLVERS["lbfgs"].classifier is LBFGSClassifier
    assert SOLVERS["lbfgs"].regressor is LBFGSRegressor


def test_every_public_estimator_is_registered_and_exported():
    import solver

    registered = {cls for spec in SOLVERS.values() for cls in (spec.classifier, spec.regressor)}
    assert registered == set(ESTIMATORS.values())
    assert {cls.__name__ for cls in registered} <= set(solver.__all__)


def test_estimator_for_builds_and_validates():
    est = estimator_for("kernel_pgs", "binary", {"sigma": 1e-3, "kernel": "poly", "degree": 2})
    assert isinstance(est, KernelPGSClassifier)
    with pytest.raises(ValueError, match="'eta'"):
        estimator_for("sgd", "regression", {"eta": -1.0})


def test_describe_gives_tasks_losses_and_every_parameter_as_json():
    for name, spec in SOLVERS.items():
        described = spec.describe()
        assert json.loads(json.dumps(described)) == described
        assert set(described["tasks"]) == {"binary", "multiclass", "regression"}
        for task, entry in described["tasks"].items():
            cls = spec.estimator_class(task)
            assert entry["estimator"] == cls.__name__
            assert set(entry["parameters"]) == set(cls().get_params())
            for param, info in entry["parameters"].items():
                assert info["default"] == cls().get_params()[param], (name, param)
                assert info["description"] and info["type"] and info["schema"]
            assert entry["parameters"]["loss"]["schema"]["enum"] == entry["losses"]
    # Coordinate descent and L-BFGS need a smooth loss: the hinge is not among theirs.
    assert "hinge" not in SOLVERS["gcd"].describe()["tasks"]["binary"]["losses"]
    assert "hinge" not in SOLVERS["lbfgs"].describe()["tasks"]["binary"]["losses"]
    assert SOLVERS["pgs"].describe()["tasks"]["binary"]["losses"] == sorted(CLASSIFICATION_LOSSES)
    assert SOLVERS["pgs"].describe()["tasks"]["regression"]["losses"] == sorted(REGRESSION_LOSSES)
    sigma = SOLVERS["pgs"].describe()["tasks"]["binary"]["parameters"]["sigma"]
    assert sigma["schema"] == {"type": "number", "exclusiveMinimum": 0.0}
    assert sigma["default"] == 1e-5
