"""The rows' weights in the loss: ``fit``'s ``sample_weight`` times ``class_weight``, scikit-learn's
names and meanings.

Every estimator minimises ``penalty(w) + (1 / sum_i c_i) sum_i c_i l(<w, x_i>; y_i)``: the weights
are scaled to mean 1 (``fit_weights``) and every kernel reads row i's c_i in its loss term
(``solver.losses.row_weight``), so that

* an integer weight counts its row that many times: the objective is the one of the data with the
  row repeated, for every solver, and the deterministic solvers (gd, gcd, lbfgs) compute the same
  model;
* sigma keeps its meaning (the weight of the regulariser against a mean loss) whatever the scale
  of the weights.

``class_weight="balanced"`` weighs class k by n_samples / (n_classes * n_k) (scikit-learn's
``compute_class_weight``); a mapping names a weight per label, 1 for a label it does not name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.validation import check_array

from .losses import UNWEIGHTED
from .parameters import is_weight


def fit_weights(
    y: np.ndarray,
    sample_weight: Any = None,
    class_weight: Any = None,
    classes: np.ndarray | None = None,
) -> np.ndarray:
    """c_i = sample_weight_i * class_weight[y_i], scaled to mean 1: the ``_sample_weight`` of a fit
    (``UNWEIGHTED`` when both are None). ``classes`` are the classifier's labels (None for a
    regressor, which takes no ``class_weight``).

    Raises ValueError for a sample weight that is negative or not finite, a weight vector of
    another length than y, weights that sum to 0 and a class weight naming a label that y lacks.
    """
    if sample_weight is None and class_weight is None:
        return UNWEIGHTED
    weights = np.ones(y.shape[0]) if sample_weight is None else checked_sample_weight(sample_weight, y)
    if class_weight is not None:
        if classes is None:
            raise ValueError("class_weight is for classifiers; a regressor weighs rows by sample_weight")
        per_class = class_weights(class_weight, classes, y)
        weights = weights * per_class[np.searchsorted(classes, y)]
    total = float(np.sum(weights))
    if not total > 0.0:
        raise ValueError("the sample weights (times the class weights) sum to zero: no row would count")
    return np.ascontiguousarray(weights * (weights.shape[0] / total), dtype=np.float64)


def class_weights(class_weight: Any, classes: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The weight of each of ``classes`` (sorted) under ``class_weight``: "balanced" or a mapping
    from label to a non-negative weight. A mapping's labels may be the labels themselves or their
    text (as JSON gives them)."""
    if isinstance(class_weight, str):
        if class_weight != "balanced":
            raise ValueError(f'class_weight must be "balanced" or a mapping, got {class_weight!r}')
        return compute_class_weight("balanced", classes=classes, y=y)
    if not isinstance(class_weight, Mapping):
        raise ValueError(f'class_weight must be "balanced" or a mapping, got {class_weight!r}')
    by_text = {str(c): k for k, c in enumerate(classes.tolist())}
    weights = np.ones(classes.shape[0])
    for label, value in class_weight.items():
        k = by_text.get(str(label))
        if k is None:
            raise ValueError(
                f"class_weight names the label {label!r}, which the data does not have (its labels "
                f"are {classes[:10].tolist()})"
            )
        if not is_weight(value):
            raise ValueError(f"class_weight[{label!r}] must be a finite number >= 0, got {value!r}")
        weights[k] = float(value)
    return weights


def checked_sample_weight(sample_weight: Any, y: np.ndarray, name: str = "sample_weight") -> np.ndarray:
    """``sample_weight`` as float64, one finite weight >= 0 per label of ``y``; else ValueError
    naming it (``name``)."""
    weights = check_array(
        sample_weight, ensure_2d=False, dtype=np.float64, ensure_all_finite=False, input_name=name
    )
    if weights.shape != y.shape:
        raise ValueError(f"{name} has shape {weights.shape}, but y has {y.shape}")
    if not np.isfinite(weights).all():
        raise ValueError(f"{name} has values that are missing (NaN) or not finite")
    if (weights < 0.0).any():
        raise ValueError(f"{name} has negative values; a weight must be >= 0")
    return weights
