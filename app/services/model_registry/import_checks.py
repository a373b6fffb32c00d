"""A model import's document, checked before any of its arrays is built: every number finite;
the facts of the database row and the model's files saying the same; the params validated as a
job's are (app/services/solvers.py, from the solver's declarations); the widths within
PGS_MAX_FEATURES and the dense weights within PGS_MAX_MODEL_BYTES; and the headers of the arrays
exactly those the estimator and the preprocessing export, with the dtypes and shapes the widths
imply.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from app.core.errors import ProblemError, field_error, invalid
from app.schemas.coefficients import FitWarning
from app.services.model_registry.import_read import ArrayHeader, ImportLimits, refuse, too_large
from app.services.model_registry.portable import EstimatorFiles, PortableDoc, PreprocessingSettings
from app.services.solvers.estimators import EstimatorSpec, InvalidParams

# The facts the files repeat. The database row takes them from "model" and a loaded model partly
# from the files, so the two must agree; the files may leave out those a loaded model does not
# read from them.
REPEATED_FACTS = ("solver", "task", "n_features", "index_base", "classes", "preprocessing", "feature_names")
READ_FROM_FILES = {"preprocessing", "feature_names"}
KINDS = {"f": "float64", "i": "integers", "U": "strings"}
# An array's kind and shape.
Expect = tuple[str, tuple[int, ...]]
Schema = TypeVar("Schema", bound=BaseModel)


@dataclass(frozen=True)
class Plan:
    """A checked document, and how its arrays are laid out."""

    doc: PortableDoc
    files: dict[str, Any]  # as validated, and as they are stored
    outputs: int  # rows of the weights: one per class of a multiclass model, else one
    n_in: int  # the estimator's width (the preprocessing's output)
    kernel: bool


def check_document(raw: dict[str, Any], headers: dict[str, ArrayHeader], limits: ImportLimits) -> Plan:
    check_finite(raw)
    doc = _validated(PortableDoc, raw, [])
    if doc.model.metrics is not None:
        _validated(LearnedMetrics, doc.model.metrics, ["model", "metrics"])
    prep = _check_widths(doc, limits.max_features)
    estimator = _check_estimator(doc)
    outputs = len(doc.model.classes or []) if doc.model.task == "multiclass" else 1
    kernel = hasattr(estimator, "kernel")
    n_in = _check_layout(headers, doc, prep, outputs, kernel)
    size = 8 * outputs * (n_in + 1)  # as a job's model is counted (app/services/jobs/limits.py)
    if size > limits.max_bytes:
        what = f"the dense weights ({outputs} x {n_in} features and intercepts)"
        raise too_large(["files", "estimator", "n_features_in"], what, size, limits.max_bytes)
    return Plan(doc, doc.files.model_dump(exclude_unset=True), outputs, n_in, kernel)


class LearnedMetrics(BaseModel):
    """The metrics a model's answer shows as its own fields: an import's warnings must have
    their shape (its coefficients are computed from its arrays; any other metric is the
    exporter's to keep)."""

    model_config = ConfigDict(extra="allow")

    warnings: list[FitWarning] | None = None


def check_finite(doc: Any) -> None:
    """422 naming the first number that is not finite: JSON has no NaN or infinity (``NaN``,
    ``Infinity`` and ``1e400`` parse as floats), and an export of it would fail."""
    stack: list[tuple[Any, list[str | int]]] = [(doc, [])]
    while stack:
        value, loc = stack.pop()
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            if isinstance(item, float) and not math.isfinite(item):
                raise refuse([*loc, key], f"{item} is not a finite number")
            if isinstance(item, dict | list):
                stack.append((item, [*loc, key]))


def _validated(schema: type[Schema], value: Any, loc: list[str | int]) -> Schema:
    try:
        return schema.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise refuse([*loc, *first["loc"]], first["msg"]) from exc


# -- widths and repeated facts -----------------------------------------------------------------------


def _check_widths(doc: PortableDoc, max_features: int) -> PreprocessingSettings | None:
    """The model's width within PGS_MAX_FEATURES (as a data set's is), its names and its
    preprocessing of that width; returns the preprocessing's settings."""
    facts = doc.model
    n = facts.n_features
    if n > max_features:
        msg = f"{n} features: more than {max_features} (PGS_MAX_FEATURES), the most a data set has"
        raise refuse(["model", "n_features"], msg)
    for key in REPEATED_FACTS:
        given, want = getattr(doc.files.service, key), getattr(facts, key)
        if given != want and (given is not None or key in READ_FROM_FILES):
            raise refuse(["files", "service", key], f"does not match model.{key}")
    if facts.feature_names is not None and len(facts.feature_names) != n:
        raise refuse(["model", "feature_names"], f"{len(facts.feature_names)} names for {n} features")
    if facts.preprocessing is None:
        return None
    prep = _validated(PreprocessingSettings, facts.preprocessing, ["model", "preprocessing"])
    if prep.n_features != n:
        raise refuse(["model", "preprocessing", "n_features"], f"{prep.n_features}, but the model has {n}")
    for name in ("categorical", "ignore"):
        columns = getattr(prep, name)
        if any(b <= a for a, b in zip(columns, columns[1:], strict=False)) or not all(
            0 <= j < n for j in columns[:1] + columns[-1:]
        ):
            raise refuse(["model", "preprocessing", name], f"column indices increase within 0..{n - 1}")
    if set(prep.categorical) & set(prep.ignore):
        raise refuse(["model", "preprocessing", "ignore"], "a column is a text column or ignored, not both")
    return prep


# -- the estimator: params, name, classes --------------------------------------------------------------


def _check_estimator(doc: PortableDoc) -> Any:
    """The unfitted estimator the params build, checked as a job's are."""
    facts, files = doc.model, doc.files.estimator
    if files.params != facts.params:
        raise refuse(["files", "estimator", "params"], "do not match model.params")
    try:
        estimator = EstimatorSpec(facts.solver, facts.task, facts.params).build()
    except InvalidParams as exc:
        raise _params_problem(exc) from exc
    name = type(estimator).__name__
    named = {("model", "estimator"): facts.estimator, ("files", "estimator", "estimator"): files.estimator}
    for loc, given in named.items():
        if given != name:
            raise refuse(loc, f"{given!r} is not {name}, solver {facts.solver!r}'s {facts.task} estimator")
    _check_classes(doc)
    return estimator


def _params_problem(exc: InvalidParams) -> ProblemError:
    # The job rules name body.params.<name> (or body.solver): here they sit under body.model.
    errors = [
        field_error(["body", "model", *e["loc"][1:]], e["msg"], e["type"], **_details(e)) for e in exc.errors
    ]
    fields = ", ".join(e["field"].removeprefix("body.") for e in errors)
    return invalid(f"not a model export: {fields}: {exc}", errors)


def _details(error: dict[str, Any]) -> dict[str, Any]:
    """A parameter error's rule and the value received, where the check gave them."""
    return {key: error[key] for key in ("rule", "input") if key in error}


def _check_classes(doc: PortableDoc) -> None:
    classes, codes = doc.model.classes, doc.files.estimator.classes
    if doc.model.task == "regression":
        if classes is not None or codes is not None:
            raise refuse(["model", "classes"], "a regression model has no classes")
        return
    k = len(classes or [])
    if classes is None or len(set(classes)) != k or k < 2 or (k == 2) != (doc.model.task == "binary"):
        raise refuse(["model", "classes"], "a binary model has 2 distinct classes, a multiclass one more")
    if codes != list(range(k)):
        raise refuse(["files", "estimator", "classes"], f"the estimator's classes are its codes 0..{k - 1}")


# -- the arrays' headers -----------------------------------------------------------------------------


def _check_layout(
    headers: dict[str, ArrayHeader],
    doc: PortableDoc,
    prep: PreprocessingSettings | None,
    outputs: int,
    kernel: bool,
) -> int:
    """Exactly the arrays the estimator and the preprocessing export, each of the kind and shape
    the widths imply; returns the estimator's width."""
    expect, n_in = _preprocessing_arrays(headers, prep) if prep else ({}, doc.model.n_features)
    files = doc.files.estimator
    if files.n_features_in != n_in:
        msg = f"{files.n_features_in}, not the {n_in} features the estimator takes"
        raise refuse(["files", "estimator", "n_features_in"], msg)
    expect |= _estimator_arrays(headers, files, outputs, n_in, kernel)
    unexpected = sorted(set(headers) - set(expect))
    if unexpected:
        raise refuse(["arrays", unexpected[0]], "is not an array of this model")
    for name, (kind, shape) in expect.items():
        header = headers.get(name)
        if header is None:
            raise refuse(["arrays", name], "is missing")
        if header.kind != kind or header.shape != shape:
            msg = f"must be {KINDS[kind]} of shape {list(shape)}, not {header.dtype} {list(header.shape)}"
            raise refuse(["arrays", name], msg)
    return n_in


def _length(headers: dict[str, ArrayHeader], name: str, low: int = 0, high: int | None = None) -> int:
    """The length of the 1-d array ``name``, within [low, high]."""
    header = headers.get(name)
    if header is None or len(header.shape) != 1:
        raise refuse(["arrays", name], "must be a 1-d array")
    n = header.shape[0]
    if n < low or (high is not None and n > high):
        within = f"{low} to {high}" if high is not None else f"at least {low}"
        raise refuse(["arrays", name], f"has {n} values, not {within}")
    return n


def _preprocessing_arrays(
    headers: dict[str, ArrayHeader], prep: PreprocessingSettings
) -> tuple[dict[str, Expect], int]:
    """The preprocessing's arrays (solver.export_preprocessor) and its output's width: the numeric
    columns (every column not text nor ignored), then one per category of each text column."""
    width = prep.n_features - len(set(prep.categorical) | set(prep.ignore))
    expect: dict[str, Expect] = {}
    if prep.impute:
        expect["impute.statistics_"] = ("f", (width,))
    if prep.scaling == "standard":
        expect |= {f"scale.{attr}": ("f", (width,)) for attr in ("mean_", "var_", "scale_")}
    elif prep.scaling == "maxabs":
        # Stored by its non-zeros: the columns seen in training.
        nnz = _length(headers, "preprocessing.scale.max_abs_.values", 0, width)
        expect |= {"scale.max_abs_.indices": ("i", (nnz,)), "scale.max_abs_.values": ("f", (nnz,))}
    categories = [_length(headers, f"preprocessing.categories.{k}", 1) for k in range(len(prep.categorical))]
    expect |= {f"categories.{k}": ("U", (count,)) for k, count in enumerate(categories)}
    return {f"preprocessing.{name}": e for name, e in expect.items()}, width + sum(categories)


def _estimator_arrays(
    headers: dict[str, ArrayHeader], files: EstimatorFiles, outputs: int, n_in: int, kernel: bool
) -> dict[str, Expect]:
    """The estimator's arrays (its export_model): the weights dense or by their non-zeros, or a
    kernel model's support vectors (CSR) and dual coefficients."""
    if kernel != (files.n_support is not None and files.gamma is not None):
        msg = "n_support and gamma describe a kernel model, and only one"
        raise refuse(["files", "estimator", "n_support"], msg)
    intercept: Expect = ("f", (outputs,))
    if kernel:
        assert files.n_support is not None
        support, nnz = files.n_support, _length(headers, "sv_data")
        return {
            "sv_data": ("f", (nnz,)),
            "sv_indices": ("i", (nnz,)),
            "sv_indptr": ("i", (support + 1,)),
            "sv_shape": ("i", (2,)),
            "support": ("i", (support,)),
            "dual_coef": ("f", (outputs, support)),
            "intercept": intercept,
        }
    if "coef" in headers:
        return {"coef": ("f", (outputs, n_in)), "intercept": intercept}
    nnz = _length(headers, "coef_values", 0, outputs * n_in)
    return {
        "coef_rows": ("i", (nnz,)),
        "coef_cols": ("i", (nnz,)),
        "coef_values": ("f", (nnz,)),
        "coef_shape": ("i", (2,)),
        "intercept": intercept,
    }
