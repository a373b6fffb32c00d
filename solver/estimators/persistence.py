"""A fitted estimator's attributes, and their export as JSON and plain arrays without pickle
(``solver.load_model`` rebuilds the estimator from them)."""

from __future__ import annotations

from typing import Any, Self

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ..tracing import TracePoint

# Each estimator class's parameter names, read from its signature once (_get_param_names).
_PARAM_NAMES: dict[type, tuple[str, ...]] = {}


class FittedModel(BaseEstimator):
    """The attributes ``fit`` sets, for type checkers (in a class of their own: annotations in a
    ``declare_parameters`` class declare parameters), and their export."""

    coef_: np.ndarray
    intercept_: Any  # an array per output for classifiers, a float for regressors
    n_features_in_: int
    n_iter_: int
    trace_: list[TracePoint]
    stop_reason_: str
    solver_seconds_: float
    compile_seconds_: float
    checkpoint_seconds_: float
    # A warm start's weights, set only during a fit given coef_init (LinearModelBase._starting_from).
    _initial_weights: np.ndarray | None = None

    @classmethod
    def _get_param_names(cls) -> list[str]:
        # scikit-learn reads the names from __init__'s signature at every get_params (0.15 ms,
        # twice per fit); a class's signature does not change, so it is read once per class.
        names = _PARAM_NAMES.get(cls)
        if names is None:
            names = _PARAM_NAMES[cls] = tuple(super()._get_param_names())
        return list(names)

    def _as_task_outputs(self) -> None:
        """Reshape the per-output attributes as the task has them (LinearRegressorMixin)."""

    def _export_meta(self, nnz_weights: int) -> dict:
        return {
            "format": 1,
            "estimator": type(self).__name__,
            "params": {k: _jsonable(v) for k, v in self.get_params().items()},
            "n_features_in": int(self.n_features_in_),
            "n_iter": int(self.n_iter_),
            "classes": self.classes_.tolist() if hasattr(self, "classes_") else None,
            "nnz_weights": nnz_weights,
            # sigma="auto": the sigma its path chose, which the params do not say.
            **({"sigma": float(self.sigma_)} if hasattr(self, "sigma_") else {}),
        }

    def export_model(self) -> tuple[dict, dict[str, np.ndarray]]:
        """A JSON-serialisable description and plain arrays; ``solver.load_model`` reverses it.

        Sparse weights (an L1 model, or a few features seen among millions of columns) are
        exported as their non-zeros, so the export's size follows nnz rather than
        n_features x n_outputs (see ``_pack_coef``).
        """
        check_is_fitted(self)
        coef = np.atleast_2d(np.asarray(self.coef_))
        meta = self._export_meta(int(np.count_nonzero(coef)))
        arrays = {**_pack_coef(coef), "intercept": np.atleast_1d(self.intercept_)}
        return meta, arrays

    @classmethod
    def _from_export(cls, meta: dict, arrays: dict[str, np.ndarray]) -> Self:
        """The inverse of ``export_model`` for this class (see ``load_model``)."""
        est = cls._unfitted_from(meta)
        coef = _unpack_coef(arrays)
        if coef.shape[-1] != est.n_features_in_:
            raise ValueError("coef does not match n_features_in")
        est.coef_ = coef.reshape(-1, est.n_features_in_)
        est.intercept_ = np.asarray(arrays["intercept"], dtype=np.float64)
        est._as_task_outputs()
        return est

    @classmethod
    def _unfitted_from(cls, meta: dict) -> Self:
        """An estimator with the exported parameters, counts and classes, and an empty trace."""
        est = cls(**meta["params"])
        est.n_features_in_ = int(meta["n_features_in"])
        est.n_iter_ = int(meta["n_iter"])
        if meta.get("classes") is not None:
            est.classes_ = np.asarray(meta["classes"])
        if meta.get("sigma") is not None:
            est.sigma_ = float(meta["sigma"])
        est.trace_ = []
        est.stop_reason_ = "loaded"
        return est


# Weights are exported as their non-zeros when at most this fraction of them is non-zero: the
# (row, column, value) triplets then take at most half the dense array's bytes (20 bytes each
# against 8 per dense weight).
SPARSE_EXPORT_DENSITY = 0.2


def _pack_coef(coef: np.ndarray) -> dict[str, np.ndarray]:
    """``coef`` (n_outputs, n_features) as ``{"coef": dense}`` or, when sparse, its non-zeros:
    ``coef_rows``, ``coef_cols`` (int32 and int64), ``coef_values`` and ``coef_shape``."""
    rows, cols = np.nonzero(coef)
    if rows.size > SPARSE_EXPORT_DENSITY * coef.size:
        return {"coef": coef}
    return {
        "coef_rows": rows.astype(np.int32),
        "coef_cols": cols.astype(np.int64),
        "coef_values": coef[rows, cols].astype(np.float64),
        "coef_shape": np.asarray(coef.shape, dtype=np.int64),
    }


def _unpack_coef(arrays: dict[str, np.ndarray]) -> np.ndarray:
    """The dense weights of ``_pack_coef``'s arrays, whichever form they were stored in."""
    if "coef" in arrays:
        return np.asarray(arrays["coef"], dtype=np.float64)
    shape = tuple(int(v) for v in arrays["coef_shape"])
    rows, cols = np.asarray(arrays["coef_rows"]), np.asarray(arrays["coef_cols"])
    if (
        len(shape) != 2
        or min(shape) < 0
        or rows.shape != cols.shape
        or (
            rows.size
            and (rows.min() < 0 or rows.max() >= shape[0] or cols.min() < 0 or cols.max() >= shape[1])
        )
    ):
        raise ValueError("sparse coef arrays do not describe a weight matrix")
    coef = np.zeros(shape)
    coef[rows, cols] = np.asarray(arrays["coef_values"], dtype=np.float64)
    return coef


def _jsonable(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.random.RandomState):
        return None
    return value
