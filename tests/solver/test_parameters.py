"""Declared parameters (solver.parameters): one declaration gives the signature, the validation,
the docstring and the JSON description, for every catalogued estimator."""

from __future__ import annotations

import inspect
from numbers import Integral

import numpy as np
import pytest
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions

from solver import (
    SOLVERS,
    GCDClassifier,
    GDClassifier,
    GDRegressor,
    KernelPGSClassifier,
    LBFGSClassifier,
    LBFGSRegressor,
    OGDClassifier,
    OGDRegressor,
    PGSClassifier,
    SCDClassifier,
    SCDRegressor,
    SDCAClassifier,
    SGDClassifier,
    SGDRegressor,
    SMIDASClassifier,
    TruncGradClassifier,
    TruncGradRegressor,
)
from solver.parameters import (
    check_parameters,
    declare_parameters,
    declared,
    describe_parameters,
    param,
    type_text,
    validate_given,
)

from .problems import binary_problem

ESTIMATORS = [cls for spec in SOLVERS.values() for cls in (spec.classifier, spec.regressor)]
REGRESSORS = {spec.regressor for spec in SOLVERS.values()}


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda cls: cls.__name__)
def test_the_declarations_are_the_signature_the_constraints_and_the_docs(cls):
    specs = declared(cls)
    signature = inspect.signature(cls)
    assert list(signature.parameters)[0] == "loss"  # the one positional parameter, as before
    assert set(signature.parameters) == set(specs) == set(cls._parameter_constraints)
    assert set(cls().get_params()) == set(specs)
    assert all(p.kind is p.KEYWORD_ONLY for name, p in signature.parameters.items() if name != "loss")
    doc = cls.__doc__
    assert doc.index("    Parameters\n    ----------") < doc.index("    Attributes\n    ----------")
    for name, spec in specs.items():
        assert f"    {name} : {type_text(spec.allowed)}, default=" in doc
        assert spec.doc and len(spec.doc.splitlines()) == 1


@declare_parameters
class Toy(BaseEstimator):
    """A toy.

    Attributes
    ----------
    done_ : bool
    """

    size: int = param(
        default=3, allowed=[Interval(Integral, 1, None, closed="left")], doc="How many.", kw_only=False
    )
    mode: str = param(
        default="fast", allowed=[StrOptions({"fast", "exact"}), None], doc="How.", details="Exact is slow."
    )


@declare_parameters
class ExactToy(Toy):
    """An exact toy."""

    mode: str = param(default="exact", allowed=[StrOptions({"exact"})], doc="Only exact.")


def test_a_subclass_redeclares_a_parameter_in_place():
    assert str(inspect.signature(Toy)) == "(size: 'int' = 3, *, mode: 'str' = 'fast') -> None"
    assert ExactToy().get_params() == {"size": 3, "mode": "exact"}
    assert ExactToy._parameter_constraints["mode"][0].options == {"exact"}
    with pytest.raises(ValueError, match="'mode' parameter of ExactToy must be a str among"):
        ExactToy(mode="fast")._validate_params()
    assert ExactToy.__doc__.rstrip().endswith("mode : \"exact\", default='exact'\n        Only exact.")


def test_a_default_outside_its_allowed_values_fails_when_the_class_is_declared():
    """Declaring checks the defaults once; a fit then checks only the values it was given."""
    with pytest.raises(ValueError, match="'mode' parameter of BadToy must be a str among"):

        @declare_parameters
        class BadToy(Toy):
            """A toy whose default is not allowed."""

            mode: str = param(default="slow", allowed=[StrOptions({"exact"})], doc="Never slow.")


def test_only_the_values_given_are_checked_again_and_each_is():
    """The default objects are skipped; any other value, even one equal to a default, is checked."""
    validate_given(ExactToy(), {"size": 3, "mode": "exact"})
    with pytest.raises(ValueError, match="'size' parameter of ExactToy must be an int in the range"):
        validate_given(ExactToy(), {"size": 0, "mode": "exact"})
    with pytest.raises(ValueError, match="'mode' parameter of ExactToy must be a str among"):
        validate_given(ExactToy(), {"size": 3, "mode": "fast"})
    for cls in ESTIMATORS:  # every estimator's defaults pass as given, too
        validate_given(cls(), dict(cls._parameter_defaults))


def test_the_cached_parameter_names_are_the_signature_s_and_callers_cannot_change_them():
    first = PGSClassifier._get_param_names()
    first.append("not a parameter")  # a caller's change does not reach the cache
    assert PGSClassifier._get_param_names() == sorted(inspect.signature(PGSClassifier).parameters)
    assert SDCAClassifier._get_param_names() == sorted(inspect.signature(SDCAClassifier).parameters)


def test_the_generated_section_goes_before_the_attributes():
    doc = Toy.__doc__
    assert doc.index("size : int in [1, inf), default=3\n        How many.") < doc.index("Attributes")
    assert 'mode : {"exact", "fast"} or None, default=\'fast\'\n        How. Exact is slow.' in doc


def test_describe_parameters_is_json_schema():
    assert describe_parameters(Toy) == {
        "size": {
            "type": "int in [1, inf)",
            "default": 3,
            "description": "How many.",
            "schema": {"type": "integer", "minimum": 1},
        },
        "mode": {
            "type": '{"exact", "fast"} or None',
            "default": "fast",
            "description": "How.",
            "schema": {"anyOf": [{"type": "string", "enum": ["exact", "fast"]}, {"type": "null"}]},
        },
    }


# Every family's parameters: the error names the parameter, the allowed values and the value given.
BAD_PARAMETERS = [
    (PGSClassifier, {"p": 2.5}, ["'p'", "[1.01, 2.0]", "2.5"]),
    (PGSClassifier, {"p": 1.005}, ["'p'", "[1.01, 2.0]", "1.005"]),
    (PGSClassifier, {"sigma": 0.0}, ["'sigma'", "(0.0, inf)", "0.0"]),
    (PGSClassifier, {"sigma": -1.0}, ["'sigma'", "-1.0"]),
    (PGSClassifier, {"batch_size": 0}, ["'batch_size'", "[1, inf)", "0"]),
    (PGSClassifier, {"loss": "cauchy"}, ["'loss'", "logistic", "cauchy"]),
    (PGSClassifier, {"output": "best"}, ["'output'", "average", "best"]),
    (PGSClassifier, {"radius": -2.0}, ["'radius'", "-2.0"]),
    (PGSClassifier, {"t0": 0.5}, ["'t0'", "0.5"]),
    (PGSClassifier, {"intercept_scaling": 0.0}, ["'intercept_scaling'", "(0.0, inf)", "auto", "0.0"]),
    (PGSClassifier, {"average_power": -1.0}, ["'average_power'", "[0.0, inf)", "-1.0"]),
    (PGSClassifier, {"target_score": float("nan")}, ["'target_score'", "nan"]),
    (GDClassifier, {"eta": 0.0}, ["'eta'", "(0.0, inf)", "'auto'", "0.0"]),
    (SGDClassifier, {"eta": -1.0}, ["'eta'", "-1.0"]),
    (SGDClassifier, {"eta": "big"}, ["'eta'", "'auto'", "big"]),
    (GDRegressor, {"eta": 2.0, "sigma": 1.0}, ["'eta'", "'sigma'", "at most 1", "eta=2.0", "sigma=1.0"]),
    (OGDClassifier, {"t0": -1.0}, ["'t0'", "[0.0, inf)", "-1.0"]),
    (OGDClassifier, {"batch_size": 0}, ["'batch_size'", "[1, inf)", "0"]),
    (SGDRegressor, {"output": "random"}, ["'output'", "average", "last", "random"]),
    (OGDRegressor, {"loss": "hinge"}, ["'loss'", "squared", "hinge"]),
    (GDClassifier, {"loss": "cauchy"}, ["'loss'", "logistic", "cauchy"]),
    (SGDClassifier, {"sigma": 0.0}, ["'sigma'", "(0.0, inf)", "0.0"]),
    (OGDClassifier, {"n_iter": 0}, ["'n_iter'", "0"]),
    (GDClassifier, {"epsilon": -1.0}, ["'epsilon'", "-1.0"]),
    (KernelPGSClassifier, {"kernel": "sigmoid"}, ["'kernel'", "rbf", "sigmoid"]),
    (KernelPGSClassifier, {"gamma": 0.0}, ["'gamma'", "(0.0, inf)", "'scale'", "0.0"]),
    (KernelPGSClassifier, {"gamma": "auto"}, ["'gamma'", "'scale'", "auto"]),
    (KernelPGSClassifier, {"degree": 0}, ["'degree'", "[1, inf)", "0"]),
    (KernelPGSClassifier, {"degree": 2.5}, ["'degree'", "2.5"]),
    (KernelPGSClassifier, {"coef0": "one"}, ["'coef0'", "one"]),
    (KernelPGSClassifier, {"cache_size": -1.0}, ["'cache_size'", "[0.0, inf)", "-1.0"]),
    (KernelPGSClassifier, {"t0": 0.5}, ["'t0'", "[1.0, inf)", "0.5"]),
    (KernelPGSClassifier, {"batch_size": 0}, ["'batch_size'", "0"]),
    (KernelPGSClassifier, {"output": "random"}, ["'output'", "random"]),
    (KernelPGSClassifier, {"sigma": -1.0}, ["'sigma'", "-1.0"]),
    (KernelPGSClassifier, {"loss": "huber"}, ["'loss'", "logistic", "huber"]),
    (SCDClassifier, {"sigma": 0.0}, ["'sigma'", "(0.0, inf)", "0.0"]),
    (SCDClassifier, {"loss": "hinge"}, ["'loss'", "logistic", "Got 'hinge'"]),
    (SCDRegressor, {"loss": "logistic"}, ["'loss'", "squared", "Got 'logistic'"]),
    (GCDClassifier, {"n_iter": 0}, ["'n_iter'", "[1, inf)", "0"]),
    (GCDClassifier, {"epsilon": -1.0}, ["'epsilon'", "-1.0"]),
    (SMIDASClassifier, {"eta": 0.0}, ["'eta'", "(0.0, inf)", "'auto'", "0.0"]),
    (SMIDASClassifier, {"eta": "fast"}, ["'eta'", "'auto'", "fast"]),
    (SMIDASClassifier, {"batch_size": 0}, ["'batch_size'", "[1, inf)", "0"]),
    (TruncGradClassifier, {"sigma": -1.0}, ["'sigma'", "-1.0"]),
    (TruncGradClassifier, {"loss": "cauchy"}, ["'loss'", "hinge", "cauchy"]),
    (TruncGradRegressor, {"loss": "hinge"}, ["'loss'", "huber", "Got 'hinge'"]),
    (LBFGSClassifier, {"p": 2.5}, ["'p'", "(1.0, 2.0]", "2.5"]),
    (LBFGSClassifier, {"p": 1.0}, ["'p'", "(1.0, 2.0]", "1.0"]),
    (LBFGSClassifier, {"sigma": 0.0}, ["'sigma'", "(0.0, inf)", "0.0"]),
    (LBFGSClassifier, {"tol": -1.0}, ["'tol'", "[0.0, inf)", "-1.0"]),
    (LBFGSClassifier, {"n_iter": 0}, ["'n_iter'", "[1, inf)", "0"]),
    (LBFGSClassifier, {"loss": "hinge"}, ["'loss'", "logistic", "Got 'hinge'"]),
    (LBFGSRegressor, {"loss": "logistic"}, ["'loss'", "squared", "Got 'logistic'"]),
]


@pytest.mark.parametrize(("cls", "params", "words"), BAD_PARAMETERS)
def test_bad_parameters_name_parameter_range_and_value(cls, params, words):
    X, y = binary_problem()
    if cls in REGRESSORS:
        y = y.astype(float)
    with pytest.raises(ValueError) as info:
        cls(**params).fit(X, y)
    for word in words:
        assert word in str(info.value)


# -- the structured check (check_parameters) and scikit-learn's agree ------------------------------

# Values tried on every parameter of every estimator: each kind of JSON value, the bounds of the
# declared intervals and either side of them, non-finite numbers, every declared string and
# strings that are none.
PROBES = [
    None,
    True,
    False,
    -1,
    0,
    1,
    2,
    3,
    2**32,
    2**63,
    -1.0,
    0.0,
    0.5,
    1.0,
    1.005,
    1.01,
    1.5,
    2.0,
    2.5,
    1e12,
    float("nan"),
    float("inf"),
    float("-inf"),
    "",
    "no-such-choice",
    "1.0",
    [1.0],
    {"value": 1.0},
    np.random.RandomState(0),
]


def _probes(spec) -> list:
    """PROBES and, for a parameter with choices, each of them."""
    options = [option for c in spec.allowed if isinstance(c, StrOptions) for option in sorted(c.options)]
    return PROBES + options


def _accepts(check) -> bool:
    try:
        check()
    except (ValueError, TypeError):
        return False
    return True


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda cls: cls.__name__)
def test_the_structured_check_refuses_what_scikit_learn_refuses(cls):
    accepted: dict[str, int] = {}
    refused: dict[str, int] = {}
    for name, spec in declared(cls).items():
        for value in _probes(spec):
            problems = check_parameters(cls, {name: value})
            estimator = cls(**{name: value})
            # What fit checks (scikit-learn's check of each parameter, then the joint rules), and
            # scikit-learn's check alone.
            assert (not problems) == _accepts(estimator.validate_params), (name, value)
            alone = [problem for problem in problems if not problem.others]
            assert (not alone) == _accepts(estimator._validate_params), (name, value)
            if alone:
                (problem,) = alone
                assert (problem.name, problem.value, problem.rule) == (name, value, type_text(spec.allowed))
            if problems:
                refused[name] = refused.get(name, 0) + 1
            else:
                accepted[name] = accepted.get(name, 0) + 1
    # The table tells good from bad for every parameter: it has values of both kinds.
    assert set(accepted) == set(refused) == set(declared(cls))


def test_an_unknown_name_is_a_problem_and_no_parameter():
    (problem,) = check_parameters(PGSClassifier, {"colour": "red"})
    assert (problem.name, problem.value, problem.unknown) == ("colour", "red", True)
    assert "batch_size" in problem.rule and "sigma" in problem.rule
    with pytest.raises(TypeError, match="colour"):
        PGSClassifier(colour="red")


# A step and a regularisation weight whose product passes 1: a rule of the two together.
JOINT = [
    (GDRegressor, {"eta": 2.0, "sigma": 1.0}, False),
    (GDRegressor, {"eta": 1.0, "sigma": 1.0}, True),
    (GDClassifier, {"eta": 1e4}, True),  # with the default sigma, 1e-5: 0.1
    (SGDClassifier, {"eta": 2e5}, False),
    (SGDRegressor, {"eta": "auto", "sigma": 1e6}, True),
    (OGDClassifier, {"sigma": 1e6}, True),  # no constant step
]


@pytest.mark.parametrize(("cls", "params", "valid"), JOINT)
def test_a_joint_rule_is_checked_as_validate_params_checks_it(cls, params, valid):
    problems = check_parameters(cls, params)
    try:
        cls(**params).validate_params()
    except ValueError as exc:
        (problem,) = problems
        assert not valid and str(exc) == problem.message(cls.__name__)
        assert problem.name == "eta" and set(problem.others) == {"sigma"}
    else:
        assert valid and not problems


def test_a_joint_rule_waits_for_both_values_to_be_allowed():
    # eta="big" is refused on its own; the product is not computed.
    (problem,) = check_parameters(SGDClassifier, {"eta": "big", "sigma": 1.0})
    assert problem.others == {} and problem.rule == type_text(declared(SGDClassifier)["eta"].allowed)


def test_a_problem_reads_as_the_rule_and_the_value():
    (single,) = check_parameters(Toy, {"size": 0})
    assert str(single) == "size: expected int in [1, inf), got 0"
    assert single.message("Toy") == "The 'size' parameter of Toy must be int in [1, inf). Got 0 instead."
    (joint,) = check_parameters(GDRegressor, {"eta": 2.0, "sigma": 1.0})
    assert str(joint).startswith("eta: expected eta * sigma at most 1")
    assert str(joint).endswith("got 2.0 with sigma=1.0")
