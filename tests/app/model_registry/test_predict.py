"""POST /v1/models/{id}/predict in its three input forms and the model cache (bad inputs:
tests/security/test_predict_attacks.py)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sklearn.datasets import load_svmlight_file

from app.main import create_app
from app.services.model_registry.artifacts import load_model_files
from solver import load_model
from tests.helpers import assert_problem, create_job, make_settings, upload, wait_for


def _train(c: TestClient, dataset_id: int, **params: Any) -> dict[str, Any]:
    # Raw features: these tests hold the answers to the stored estimator's own methods
    # (preprocessed models: tests/app/jobs/test_preprocessing.py and test_export.py).
    r = create_job(c, dataset_id=dataset_id, params={"random_state": 0, **params}, preprocessing=None)
    assert r.status_code == 202, r.text
    job = wait_for(c, r.json()["id"])
    assert job["status"] == "succeeded", job
    return c.get(f"/v1/models/{job['model_id']}").json()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Iterator[dict[str, Any]]:
    """One app with a logistic and a hinge model on heart_scale and a regressor on abalone.

    Module-scoped: training goes through the real pool, which is worth starting only once here.
    """
    settings = make_settings(tmp_path_factory.mktemp("predict"), max_predict_bytes=200_000)
    with TestClient(create_app(settings)) as c:
        heart = upload(c, data_dir / "heart_scale.svm", "heart.svm").json()["id"]
        abalone = upload(c, data_dir / "abalone.svm", "abalone.svm").json()["id"]
        rng = np.random.default_rng(0)
        centers = rng.normal(size=(3, 4)) * 3
        rows = [
            f"{','.join(f'{v:.4f}' for v in centers[k] + rng.normal(size=4))},{'abc'[k]}"
            for k in rng.integers(0, 3, size=300)
        ]
        three = upload(c, "\n".join(rows).encode(), "three.csv").json()["id"]
        yield {
            "client": c,
            "settings": settings,
            "logistic": _train(c, heart, loss="logistic", sigma=1e-3, n_iter=3000),
            "hinge": _train(c, heart, loss="hinge", sigma=1e-3, n_iter=3000),
            "regressor": _train(c, abalone, loss="squared", sigma=1e-4, n_iter=5000),
            "multiclass": _train(c, three, loss="logistic", sigma=1e-3, n_iter=3000),
        }


@pytest.fixture(scope="module")
def heart_rows(data_dir: Path) -> tuple[Any, bytes]:
    X, _ = load_svmlight_file(str(data_dir / "heart_scale.svm"))
    lines = (data_dir / "heart_scale.svm").read_bytes().splitlines()[:5]
    return X[:5], b"\n".join(lines)


def _estimator(served: dict[str, Any], model: dict[str, Any]) -> Any:
    from app.db.tables import Model

    with served["client"].app.state.session_factory() as s:
        stem = s.get(Model, model["id"]).file_stem
    meta, arrays = load_model_files(served["settings"].data_dir, stem)
    return load_model(meta["estimator"], arrays)


def _predict(c: TestClient, model_id: int, **kwargs: Any) -> Any:
    return c.post(f"/v1/models/{model_id}/predict", **kwargs)


def test_three_input_forms_agree_with_the_stored_model(served: dict[str, Any], heart_rows):
    c, model = served["client"], served["logistic"]
    X, text = heart_rows
    dense = {"instances": X.toarray().tolist()}
    sparse = {
        "instances": [
            {"indices": X[i].indices.tolist(), "values": X[i].data.tolist()} for i in range(X.shape[0])
        ]
    }
    mixed = {"instances": [dense["instances"][0], *sparse["instances"][1:]]}
    outs = [
        _predict(c, model["id"], json=dense),
        _predict(c, model["id"], json=sparse),
        _predict(c, model["id"], json=mixed),
        _predict(c, model["id"], content=text, headers={"content-type": "text/plain"}),
        # Lines without the label in front are accepted too.
        _predict(
            c,
            model["id"],
            content=b"\n".join(ln.split(b" ", 1)[1] for ln in text.split(b"\n")),
            headers={"content-type": "text/plain; charset=utf-8"},
        ),
    ]
    for r in outs:
        assert r.status_code == 200, r.text
    bodies = [r.json() for r in outs]
    est = _estimator(served, model)
    expected_scores = est.decision_function(X)
    labels = np.asarray(model["classes"])[est.predict(X).astype(int)]
    for b in bodies:
        np.testing.assert_allclose(b["scores"], expected_scores, rtol=1e-12)
        assert b["predictions"] == labels.tolist()
        np.testing.assert_allclose(b["probabilities"], est.predict_proba(X), rtol=1e-12)
        assert set(b["predictions"]) <= {-1, 1}


def test_hinge_has_no_probabilities_and_regression_gives_numbers(served: dict[str, Any], heart_rows):
    c = served["client"]
    X, _ = heart_rows
    body = _predict(c, served["hinge"]["id"], json={"instances": X.toarray().tolist()}).json()
    assert "probabilities" not in body and len(body["predictions"]) == 5
    reg = served["regressor"]
    row = {"instances": [[0.5] * reg["n_features"]]}
    body = _predict(c, reg["id"], json=row).json()
    assert body["predictions"] == body["scores"] and isinstance(body["predictions"][0], float)
    assert "probabilities" not in body


def test_cache_serves_repeated_predictions(served: dict[str, Any]):
    c, model = served["client"], served["logistic"]
    cache = c.app.state.model_cache  # type: ignore[attr-defined]
    row = {"instances": [[0.0] * 13]}
    _predict(c, model["id"], json=row)
    hits = cache.hits
    for _ in range(3):
        assert _predict(c, model["id"], json=row).status_code == 200
    assert cache.hits == hits + 3


def test_delete_model_evicts_it(served: dict[str, Any], data_dir: Path):
    c = served["client"]
    heart = c.get("/v1/datasets").json()["items"][-1]["id"]
    model = _train(c, heart, loss="squared", sigma=1e-3, n_iter=500)
    row = {"instances": [[0.0] * 13]}
    assert _predict(c, model["id"], json=row).status_code == 200
    assert c.delete(f"/v1/models/{model['id']}").status_code == 204
    assert_problem(_predict(c, model["id"], json=row), 404)
    assert_problem(c.get(f"/v1/models/{model['id']}"), 404)
    job = c.get(f"/v1/jobs/{model['job_id']}").json()
    assert job["model_id"] is None
    listed = [m["id"] for m in c.get("/v1/models").json()["items"]]
    assert model["id"] not in listed and served["logistic"]["id"] in listed


def test_multiclass_predictions_match_the_estimator(served: dict[str, Any]):
    c, model = served["client"], served["multiclass"]
    assert model["classes"] == ["a", "b", "c"]
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 4)) * 3
    body = _predict(c, model["id"], json={"instances": X.tolist()}).json()
    est = _estimator(served, model)
    np.testing.assert_allclose(body["scores"], est.decision_function(X), rtol=1e-12)
    np.testing.assert_allclose(body["probabilities"], est.predict_proba(X), rtol=1e-12)
    assert body["predictions"] == np.asarray(["a", "b", "c"])[est.predict(X)].tolist()
    assert len(set(body["predictions"])) > 1


def test_estimators_without_coef_fall_back_to_their_own_methods(served: dict[str, Any], heart_rows):
    from app.services.model_registry.artifacts import LoadedModel
    from app.services.model_registry.predict import predict

    est = _estimator(served, served["logistic"])

    class Opaque:
        """An estimator that only offers the scikit-learn methods (e.g. a kernel model)."""

        def decision_function(self, X):
            return est.decision_function(X)

        def predict(self, X):
            return est.predict(X)

        def predict_proba(self, X):
            return est.predict_proba(X)

    X, _ = heart_rows
    classes = np.asarray([-1, 1])
    fast = predict(LoadedModel(1, "default", est, "binary", 13, 1, classes), X)
    slow = predict(LoadedModel(1, "default", Opaque(), "binary", 13, 1, classes), X)
    assert fast.keys() == slow.keys() and fast["predictions"] == slow["predictions"]
    np.testing.assert_allclose(fast["scores"], slow["scores"], rtol=1e-12)
    np.testing.assert_allclose(fast["probabilities"], slow["probabilities"], rtol=1e-12)


def _copy_model(served: dict[str, Any], model_id: int) -> int:
    """A new model row with its own copy of the files of ``model_id`` (a cold cache entry)."""
    from app.db.engine import transaction
    from app.db.tables import Model
    from app.services.model_registry.artifacts import save_model_files

    store = served["settings"].store
    with transaction(served["client"].app.state.session_factory) as s:
        row = s.get(Model, model_id)
        meta, arrays = load_model_files(store, row.file_stem)
        stem, _ = save_model_files(store, meta, arrays)
        values = {
            c.key: getattr(row, c.key)
            for c in Model.__table__.columns
            if c.key not in ("id", "file_stem", "job_id")
        }
        copy = Model(**values, file_stem=stem)
        s.add(copy)
        s.flush()
        return copy.id


def test_a_model_deleted_during_its_first_predictions_never_predicts_again(served: dict[str, Any]):
    # DELETE racing predictions that load the model from disk into the cache: whatever the
    # racing requests answer, once the DELETE has answered the model is gone for good.
    c, row = served["client"], {"instances": [[0.0] * 13]}
    for _ in range(60):
        model_id = _copy_model(served, served["logistic"]["id"])
        start = threading.Barrier(5)

        def predict(mid: int = model_id, start: threading.Barrier = start) -> int:
            start.wait()
            return _predict(c, mid, json=row).status_code

        def delete(mid: int = model_id, start: threading.Barrier = start) -> int:
            start.wait()
            return c.delete(f"/v1/models/{mid}").status_code

        with ThreadPoolExecutor(5) as pool:
            racing = [pool.submit(predict) for _ in range(4)]
            deleted = pool.submit(delete)
        assert deleted.result() == 204
        assert {f.result() for f in racing} <= {200, 404}
        assert_problem(_predict(c, model_id, json=row), 404)
