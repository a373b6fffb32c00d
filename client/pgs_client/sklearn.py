"""scikit-learn estimators that train and predict on the service (the ``sklearn`` extra).

``fit`` uploads ``(X, y)``, runs a job and waits for it; ``predict`` calls the model's
``/predict``. Solver parameters are keyword arguments (``RemoteClassifier(sigma=1e-4,
loss="logistic")``) and take part in ``get_params``/``set_params``/``clone`` like any other, so
``Pipeline`` and ``GridSearchCV`` work unchanged (GridSearchCV's ``n_jobs`` runs fits on the
service in parallel).
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from pgs_client.client import Client
from pgs_client.errors import Conflict


class _RemoteEstimator(BaseEstimator):
    _task: str  # the upload's task: "classification" or "regression"

    def __init__(
        self,
        solver: str = "pgs",
        *,
        url: str | None = None,
        api_key: str | None = None,
        time_budget_s: float | None = None,
        keep_data: bool = False,
        **params: Any,
    ):
        self.solver = solver
        self.url = url
        self.api_key = api_key
        self.time_budget_s = time_budget_s
        self.keep_data = keep_data
        # The solver's parameters: validated by the service when the job is created.
        self._params = params

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {**super().get_params(deep), **self._params}

    def set_params(self, **params: Any) -> _RemoteEstimator:
        own = set(self._get_param_names())
        for name, value in params.items():
            if name in own:
                setattr(self, name, value)
            else:
                self._params[name] = value
        return self

    def _client(self) -> Client:
        return Client(self.url, self.api_key)

    def fit(self, X: Any, y: Any) -> _RemoteEstimator:
        """Upload ``(X, y)``, train on the service, wait; the uploaded data set is deleted
        afterwards unless ``keep_data`` (the model does not need it)."""
        with self._client() as c:
            dataset = c.datasets.upload((X, y), name=type(self).__name__, task=self._task)
            try:
                job = c.jobs.wait(
                    c.jobs.create(
                        dataset, solver=self.solver, params=self._params, time_budget_s=self.time_budget_s
                    )
                )
            finally:
                if not self.keep_data:
                    # Conflict: the job still runs (the wait was interrupted); keep the data.
                    # force: the model came from it, and keeps its metadata (lineage).
                    with contextlib.suppress(Conflict):
                        c.datasets.delete(dataset, force=True)
            assert job.model_id is not None  # a succeeded job has its model
            model = c.models.get(job.model_id)
        self.dataset_id_, self.job_id_, self.model_id_ = dataset.id, job.id, model.id
        self.n_features_in_ = dataset.n_features
        self.metrics_ = job.metrics
        if model.classes is not None:
            self.classes_ = np.asarray(model.classes)
        return self

    def _prediction(self, X: Any) -> Any:
        check_is_fitted(self, "model_id_")
        with self._client() as c:
            return c.models.predict(self.model_id_, X)

    def predict(self, X: Any) -> np.ndarray:
        return np.asarray(self._prediction(X).predictions)


class RemoteClassifier(ClassifierMixin, _RemoteEstimator):
    """A classifier trained and served by the service (any solver, any classification loss)."""

    _task = "classification"

    def decision_function(self, X: Any) -> np.ndarray:
        return np.asarray(self._prediction(X).scores)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities, columns in ``classes_`` order (logistic loss only)."""
        probabilities = self._prediction(X).probabilities
        if probabilities is None:
            raise AttributeError("predict_proba needs a probabilistic loss (loss='logistic')")
        return np.asarray(probabilities)


class RemoteRegressor(RegressorMixin, _RemoteEstimator):
    """A regressor trained and served by the service."""

    _task = "regression"
