"""Python client of the PGS training and inference service.

from pgs_client import Client
c = Client("http://127.0.0.1:8000")
ds = c.datasets.upload("train.svm", name="news")
job = c.jobs.wait(c.jobs.create(ds, params={"sigma": 1e-5}, test_fraction=0.25))
pred = c.models.predict(job.model_id, X)
"""

from __future__ import annotations

from typing import Any

from pgs_client.client import Client
from pgs_client.convert import to_frame
from pgs_client.errors import (
    ApiError,
    AuthError,
    BatchPredictionFailed,
    Conflict,
    ConnectionFailed,
    JobCancelled,
    JobFailed,
    NotFound,
    PayloadTooLarge,
    PgsError,
    ServiceUnavailable,
    ValidationError,
)
from pgs_client.resources.models import Prediction
from pgs_client.schemas import DatasetRead as Dataset
from pgs_client.schemas import JobRead as Job
from pgs_client.schemas import ModelRead as Model
from pgs_client.schemas import SolverParamRead as SolverParam
from pgs_client.schemas import SolverRead as Solver
from pgs_client.schemas import SolverTaskRead as SolverTask
from pgs_client.schemas import StudyRead as Study
from pgs_client.schemas import TracePointRead as TracePoint
from pgs_client.transport import RetryPolicy
from pgs_client.version import VERSION as __version__


def __getattr__(name: str) -> Any:
    # The estimators import scikit-learn (an optional extra): only when asked for.
    if name in ("RemoteClassifier", "RemoteRegressor"):
        from pgs_client import sklearn

        return getattr(sklearn, name)
    raise AttributeError(f"module 'pgs_client' has no attribute {name!r}")


__all__ = [
    "ApiError",
    "AuthError",
    "BatchPredictionFailed",
    "Client",
    "Conflict",
    "ConnectionFailed",
    "Dataset",
    "Job",
    "JobCancelled",
    "JobFailed",
    "Model",
    "NotFound",
    "PayloadTooLarge",
    "PgsError",
    "Prediction",
    "RemoteClassifier",
    "RemoteRegressor",
    "RetryPolicy",
    "ServiceUnavailable",
    "Solver",
    "SolverParam",
    "SolverTask",
    "Study",
    "TracePoint",
    "ValidationError",
    "__version__",
    "to_frame",
]
