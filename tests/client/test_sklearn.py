"""RemoteClassifier / RemoteRegressor: scikit-learn code that trains and predicts on the service."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pgs_client import Client, RemoteClassifier, RemoteRegressor
from pgs_client.errors import ValidationError
from sklearn.base import clone
from sklearn.datasets import load_svmlight_file
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from tests.cluster.harness import ApiServer

# Against real services (conftest.py): out of make test-fast.
pytestmark = pytest.mark.system


def test_params_round_trip_through_get_set_params_and_clone(service: ApiServer):
    clf = RemoteClassifier(url=service.base, loss="logistic", sigma=1e-3)
    assert clf.get_params() == {
        "solver": "pgs",
        "url": service.base,
        "api_key": None,
        "time_budget_s": None,
        "keep_data": False,
        "loss": "logistic",
        "sigma": 1e-3,
    }
    twin = clone(clf)
    assert twin is not clf and twin.get_params() == clf.get_params()
    twin.set_params(sigma=0.1, p=1.5, solver="pgs")
    assert twin.get_params()["sigma"] == 0.1 and twin.get_params()["p"] == 1.5
    assert clf.get_params()["sigma"] == 1e-3  # the clone's params are its own


def test_pipeline_and_grid_search_train_on_the_service(service: ApiServer, heart: Path):
    X, y = load_svmlight_file(str(heart))
    X = X.toarray()
    pipe = make_pipeline(
        StandardScaler(), RemoteClassifier(url=service.base, loss="logistic", sigma=1e-3, random_state=0)
    )
    pipe.fit(X, y)
    clf = pipe[-1]
    assert list(clf.classes_) == [-1, 1] and clf.n_features_in_ == 13
    assert pipe.score(X, y) > 0.8
    proba = pipe.predict_proba(X[:5])
    assert proba.shape == (5, 2)
    np.testing.assert_array_equal(clf.classes_[proba.argmax(axis=1)], pipe.predict(X[:5]))
    with Client(service.base) as c:
        # The model lives on the service; the uploaded training set was removed after the fit.
        assert c.models.get(clf.model_id_).job_id == clf.job_id_
        assert clf.dataset_id_ not in [d.id for d in c.datasets.list()]

    search = GridSearchCV(
        make_pipeline(StandardScaler(), RemoteClassifier(url=service.base, loss="logistic")),
        {"remoteclassifier__sigma": [1e-3, 1.0]},
        cv=2,
    )
    search.fit(X, y)
    assert search.best_params_ in ({"remoteclassifier__sigma": 1e-3}, {"remoteclassifier__sigma": 1.0})
    assert len(search.cv_results_["mean_test_score"]) == 2
    assert search.score(X, y) > 0.7


def test_regressor_and_a_bad_parameter(service: ApiServer, data_dir: Path):
    X, y = load_svmlight_file(str(data_dir / "abalone.svm"))
    reg = RemoteRegressor(url=service.base, loss="squared", random_state=0).fit(X[:1000], y[:1000])
    assert not hasattr(reg, "classes_") and reg.predict(X[:3]).shape == (3,)
    assert reg.score(X[:1000], y[:1000]) > 0.3
    with pytest.raises(ValidationError, match="sigma"):
        RemoteRegressor(url=service.base, sigma=-1.0).fit(X[:100], y[:100])
