"""A linear model's weights read back in terms of the raw columns it was trained on.

The solver's weights apply to the preprocessed features (solver/preprocessing.py): the numeric
columns imputed and scaled, then one column per category of each text column. A data scientist
reads them per unit of the column as it is in the data, so each numeric weight is divided by its
column's scale, and the centring (standard scaling of dense rows) moves into the intercept:

    w . (x - center) / scale + b  =  (w / scale) . x  +  (b - sum(w * center / scale))

A category's weight applies to its 0/1 indicator as it is. A missing numeric cell is imputed with
the training mean before the weights apply, as in every prediction.

Only the non-zero weights are looked at: a model of 2^24 sparse features is read through its
stored non-zeros, never as a dense array of its width.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

# How many of the largest positive and of the most negative weights, per class, a model's and its
# job's answer carry (GET /v1/models/{id}/coefficients pages through all of them).
TOP_K = 20
PREFIX = "preprocessing."


@dataclass(frozen=True)
class FeatureSpace:
    """What names a model's features: its raw columns, their preprocessing and its classes."""

    n_features: int
    index_base: int
    feature_names: list[str] | None
    preprocessing: dict[str, Any] | None
    classes: list[Any] | None

    @classmethod
    def of(cls, model: Any) -> FeatureSpace:
        """The naming of a model row's (db.tables.Model) or an import's (ModelFacts) features."""
        return cls(
            model.n_features, model.index_base, model.feature_names, model.preprocessing, model.classes
        )


@dataclass(frozen=True)
class OutputWeights:
    """One output's non-zero weights (a class's, or the one of a binary classifier or a
    regressor), ordered by the model's own weight, largest first."""

    label: Any
    intercept: float
    features: np.ndarray  # indices into the preprocessed features
    model_weights: np.ndarray  # the solver's weights on the preprocessed features
    weights: np.ndarray  # per unit of the raw column
    columns: np.ndarray  # the raw column each reads (0-based)
    categories: list[str | None]  # the category of a one-hot feature, None for a numeric one


def weight_triplets(arrays: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray, int] | None:
    """(output rows, feature columns, values, outputs) of the stored weights' non-zeros, in either
    stored form (solver/estimators/persistence.py); None for a model without weights per feature
    (a kernel model keeps support vectors)."""
    if "coef" in arrays:
        coef = np.atleast_2d(np.asarray(arrays["coef"], dtype=np.float64))
        rows, cols = np.nonzero(coef)
        return rows, cols.astype(np.int64), coef[rows, cols], coef.shape[0]
    if "coef_values" in arrays:
        shape = [int(v) for v in arrays["coef_shape"]]
        values = np.asarray(arrays["coef_values"], dtype=np.float64)
        keep = values != 0
        rows = np.asarray(arrays["coef_rows"])[keep]
        cols = np.asarray(arrays["coef_cols"], dtype=np.int64)[keep]
        return rows, cols, values[keep], shape[0]
    return None


def raw_weights(arrays: dict[str, np.ndarray], space: FeatureSpace) -> list[OutputWeights] | None:
    """Every output's weights per unit of the raw columns, from a model's stored arrays (those of
    ``estimator.export_model()`` with the preprocessing's prefixed ``preprocessing.``); None for a
    model without weights per feature."""
    triplets = weight_triplets(arrays)
    if triplets is None:
        return None
    rows, cols, values, n_outputs = triplets
    intercepts = np.broadcast_to(np.atleast_1d(np.asarray(arrays["intercept"], dtype=np.float64)), n_outputs)
    scaling = _Scaling(space, {k[len(PREFIX) :]: v for k, v in arrays.items() if k.startswith(PREFIX)})
    labels = _output_labels(space.classes, n_outputs)
    out = []
    for k in range(n_outputs):
        mine = rows == k
        features, model_w = cols[mine], values[mine]
        order = np.lexsort((features, -model_w))
        features, model_w = features[order], model_w[order]
        columns, categories, scale, center = scaling.of(features)
        intercept = float(intercepts[k] - np.sum(model_w * center / scale))
        raw = model_w / scale
        out.append(OutputWeights(labels[k], intercept, features, model_w, raw, columns, categories))
    return out


def _output_labels(classes: list[Any] | None, n_outputs: int) -> list[Any]:
    """The class each output's weights score: a binary classifier's one output scores its
    second class (positive scores predict it), a regressor's none."""
    if classes is None:
        return [None] * n_outputs
    return list(classes[-n_outputs:])


class _Scaling:
    """Which raw column (and category) each preprocessed feature reads, and its scale and centre."""

    def __init__(self, space: FeatureSpace, arrays: dict[str, np.ndarray]) -> None:
        prep = space.preprocessing
        self.prep, self.arrays = prep, arrays
        # The columns the numeric part skips (text and ignored), not the list of those it reads:
        # that would be 2^24 indices for a wide sparse data set.
        skip = (
            []
            if prep is None
            else sorted({int(j) for j in prep["categorical"]} | {int(j) for j in prep["ignore"]})
        )
        self.skip = np.asarray(skip, dtype=np.int64)
        self.width = space.n_features - len(skip)
        if prep is None:
            return
        self.category_lists = [np.asarray(arrays[f"categories.{i}"]) for i in range(len(prep["categorical"]))]
        self.category_starts = self.width + np.concatenate(
            [[0], np.cumsum([len(c) for c in self.category_lists])]
        ).astype(np.int64)

    def numeric_column(self, at: np.ndarray) -> np.ndarray:
        """The raw column of the ``at``-th numeric features: the k-th column not skipped is k plus
        the skipped columns before it, the count of j with skip[j] - j <= k."""
        return at + np.searchsorted(self.skip - np.arange(len(self.skip)), at, side="right")

    def of(self, features: np.ndarray) -> tuple[np.ndarray, list[str | None], np.ndarray, np.ndarray]:
        """(raw columns, categories, scales, centres) of preprocessed ``features``."""
        numeric = features < self.width
        columns = np.zeros(len(features), dtype=np.int64)
        scale, center = np.ones(len(features)), np.zeros(len(features))
        at = features[numeric]
        columns[numeric] = self.numeric_column(at)
        categories: list[str | None] = [None] * len(features)
        if self.prep is None:
            return columns, categories, scale, center
        scale[numeric], center[numeric] = self._numeric_scaling(at)
        sorted_text = sorted(int(j) for j in self.prep["categorical"])
        for i in np.flatnonzero(~numeric):
            part = int(np.searchsorted(self.category_starts, features[i], side="right")) - 1
            columns[i] = sorted_text[part]
            categories[i] = str(self.category_lists[part][features[i] - self.category_starts[part]])
        return columns, categories, scale, center

    def _numeric_scaling(self, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        assert self.prep is not None
        kind, arrays = self.prep["scaling"], self.arrays
        scale, center = np.ones(len(at)), np.zeros(len(at))
        if kind == "standard":
            scale = np.asarray(arrays["scale.scale_"], dtype=np.float64)[at]
            if not self.prep["sparse"]:  # sparse rows are scaled without centring
                center = np.asarray(arrays["scale.mean_"], dtype=np.float64)[at]
        elif kind == "maxabs":
            listed = np.asarray(arrays["scale.max_abs_.indices"], dtype=np.int64)
            values = np.asarray(arrays["scale.max_abs_.values"], dtype=np.float64)
            order = np.argsort(listed)
            listed, values = listed[order], values[order]
            pos = np.searchsorted(listed, at)
            found = pos < len(listed)
            found[found] = listed[pos[found]] == at[found]
            scale[found] = values[pos[found]]
            # MaxAbsScaler leaves a column of (nearly) zeros unscaled.
            scale[scale < 10 * np.finfo(np.float64).eps] = 1.0
        return scale, center


def feature_name(space: FeatureSpace, column: int, category: str | None) -> str:
    """A raw column's name (its header, else its index as the data wrote it: an svmlight file's
    1-based index), ``name=value`` for a category of a text column."""
    names = space.feature_names
    base = names[column] if names is not None and column < len(names) else str(column + space.index_base)
    return base if category is None else f"{base}={category}"


def entries(weights: OutputWeights, space: FeatureSpace, picks: np.ndarray) -> list[dict[str, Any]]:
    """The JSON rows (schemas.Coefficient) of the weights at positions ``picks``."""
    return [
        {
            "name": feature_name(space, int(weights.columns[i]), weights.categories[i]),
            "column": int(weights.columns[i]),
            "category": weights.categories[i],
            "weight": float(weights.weights[i]),
            "model_weight": float(weights.model_weights[i]),
        }
        for i in picks
    ]


def summary(outputs: list[OutputWeights], space: FeatureSpace, k: int = TOP_K) -> dict[str, Any]:
    """What a model's answer carries (schemas.CoefficientSummary): per output, the ``k`` largest
    positive and the ``k`` most negative weights (by the model's own weight, the one comparable
    across features: raw units differ from column to column), the intercept and the count."""
    return {
        "top_k": k,
        "outputs": [
            {
                "class": w.label,
                "intercept": w.intercept,
                "nonzero": len(w.features),
                "positive": entries(w, space, np.flatnonzero(w.model_weights > 0)[:k]),
                "negative": entries(w, space, np.flatnonzero(w.model_weights < 0)[::-1][:k]),
            }
            for w in outputs
        ],
    }


def by_magnitude(weights: OutputWeights) -> np.ndarray:
    """Positions of the weights, the largest |model weight| first (ties: the lower feature)."""
    return np.lexsort((weights.features, -np.abs(weights.model_weights)))


def _matches(label: Any, asked: str) -> bool:
    """Whether the query's ``class`` names ``label`` (a number as written or as its value)."""
    if str(label) == asked:
        return True
    if isinstance(label, int | float) and not isinstance(label, bool):
        try:
            return float(asked) == float(label)
        except ValueError:
            return False
    return False


def pick_output(outputs: list[OutputWeights], asked: str | None) -> OutputWeights:
    """The output the query's ``class`` names; the only one when it names none. ValueError with
    the rule broken (a multiclass model needs a class, which must be one of its classes)."""
    if asked is None:
        if len(outputs) > 1:
            listed = ", ".join(str(w.label) for w in outputs)
            raise ValueError(f"this model has weights per class: pass class, one of {listed}")
        return outputs[0]
    for w in outputs:
        if w.label is not None and _matches(w.label, asked):
            return w
    listed = ", ".join(str(w.label) for w in outputs if w.label is not None)
    if not listed:
        raise ValueError("a regressor has one set of weights: leave class out")
    raise ValueError(f"class {asked!r} has no weights of its own; one of {listed}")


def page(weights: OutputWeights, space: FeatureSpace, offset: int, limit: int) -> dict[str, Any]:
    """One page (schemas.CoefficientPage) of an output's weights, by |model weight|."""
    picks = by_magnitude(weights)[offset : offset + limit]
    return {
        "class": weights.label,
        "intercept": weights.intercept,
        "items": entries(weights, space, picks),
        "total": len(weights.features),
        "offset": offset,
        "limit": limit,
    }
