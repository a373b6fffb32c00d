"""GET /v1/models/{id}/export (npz, json, onnx) and POST /v1/models (import) on real data: the ONNX
graph run by onnxruntime agrees with /predict to 1e-5, an export imported into another
installation predicts the same, and a malformed file is a 422 (a 413 when too large), never a 500."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sklearn.datasets import load_svmlight_file

from app.main import create_app
from tests.helpers import assert_problem, create_job, make_settings, upload, wait_for

ort = pytest.importorskip("onnxruntime")

LOGISTIC = {"solver": "lbfgs", "params": {"loss": "logistic", "sigma": 1e-4, "n_iter": 200}}


def _model(c: TestClient, **body: Any) -> int:
    r = create_job(c, **body)
    assert r.status_code == 202, r.text
    job = wait_for(c, r.json()["id"])
    assert job["status"] == "succeeded", job
    return int(job["model_id"])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Iterator[dict[str, Any]]:
    settings = make_settings(tmp_path_factory.mktemp("export"))
    with TestClient(create_app(settings)) as c:
        magic = upload(c, data_dir / "magic04.csv", "magic04.csv").json()["id"]
        abalone = upload(c, data_dir / "abalone.svm", "abalone.svm", task="classification")
        ages = upload(c, data_dir / "abalone.svm", "ages.svm").json()["id"]  # regression
        yield {
            "regressor": _model(
                c, dataset_id=ages, solver="lbfgs", params={"loss": "squared", "sigma": 1e-4, "n_iter": 200}
            ),
            "client": c,
            # A decision threshold of its own: the ONNX graph and an import must predict at it.
            "magic": _model(c, dataset_id=magic, test_fraction=0.25, threshold={"value": 0.3}, **LOGISTIC),
            "abalone": _model(c, dataset_id=abalone.json()["id"], **LOGISTIC),
            "hinge": _model(
                c, dataset_id=magic, solver="pgs", params={"loss": "hinge", "n_iter": 3000, "random_state": 0}
            ),
            # The dual solver's model is a linear model like the others: the same graph.
            "sdca": _model(
                c, dataset_id=magic, solver="sdca", params={"loss": "logistic", "random_state": 0}
            ),
        }


def _onnx(c: TestClient, model_id: int) -> Any:
    r = c.get(f"/v1/models/{model_id}/export", params={"format": "onnx"})
    assert r.status_code == 200, r.text
    return ort.InferenceSession(r.content, providers=["CPUExecutionProvider"])


def _magic_rows(data_dir: Path, n: int = 500) -> np.ndarray:
    raw = np.loadtxt(data_dir / "magic04.csv", delimiter=",", dtype=str)
    rows = np.random.default_rng(1).permutation(len(raw))[:n]
    return raw[rows, :-1].astype(np.float64)


def test_onnx_agrees_with_predict_on_raw_magic04(served: dict[str, Any], data_dir: Path):
    c, model_id = served["client"], served["magic"]
    X = _magic_rows(data_dir)
    want = c.post(f"/v1/models/{model_id}/predict", json={"instances": X.tolist()}).json()
    session = _onnx(c, model_id)
    scores, label, proba = session.run(["scores", "label", "probabilities"], {"X": X.astype(np.float32)})
    np.testing.assert_allclose(scores[:, 0], want["scores"], atol=1e-5)
    np.testing.assert_allclose(proba, want["probabilities"], atol=1e-5)
    assert label.tolist() == want["predictions"]


def test_onnx_one_vs_rest_agrees_with_predict_on_sparse_data(served: dict[str, Any], data_dir: Path):
    c, model_id = served["client"], served["abalone"]
    X, _ = load_svmlight_file(str(data_dir / "abalone.svm"))
    text = b"\n".join((data_dir / "abalone.svm").read_bytes().splitlines()[:400])
    want = c.post(
        f"/v1/models/{model_id}/predict", content=text, headers={"content-type": "text/plain"}
    ).json()
    scores, label, proba = _onnx(c, model_id).run(
        ["scores", "label", "probabilities"], {"X": X[:400].toarray().astype(np.float32)}
    )
    np.testing.assert_allclose(scores, want["scores"], atol=1e-5)
    np.testing.assert_allclose(proba, want["probabilities"], atol=1e-5)
    assert label.tolist() == want["predictions"]


def test_onnx_regressor_agrees_with_predict(served: dict[str, Any], data_dir: Path):
    c, model_id = served["client"], served["regressor"]
    X, _ = load_svmlight_file(str(data_dir / "abalone.svm"))
    dense = X[:300].toarray()
    want = c.post(f"/v1/models/{model_id}/predict", json={"instances": dense.tolist()}).json()
    scores, label = _onnx(c, model_id).run(["scores", "label"], {"X": dense.astype(np.float32)})
    np.testing.assert_allclose(label, want["predictions"], atol=1e-5)
    np.testing.assert_allclose(scores[:, 0], want["scores"], atol=1e-5)


@pytest.mark.parametrize("fmt", ["npz", "json"])
def test_an_export_imported_elsewhere_predicts_the_same(
    served: dict[str, Any], data_dir: Path, tmp_path: Path, fmt: str
):
    c, model_id = served["client"], served["magic"]
    exported = c.get(f"/v1/models/{model_id}/export", params={"format": fmt})
    assert exported.status_code == 200, exported.text
    X = _magic_rows(data_dir, 50).tolist()
    want = c.post(f"/v1/models/{model_id}/predict", json={"instances": X}).json()
    ctype = "application/json" if fmt == "json" else "application/octet-stream"
    with TestClient(create_app(make_settings(tmp_path))) as other:
        r = other.post("/v1/models", content=exported.content, headers={"content-type": ctype})
        assert r.status_code == 201, r.text
        imported = r.json()
        original = c.get(f"/v1/models/{model_id}").json()
        for key in ("solver", "task", "n_features", "classes", "preprocessing", "metrics"):
            assert imported[key] == original[key], key
        assert imported["job_id"] is None and imported["dataset_id"] is None
        got = other.post(f"/v1/models/{imported['id']}/predict", json={"instances": X}).json()
    assert got == want


def test_an_import_counts_its_own_weights(served: dict[str, Any], tmp_path: Path):
    """An export made before the weight counts were recorded shows its density once imported."""
    c, model_id = served["client"], served["magic"]
    original = c.get(f"/v1/models/{model_id}").json()
    doc = _json_export(c, model_id)
    for key in ("n_weights", "nnz_weights"):
        doc["model"]["metrics"].pop(key, None)
    with TestClient(create_app(make_settings(tmp_path))) as other:
        r = other.post("/v1/models", json=doc)
        assert r.status_code == 201, r.text
    coef = np.asarray(doc["arrays"]["coef"]["data"])
    assert r.json()["n_weights"] == original["n_weights"] == coef.size
    assert r.json()["nnz_weights"] == original["nnz_weights"] == np.count_nonzero(coef)


def _json_export(c: TestClient, model_id: int) -> dict[str, Any]:
    doc: dict[str, Any] = c.get(f"/v1/models/{model_id}/export", params={"format": "json"}).json()
    return doc


def _broken_exports(c: TestClient, model_id: int) -> list[tuple[str, bytes, str, int]]:
    doc = _json_export(c, model_id)
    wrong_shape = json.loads(json.dumps(doc))
    wrong_shape["arrays"]["coef"]["shape"] = [1, 3]
    wrong_width = json.loads(json.dumps(doc))
    wrong_width["arrays"]["coef"] = {"dtype": "float64", "shape": [1, 3], "data": [1.0, 2.0, 3.0]}
    no_classes = json.loads(json.dumps(doc))
    no_classes["model"]["classes"] = ["g"]
    bad_prep = json.loads(json.dumps(doc))
    bad_prep["arrays"]["preprocessing.scale.scale_"]["data"][0] = "x"
    npz = io.BytesIO()
    np.savez(npz, coef=np.zeros(3))
    bomb = io.BytesIO()  # 256 MiB of zeros, one byte over the model size limit with its header
    np.savez_compressed(bomb, __model__=np.asarray("{}"), coef=np.zeros(2**28 // 8))
    J, B = "application/json", "application/octet-stream"
    return [
        ("not json", b"{not json", J, 422),
        ("a list", b"[1, 2]", J, 422),
        ("another format", json.dumps({**doc, "format": "mlflow"}).encode(), J, 422),
        ("an array of the wrong size", json.dumps(wrong_shape).encode(), J, 422),
        ("a model of the wrong width", json.dumps(wrong_width).encode(), J, 422),
        ("classes that do not fit", json.dumps(no_classes).encode(), J, 422),
        ("a string in a float array", json.dumps(bad_prep).encode(), J, 422),
        ("random bytes", b"\x00\x01garbage" * 10, B, 422),
        ("an npz without the document", npz.getvalue(), B, 422),
        ("an npz that inflates past the limit", bomb.getvalue(), B, 413),
    ]


def test_malformed_imports_are_refused_and_store_nothing(served: dict[str, Any]):
    c, model_id = served["client"], served["magic"]
    before = len(c.get("/v1/models", params={"limit": 200}).json()["items"])
    for what, body, ctype, status in _broken_exports(c, model_id):
        r = c.post("/v1/models", content=body, headers={"content-type": ctype})
        problem = assert_problem(r, status)
        prefix = "not a model export" if status == 422 else "the model is too large"
        assert problem["detail"].startswith(prefix), (what, problem)
    r = c.post("/v1/models", content=b"x", headers={"content-type": "text/plain"})
    assert_problem(r, 415)
    assert len(c.get("/v1/models", params={"limit": 200}).json()["items"]) == before


def test_onnx_of_a_model_with_text_columns_and_missing_values(served: dict[str, Any], data_dir: Path):
    """magic04 with a header, an id column (ignored), a text column and empty cells."""
    from tests.app.jobs.test_preprocessing import _mixed_csv

    c = served["client"]
    ds = upload(c, _mixed_csv(data_dir, rows=2000), "mixed.csv").json()
    model_id = _model(c, dataset_id=ds["id"], preprocessing={"ignore": ["id"]}, **LOGISTIC)
    names = ds["feature_names"]
    rows = [
        dict(zip(names, line.split(","), strict=False))
        for line in _mixed_csv(data_dir, rows=300).decode().splitlines()[1:]
    ]
    numeric = [
        [float(r[n]) if r[n] and n not in ("id", "alpha_band") else np.nan for n in names] for r in rows
    ]
    instances = [
        {n: (r[n] if n == "alpha_band" else (float(r[n]) if r[n] else None)) for n in names if n != "id"}
        for r in rows
    ]
    want = c.post(f"/v1/models/{model_id}/predict", json={"instances": instances}).json()
    session = _onnx(c, model_id)
    assert [i.name for i in session.get_inputs()] == ["X", "text"]
    scores, label, proba = session.run(
        ["scores", "label", "probabilities"],
        {
            "X": np.asarray(numeric, dtype=np.float32),
            "text": np.asarray([[r["alpha_band"]] for r in rows], dtype=object),
        },
    )
    np.testing.assert_allclose(scores[:, 0], want["scores"], atol=1e-5)
    np.testing.assert_allclose(proba, want["probabilities"], atol=1e-5)
    assert label.tolist() == want["predictions"]


def test_onnx_export_of_a_kernel_model_is_a_422(served: dict[str, Any]):
    c = served["client"]
    ds = upload(c, b"a,b,label\n1,2,x\n2,1,y\n3,3,x\n1,1,y\n", "tiny.csv").json()
    model_id = _model(c, dataset_id=ds["id"], solver="kernel_pgs", params={"n_iter": 50})
    r = c.get(f"/v1/models/{model_id}/export", params={"format": "onnx"})
    assert "not linear" in assert_problem(r, 422, "query.format")["detail"]
    r = c.get(f"/v1/models/{model_id}/export", params={"format": "pickle"})
    assert_problem(r, 422, "query.format")


def test_onnx_of_a_hinge_model_has_labels_and_scores_only(served: dict[str, Any], data_dir: Path):
    c, model_id = served["client"], served["hinge"]
    X = _magic_rows(data_dir, 100)
    want = c.post(f"/v1/models/{model_id}/predict", json={"instances": X.tolist()}).json()
    session = _onnx(c, model_id)
    assert [o.name for o in session.get_outputs()] == ["scores", "label"]
    scores, label = session.run(None, {"X": X.astype(np.float32)})
    np.testing.assert_allclose(scores[:, 0], want["scores"], atol=1e-5)
    assert label.tolist() == want["predictions"]


def test_onnx_of_an_sdca_model_agrees_with_predict(served: dict[str, Any], data_dir: Path):
    c, model_id = served["client"], served["sdca"]
    X = _magic_rows(data_dir, 200)
    want = c.post(f"/v1/models/{model_id}/predict", json={"instances": X.tolist()}).json()
    scores, label, proba = _onnx(c, model_id).run(
        ["scores", "label", "probabilities"], {"X": X.astype(np.float32)}
    )
    np.testing.assert_allclose(scores[:, 0], want["scores"], atol=1e-5)
    np.testing.assert_allclose(proba, want["probabilities"], atol=1e-5)
    assert label.tolist() == want["predictions"]
