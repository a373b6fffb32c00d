"""Estimator parameters, each declared once with its default, allowed values and description.

An estimator class lists its parameters as annotated class attributes set to ``param(...)`` and is
decorated with ``declare_parameters``, which derives from these declarations

* ``__init__``, with an explicit keyword for every parameter (``dataclasses`` writes it, so
  ``get_params``, ``clone`` and ``check_estimator`` see an ordinary scikit-learn signature);
* ``_parameter_constraints``, which scikit-learn's ``_validate_params`` checks, with messages that
  name the parameter, the allowed values and the value given;
* the numpydoc "Parameters" section of the class docstring;

and ``describe_parameters`` gives the same declarations as JSON (type, default, allowed values,
description) for an API to publish. A subclass re-declares a parameter to change it (as each
classifier and regressor does for ``loss``).

A rule over two parameters, which neither's allowed values can say alone, is a ``JointRule`` in the
class's ``_parameter_rules``. ``check_parameters`` checks a mapping of values against all of these
before any estimator exists and says, per parameter at fault, which rule it breaks
(``ParameterProblem``): a service validates a request with it and reports the field. It applies
scikit-learn's own constraint objects, so it refuses exactly what ``_validate_params`` refuses.
"""

from __future__ import annotations

import dataclasses
import math
import textwrap
from collections.abc import Callable, Mapping, Set
from numbers import Integral, Real
from typing import Any, TypeVar, dataclass_transform

import numpy as np
from sklearn.utils._param_validation import (
    Interval,
    Options,
    StrOptions,
    make_constraint,
    validate_parameter_constraints,
)

T = TypeVar("T")

# The metadata key of a declared parameter (dataclass fields may carry other metadata).
_SPEC = "solver.parameter"
# Where the generated section goes, when the docstring has one (numpydoc order).
_BEFORE = "\n    Attributes\n    ----------\n"


class PositiveNumbers(Options):
    """A non-empty list (or 1-d array) of positive finite numbers, such as a grid of sigmas.

    scikit-learn's ``list`` constraint accepts any list: a grid of strings or of negative numbers
    would pass the check of a request and fail only in the fit. An ``Options`` subclass because
    scikit-learn's ``make_constraint`` takes its own constraint classes only; the options
    themselves are unused."""

    def __init__(self) -> None:
        super().__init__(list, set())

    def is_satisfied_by(self, val: Any) -> bool:
        if not isinstance(val, (list, np.ndarray)) or len(val) == 0 or np.ndim(val) != 1:
            return False
        return all(
            isinstance(v, (Real, np.floating, np.integer))
            and not isinstance(v, bool)
            and math.isfinite(v)
            and float(v) > 0.0
            for v in val
        )

    def __str__(self) -> str:
        return "a non-empty list of positive finite numbers"


class OnlyFalse(Options):
    """The one value False, with the reason a family allows no other: a flag every estimator
    declares (``early_stopping``) that some families cannot honour. An ``Options`` subclass for
    ``make_constraint``, as ``PositiveNumbers``."""

    def __init__(self, reason: str) -> None:
        super().__init__(bool, {False})
        self.reason = reason

    def is_satisfied_by(self, val: Any) -> bool:
        return isinstance(val, (bool, np.bool_)) and not val

    def __str__(self) -> str:
        return f"False ({self.reason})"


def is_weight(value: Any) -> bool:
    """Whether ``value`` is a weight: a finite number >= 0 (not a bool)."""
    return (
        isinstance(value, (Real, np.floating, np.integer))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and float(value) >= 0.0
    )


class ClassWeights(Options):
    """A mapping from class label to weight (a finite number >= 0): ``class_weight``'s explicit
    form. Whether each label is one of the data's is checked by the fit, which knows them."""

    def __init__(self) -> None:
        super().__init__(dict, set())

    def is_satisfied_by(self, val: Any) -> bool:
        return isinstance(val, Mapping) and all(is_weight(v) for v in val.values())

    def __str__(self) -> str:
        return "a mapping from label to a finite weight >= 0"


@dataclasses.dataclass(frozen=True)
class ParameterSpec:
    allowed: tuple  # scikit-learn constraints, any of which a value may satisfy
    doc: str  # one line
    details: str  # more, for the docstring only


def param(*, default: Any, allowed: list, doc: str, details: str = "", kw_only: bool = True) -> Any:
    """Declare a parameter: its default, the scikit-learn constraints of its values (``allowed``),
    a one-line description and optional further detail. Keyword-only unless ``kw_only=False``."""
    spec = ParameterSpec(tuple(allowed), doc, " ".join(details.split()))
    return dataclasses.field(default=default, kw_only=kw_only, metadata={_SPEC: spec})


@dataclass_transform(eq_default=False, kw_only_default=True, field_specifiers=(param,))
def declare_parameters(cls: type[T]) -> type[T]:
    """Make the ``param`` declarations of ``cls`` (and its bases) its parameters (module docstring)."""
    estimator: Any = dataclasses.dataclass(eq=False, repr=False, kw_only=True)(cls)
    estimator._parameter_constraints = {
        name: list(spec.allowed) for name, spec in declared(estimator).items()
    }
    # The defaults are checked here, once per class: a fit then checks only the values it was
    # given (``validate_given``), which spares every fit ~30 constraint checks.
    estimator._parameter_defaults = defaults(estimator)
    validate_parameter_constraints(
        estimator._parameter_constraints, estimator._parameter_defaults, caller_name=estimator.__name__
    )
    if estimator.__doc__ and not estimator.__name__.startswith("_"):
        estimator.__doc__ = _with_parameters_section(estimator.__doc__, estimator)
    return estimator


@dataclasses.dataclass(frozen=True)
class JointRule:
    """A rule that the values of two parameters must keep together, e.g. a step times the
    regularisation weight at most 1. It is checked once both values are allowed on their own;
    the first parameter is the one at fault when it breaks."""

    names: tuple[str, str]
    rule: str  # what the two values must satisfy, in words: "eta * sigma at most 1"
    holds: Callable[[Any, Any], bool]


@dataclasses.dataclass(frozen=True)
class ParameterProblem:
    """Why a value of one parameter is refused: the rule it breaks and the value given."""

    name: str
    rule: str  # the values allowed, in words (``type_text``), or a joint rule's
    value: Any
    # The other parameter of a broken joint rule, with its value; empty otherwise.
    others: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    unknown: bool = False  # not a parameter at all: ``rule`` lists the parameters

    def __str__(self) -> str:
        if self.unknown:
            return f"unknown parameter {self.name!r}; the parameters are {self.rule}"
        with_others = "".join(f" with {name}={value!r}" for name, value in self.others.items())
        return f"{self.name}: expected {self.rule}, got {self.value!r}{with_others}"

    def message(self, owner: str) -> str:
        """The error of estimator class ``owner``, worded as scikit-learn words its own."""
        if not self.others:
            return f"The {self.name!r} parameter of {owner} must be {self.rule}. Got {self.value!r} instead."
        given = {self.name: self.value, **self.others}
        quoted = " and ".join(repr(name) for name in given)
        values = " and ".join(f"{name}={value!r}" for name, value in given.items())
        return f"The {quoted} parameters of {owner} must have {self.rule}. Got {values} instead."


def check_parameters(cls: type, params: Mapping[str, Any]) -> list[ParameterProblem]:
    """The problems of ``params`` as parameters of estimator class ``cls``, at most one per
    parameter (none: ``cls(**params)`` passes ``validate_params``): names that are not
    parameters, values outside their declared constraints, then broken joint rules."""
    specs = declared(cls)
    problems = []
    for name, value in params.items():
        spec = specs.get(name)
        if spec is None:
            problems.append(ParameterProblem(name, ", ".join(sorted(specs)), value, unknown=True))
        elif not any(make_constraint(constraint).is_satisfied_by(value) for constraint in spec.allowed):
            problems.append(ParameterProblem(name, type_text(spec.allowed), value))
    refused = {problem.name for problem in problems}
    return problems + joint_problems(cls, params, refused)


def validate_given(estimator: Any, params: Mapping[str, Any]) -> None:
    """scikit-learn's check of each parameter alone (its ``_validate_params``, in its words), for
    the values of ``params`` that are not the declared default object itself, which
    ``declare_parameters`` checked."""
    defaults_of = type(estimator)._parameter_defaults
    given = {name: value for name, value in params.items() if value is not defaults_of[name]}
    validate_parameter_constraints(
        estimator._parameter_constraints, given, caller_name=type(estimator).__name__
    )


def joint_problems(
    cls: type, params: Mapping[str, Any], refused: Set[str] = frozenset()
) -> list[ParameterProblem]:
    """The broken joint rules of estimator class ``cls`` among ``params`` (the others at their
    defaults), skipping the rules of a parameter in ``refused``: what is left to check once each
    parameter passed alone (an estimator's fit checks each one with scikit-learn's own words first)."""
    values = {**defaults(cls), **params}
    problems = []
    for joint in getattr(cls, "_parameter_rules", ()):
        first, second = joint.names
        if refused.isdisjoint(joint.names) and not joint.holds(values[first], values[second]):
            problems.append(ParameterProblem(first, joint.rule, values[first], {second: values[second]}))
    return problems


def declared(cls: type) -> dict[str, ParameterSpec]:
    """The declared parameters of an estimator class, in declaration order."""
    return {field.name: field.metadata[_SPEC] for field in dataclasses.fields(cls)}


def defaults(cls: type) -> dict[str, Any]:
    return {field.name: field.default for field in dataclasses.fields(cls)}


def describe_parameters(cls: type) -> dict[str, dict[str, Any]]:
    """Every parameter of ``cls`` as JSON: its type in words, default, the JSON Schema of its
    allowed values (``anyOf`` when there are several kinds) and its one-line description."""
    default_values = defaults(cls)
    described = {}
    for name, spec in declared(cls).items():
        schemas = [_schema(constraint) for constraint in spec.allowed]
        described[name] = {
            "type": type_text(spec.allowed),
            "default": default_values[name],
            "schema": schemas[0] if len(schemas) == 1 else {"anyOf": schemas},
            "description": spec.doc,
        }
    return described


def type_text(allowed) -> str:
    """The allowed values in words, as numpydoc writes a type: ``float in (0, inf) or "auto"``."""
    return " or ".join(_text(constraint) for constraint in allowed)


def _text(constraint) -> str:
    if constraint is None:
        return "None"
    if isinstance(constraint, PositiveNumbers):
        return "list of float in (0, inf)"
    if isinstance(constraint, OnlyFalse):
        return str(constraint)
    if isinstance(constraint, ClassWeights):
        return "dict of label to float in [0, inf)"
    if isinstance(constraint, StrOptions):
        options = ", ".join(f'"{option}"' for option in sorted(constraint.options))
        return options if len(constraint.options) == 1 else "{" + options + "}"
    if isinstance(constraint, Interval):
        kind = "int" if constraint.type is Integral else "float"
        left = "-inf" if constraint.left is None else f"{constraint.left:g}"
        right = "inf" if constraint.right is None else f"{constraint.right:g}"
        opening = "[" if constraint.closed in ("left", "both") else "("
        closing = "]" if constraint.closed in ("right", "both") else ")"
        return f"{kind} in {opening}{left}, {right}{closing}"
    words: dict[Any, str] = {
        "boolean": "bool",
        "random_state": "int, RandomState or None",
        list: "list of float",
        np.ndarray: "ndarray of float",
        Real: "float",
        Integral: "int",
    }
    return words[constraint]


def _schema(constraint) -> dict[str, Any]:
    if constraint is None:
        return {"type": "null"}
    if isinstance(constraint, PositiveNumbers):
        return {"type": "array", "items": {"type": "number", "exclusiveMinimum": 0}, "minItems": 1}
    if isinstance(constraint, OnlyFalse):
        return {"type": "boolean", "const": False}
    if isinstance(constraint, ClassWeights):
        return {"type": "object", "additionalProperties": {"type": "number", "minimum": 0}}
    if isinstance(constraint, StrOptions):
        return {"type": "string", "enum": sorted(constraint.options)}
    if isinstance(constraint, Interval):
        schema: dict[str, Any] = {"type": "integer" if constraint.type is Integral else "number"}
        if constraint.left is not None:
            key = "minimum" if constraint.closed in ("left", "both") else "exclusiveMinimum"
            schema[key] = constraint.left
        if constraint.right is not None:
            key = "maximum" if constraint.closed in ("right", "both") else "exclusiveMaximum"
            schema[key] = constraint.right
        return schema
    schemas: dict[Any, dict[str, Any]] = {
        "boolean": {"type": "boolean"},
        # A RandomState instance is accepted too, but has no JSON form.
        "random_state": {"type": ["integer", "null"], "minimum": 0, "maximum": 2**32 - 1},
        list: {"type": "array", "items": {"type": "number"}},
        np.ndarray: {"type": "array", "items": {"type": "number"}},  # a list, in JSON
        Real: {"type": "number"},
        Integral: {"type": "integer"},
    }
    return schemas[constraint]


def _with_parameters_section(doc: str, cls: type) -> str:
    """``doc`` with a numpydoc "Parameters" section, before "Attributes" if it has one."""
    lines = ["", "    Parameters", "    ----------"]
    default_values = defaults(cls)
    for name, spec in declared(cls).items():
        lines.append(f"    {name} : {type_text(spec.allowed)}, default={default_values[name]!r}")
        text = f"{spec.doc} {spec.details}".strip()
        lines.append(textwrap.fill(text, width=100, initial_indent=" " * 8, subsequent_indent=" " * 8))
    section = "\n".join(lines) + "\n"
    doc = doc.rstrip() + "\n"
    if _BEFORE in doc:
        head, tail = doc.split(_BEFORE, 1)
        return head.rstrip() + "\n" + section + _BEFORE + tail
    return doc + section
