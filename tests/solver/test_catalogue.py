"""The catalogue (solver.catalogue): every solver with its estimators, built and validated by name,
and described from the same declarations that validate it."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

import solver.estimators
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
    PGSClassifier,
    SCDClassifier,
    SCDRegressor,
    SDCAClassifier,
    SDCARegressor,
    SGDClassifier,
    SGDRegressor,
    SMIDASClassifier,
    SMIDASRegressor,
    SolverSpec,
    TruncGradClassifier,
    TruncGradRegressor,
    estimator_for,
    load_model,
)
from solver.estimators import LinearModelBase
from solver.losses import CLASSIFICATION_LOSSES, REGRESSION_LOSSES


def test_every_l1_solver_is_catalogued():
    for name, (clf, reg) in {
        "scd": (SCDClassifier, SCDRegressor),
        "gcd": (GCDClassifier, GCDRegressor),
        "smidas": (SMIDASClassifier, SMIDASRegressor),
        "truncgrad": (TruncGradClassifier, TruncGradRegressor),
    }.items():
        assert SOLVERS[name].classifier is clf and SOLVERS[name].regressor is reg


def test_every_lecture_solver_and_lbfgs_is_catalogued():
    for name in ("gd", "sgd", "ogd", "kernel_pgs"):
        assert SOLVERS[name].classifier is not None and SOLVERS[name].regressor is not None
    assert (SOLVERS["gd"].classifier, SOLVERS["gd"].regressor) == (GDClassifier, GDRegressor)
    assert (SOLVERS["sgd"].classifier, SOLVERS["sgd"].regressor) == (SGDClassifier, SGDRegressor)
    assert (SOLVERS["ogd"].classifier, SOLVERS["ogd"].regressor) == (OGDClassifier, OGDRegressor)
    assert SOLVERS["kernel_pgs"].regressor is KernelPGSRegressor
    assert SOLVERS["lbfgs"].classifier is LBFGSClassifier
    assert SOLVERS["lbfgs"].regressor is LBFGSRegressor


def test_sdca_is_catalogued_with_its_four_losses():
    assert (SOLVERS["sdca"].classifier, SOLVERS["sdca"].regressor) == (SDCAClassifier, SDCARegressor)
    tasks = SOLVERS["sdca"].describe()["tasks"]
    assert tasks["binary"]["losses"] == ["hinge", "logistic", "squared", "squared_hinge"]
    assert tasks["regression"]["losses"] == ["squared"]


def _public_estimators() -> set[type]:
    """Every estimator class of the package that is not a family's private base."""
    found, pending = set(), [LinearModelBase]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls.__module__.startswith("solver.") and not cls.__name__.startswith("_"):
            found.add(cls)
    return found - {LinearModelBase}


def test_every_public_estimator_is_catalogued_and_exported():
    import solver

    catalogued = {cls for spec in SOLVERS.values() for cls in spec.estimators}
    assert catalogued == _public_estimators()
    assert {cls.__name__ for cls in catalogued} <= set(solver.__all__)


def test_a_solvers_name_and_streaming_are_its_estimators_own():
    for name, spec in SOLVERS.items():
        assert name == spec.name == spec.classifier.solver_name == spec.regressor.solver_name
        assert spec.streams is spec.classifier.streams is spec.regressor.streams
    # An entry whose estimators belong to two solvers is refused when it is written.
    with pytest.raises(ValueError, match="disagree on solver_name"):
        SolverSpec(PGSClassifier, SGDRegressor, "Mixed", "paper", "algorithm")
    with pytest.raises(ValueError, match="disagree on streams"):
        SolverSpec(OGDClassifier, _Unstreamed, "Mixed", "paper", "algorithm")


class _Unstreamed(OGDRegressor):
    """An ogd estimator that claims not to stream."""

    streams = False


def test_the_estimators_do_not_import_the_catalogue():
    # The catalogue imports the estimators; they read their solver's name and streaming from
    # their own class attributes.
    for module in sorted(Path(solver.estimators.__file__).parent.glob("*.py")):
        tree = ast.parse(module.read_text())
        imported = [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)] + [
            alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
        ]
        assert not [name for name in imported if "catalogue" in name], module.name


def test_load_model_refuses_a_class_outside_the_catalogue():
    meta, arrays = PGSClassifier(n_iter=50).fit([[0.0], [1.0]], [0, 1]).export_model()
    assert type(load_model(meta, arrays)) is PGSClassifier
    with pytest.raises(ValueError, match="not a model this version can load: 'LinearModelBase'"):
        load_model({**meta, "estimator": "LinearModelBase"}, arrays)


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
    assert sigma["schema"] == {
        "anyOf": [{"type": "number", "exclusiveMinimum": 0.0}, {"type": "string", "enum": ["auto"]}]
    }
    assert sigma["default"] == 1e-5
