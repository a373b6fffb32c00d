"""What a finished fit learned, added to its metrics: the named coefficients and the warnings.

Both are stored with the job's and the model's metrics (the answers show ``coefficients`` and
``warnings`` from there): computed once, from the model as exported, at the end of the fit.
"""

from __future__ import annotations

from typing import Any

from app.services.jobs.fit_warnings import no_better_than_baseline, zero_weights
from app.services.model_registry.coefficients import FeatureSpace, raw_weights, summary, weight_triplets


def feature_space(service: dict[str, Any]) -> FeatureSpace:
    """The naming of a model's features from its service metadata (steps.package_model)."""
    return FeatureSpace(
        n_features=int(service["n_features"]),
        index_base=int(service["index_base"]),
        feature_names=service.get("feature_names"),
        preprocessing=service.get("preprocessing"),
        classes=service.get("classes"),
    )


def learned_metrics(
    meta: dict[str, Any],
    arrays: dict[str, Any],
    service: dict[str, Any],
    metrics: dict[str, Any],
) -> dict[str, Any]:
    """``coefficients`` (the top weights per class, named; absent for a kernel model) and
    ``warnings`` (a list, empty for a sound model) of the exported model ``meta``/``arrays``,
    whose other ``metrics`` (``test``, its metrics on the evaluation rows) are computed."""
    out: dict[str, Any] = {}
    warnings = []
    triplets = weight_triplets(arrays)
    if triplets is not None:
        space = feature_space(service)
        outputs = raw_weights(arrays, space)
        assert outputs is not None
        out["coefficients"] = summary(outputs, space)
        sigma = meta.get("sigma", meta.get("params", {}).get("sigma"))
        found = zero_weights(triplets[2], float(sigma) if isinstance(sigma, int | float) else None)
        if found is not None:
            warnings.append(found)
    found = no_better_than_baseline(metrics.get("test"))
    if found is not None:
        warnings.append(found)
    out["warnings"] = warnings
    return out
