"""A model import from body to checked model: read within the limits (import_read.py), its document
checked against its array headers (import_checks.py), then its arrays built, their numbers
checked, and the model rebuilt and run on two rows. Whatever would fail a prediction later fails
the import now (a 422), and what is stored is what was checked.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from app.services.model_registry.artifacts import LoadedModel, stored_preprocessing
from app.services.model_registry.coefficients import FeatureSpace, raw_weights, summary
from app.services.model_registry.import_checks import Plan, check_document
from app.services.model_registry.import_read import ImportLimits, read_json, read_npz, refuse
from app.services.model_registry.portable import ModelFacts
from app.services.model_registry.predict import predict

READERS = {"application/json": read_json, "application/octet-stream": read_npz}
# Scaling statistics no fit produces: a scale of 0 or less divides by zero or flips the features,
# and a variance or a largest absolute value is never negative.
SIGNS = {
    "preprocessing.scale.scale_": (operator.gt, "above 0"),
    "preprocessing.scale.var_": (operator.ge, "0 or more"),
    "preprocessing.scale.max_abs_.values": (operator.ge, "0 or more"),
}
# Scores stay finite for inputs within the model's own scaling. After its preprocessing, a value
# within the training data's range lies within +-1 (max-abs scaling) or within sqrt(m - 1)
# standard deviations of the mean (standard scaling of m rows, by Samuelson's inequality); a
# model without scaling sees raw values. Every input whose features (as the estimator sees them)
# lie within +-FEATURE_HEADROOM scores at most FEATURE_HEADROOM * ||w||_1 + |b| in magnitude (for
# a kernel model, w its dual coefficients: exact for kernel values within the headroom), so
# that bound must be finite. 2**20 covers standardized data sets of up to 2**40 rows and raw
# values up to about a million, and refuses only weights near the float64 maximum (||w||_1
# beyond 1e302), which no fit produces.
FEATURE_HEADROOM = 2.0**20
REBUILD_ERRORS = (ValueError, KeyError, TypeError, IndexError, AttributeError, OverflowError)


@dataclass(frozen=True)
class ImportedModel:
    facts: ModelFacts  # the database row's
    files: dict[str, Any]  # the model's metadata (artifacts.save_model_files)
    arrays: dict[str, np.ndarray]


def import_file(body: bytes, media_type: str, limits: ImportLimits) -> ImportedModel:
    """The checked model of an npz (application/octet-stream) or JSON (application/json) export;
    413 or 422 naming the field and the rule it breaks."""
    source = READERS[media_type](body, limits)
    plan = check_document(source.doc, source.headers, limits)
    arrays = source.load()
    _check_numbers(plan, arrays)
    model = _rebuilt(plan, arrays)
    _check_magnitude(model, _weights_name(plan, arrays))
    _check_scores(model)
    facts = plan.doc.model
    return ImportedModel(facts.model_copy(update={"metrics": _learned(plan, arrays)}), plan.files, arrays)


def _learned(plan: Plan, arrays: dict[str, np.ndarray]) -> dict[str, Any] | None:
    """The export's metrics with the model's named coefficients and weight counts computed from
    its own arrays, as a job's are at the end of its fit (none for a kernel model): an export
    made before the counts were recorded, or edited by hand, shows its true density."""
    facts = plan.doc.model
    space = FeatureSpace.of(facts)
    outputs = raw_weights(arrays, space)
    metrics = {k: v for k, v in (facts.metrics or {}).items() if k != "coefficients"}
    if outputs is not None:
        metrics["coefficients"] = summary(outputs, space)
    if not plan.kernel:
        weights = arrays[_weights_name(plan, arrays)]
        metrics["n_weights"] = plan.outputs * plan.n_in
        metrics["nnz_weights"] = int(np.count_nonzero(weights))
    return metrics if metrics or facts.metrics is not None else None


def _weights_name(plan: Plan, arrays: dict[str, np.ndarray]) -> str:
    if plan.kernel:
        return "dual_coef"
    return "coef" if "coef" in arrays else "coef_values"


def _check_numbers(plan: Plan, arrays: dict[str, np.ndarray]) -> None:
    """Every float finite, the stored shape of sparse weights or support vectors the one the
    document implies, and the scaling statistics of the signs a fit gives them."""
    for name, a in arrays.items():
        if a.dtype.kind == "f" and not np.isfinite(a).all():
            raise refuse(["arrays", name], "a value is not finite (NaN or infinity)")
    stored_shape = {"sv_shape": [plan.doc.files.estimator.n_support, plan.n_in]}
    stored_shape["coef_shape"] = [plan.outputs, plan.n_in]
    for name, want in stored_shape.items():
        if name in arrays and arrays[name].tolist() != want:
            raise refuse(["arrays", name], f"is {arrays[name].tolist()}, not {want}")
    for name, (holds, rule) in SIGNS.items():
        if name in arrays and not holds(arrays[name], 0).all():
            raise refuse(["arrays", name], f"every value is {rule}")


def _rebuilt(plan: Plan, arrays: dict[str, np.ndarray]) -> LoadedModel:
    from solver import load_model  # Numba: not at this module's import

    facts = plan.doc.model
    try:
        return LoadedModel(
            model_id=0,
            owner="",  # not stored yet: only checked here
            estimator=load_model(plan.files["estimator"], arrays),
            task=facts.task,
            n_features=facts.n_features,
            index_base=facts.index_base,
            classes=None if facts.classes is None else np.asarray(facts.classes),
            **stored_preprocessing(plan.files, arrays),
        )
    except REBUILD_ERRORS as exc:
        raise refuse(["arrays"], f"the model cannot be rebuilt from them: {exc}") from exc


def _check_magnitude(model: LoadedModel, weights_name: str) -> None:
    est = model.estimator
    # A linear kernel's model is a weight vector too (coef_), which predictions use.
    weights = np.atleast_2d(est.coef_ if hasattr(est, "coef_") else est.dual_coef_)
    norms = np.array([np.abs(row).sum() for row in weights])  # one row of temporaries at a time
    with np.errstate(over="ignore"):
        bound = FEATURE_HEADROOM * norms + np.abs(np.atleast_1d(est.intercept_))
    if not np.isfinite(bound).all():
        msg = "weights this large give infinite scores to inputs within 2**20 of the model's scaling"
        raise refuse(["arrays", weights_name], msg)


def _check_rows(model: LoadedModel) -> Any:
    """A row of zeros and a row of ones, in the input the model takes (a text column gets 'x', a
    category it has not seen, which encodes as zeros)."""
    n, prep = model.n_features, model.preprocessing
    if prep is not None and prep["sparse"]:
        return sp.csr_matrix((np.ones(n), np.arange(n), [0, 0, n]), shape=(2, n))
    if prep is None or not prep["categorical"]:
        return np.vstack([np.zeros(n), np.ones(n)])
    rows = np.zeros((2, n), dtype=object)
    rows[1] = 1.0
    rows[:, prep["categorical"]] = "x"
    return rows


def _check_scores(model: LoadedModel) -> None:
    try:
        out = predict(model, _check_rows(model))
    except REBUILD_ERRORS as exc:
        raise refuse(["arrays"], f"the model does not predict: {exc}") from exc
    for key in ("scores", "probabilities"):
        if key in out and not np.isfinite(np.asarray(out[key], dtype=np.float64)).all():
            msg = f"the model's {key} of a row of zeros and a row of ones are not finite"
            raise refuse(["arrays"], msg)
