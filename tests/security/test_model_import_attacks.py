"""The model-import attacks M1-M10 of the attack report of 2026-11-27, replayed on a real app and
SQLite file: each hostile file is a 422 naming the field and the rule it breaks (a 413 when it is
too large), never a 500, and stores nothing; the refusals that used to allocate gigabytes are
measured (tracemalloc) to allocate next to nothing; and a wide model the service exported, over
PGS_MAX_BODY_BYTES as npz and as JSON, imports back and predicts the same."""

from __future__ import annotations

import io
import json
import os
import random
import tracemalloc
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from tests.helpers import REPO, assert_problem, create_job, make_settings, upload, wait_for
from tests.security.model_files import JSON, NPZ, json_parse_bomb, npz_bomb, npz_bytes, widened

MIB = 1024 * 1024
# What a refused import may allocate in this process at most: its body, the problem answer and
# the framework around them. The attacks it replaces took gigabytes.
REFUSAL_BYTES = 16 * MIB


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    with TestClient(create_app(make_settings(tmp_path_factory.mktemp("attacks")))) as c:
        ds = upload(c, REPO / "examples" / "sample.svm").json()["id"]
        params = {"loss": "logistic", "n_iter": 500}
        job = wait_for(c, create_job(c, dataset_id=ds, params=params).json()["id"])
        assert job["status"] == "succeeded", job
        model_id = job["model_id"]
        yield {
            "client": c,
            "model_id": model_id,
            "json": c.get(f"/v1/models/{model_id}/export", params={"format": "json"}).json(),
            "npz": c.get(f"/v1/models/{model_id}/export", params={"format": "npz"}).content,
        }


def _doc(served: dict[str, Any]) -> dict[str, Any]:
    """A fresh copy of the trained model's JSON export."""
    doc: dict[str, Any] = json.loads(json.dumps(served["json"]))
    return doc


def _arrays(served: dict[str, Any]) -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(served["npz"]), allow_pickle=False) as f:
        return {name: f[name].copy() for name in f.files}


def _imported(c: TestClient) -> int:
    """Models that came from an import (no job)."""
    return sum(m["job_id"] is None for m in c.get("/v1/models", params={"limit": 200}).json()["items"])


def _refused(c: TestClient, body: bytes, headers: dict[str, str], status: int, field: str) -> dict[str, Any]:
    """POST the body: the problem names ``field`` (below body) and nothing is stored."""
    before = _imported(c)
    where = f"body.{field}" if field else "body"
    problem = assert_problem(c.post("/v1/models", content=body, headers=headers), status, where)
    assert _imported(c) == before
    return problem


def _peak_bytes(call: Callable[[], Any]) -> tuple[Any, int]:
    """The call's result and the most memory this process held during it, above its start."""
    tracemalloc.start()
    try:
        result = call()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_untouched_exports_import(served: dict[str, Any]):
    """The files the attacks alter import as they are: each refusal below is the alteration's."""
    c = served["client"]
    for body, headers in ((json.dumps(served["json"]).encode(), JSON), (served["npz"], NPZ)):
        r = c.post("/v1/models", content=body, headers=headers)
        assert r.status_code == 201, r.text


def test_m1_object_arrays_are_refused_unread(served: dict[str, Any], tmp_path: Path):
    class Payload:
        def __reduce__(self) -> Any:
            return (os.system, (f"touch {tmp_path / 'ran'}",))

    c = served["client"]
    pickled = io.BytesIO()
    np.savez(pickled, __model__=np.asarray([Payload()], dtype=object))
    problem = _refused(c, pickled.getvalue(), NPZ, 422, "arrays.__model__")
    assert "pickle" in problem["detail"]
    objects = npz_bytes({**_arrays(served), "coef": np.asarray([[1.0, "x"]], dtype=object)})
    _refused(c, objects, NPZ, 422, "arrays.coef")
    assert not (tmp_path / "ran").exists()


@pytest.mark.parametrize(
    ("array", "value", "rule"),
    [
        ("coef", np.nan, "not finite"),
        ("coef", np.inf, "not finite"),
        ("intercept", -np.inf, "not finite"),
        ("preprocessing.scale.max_abs_.values", np.inf, "not finite"),
        ("preprocessing.scale.max_abs_.values", -1.0, "0 or more"),
        ("coef", 1e308, "infinite scores"),
    ],
)
def test_m2_weights_that_are_not_finite_or_overflow_are_refused(
    served: dict[str, Any], array: str, value: float, rule: str
):
    arrays = _arrays(served)
    arrays[array].flat[0] = value
    problem = _refused(served["client"], npz_bytes(arrays), NPZ, 422, f"arrays.{array}")
    assert rule in problem["detail"]


def test_m2_a_json_weight_that_is_not_finite_is_refused(served: dict[str, Any]):
    doc = _doc(served)
    doc["arrays"]["coef"]["data"][0] = float("nan")  # json.dumps writes NaN, json.loads reads it
    _refused(served["client"], json.dumps(doc).encode(), JSON, 422, "arrays.coef")


def _sparse_coef(doc: dict[str, Any], shape: list[int]) -> dict[str, Any]:
    doc["arrays"].pop("coef")
    doc["arrays"].update(
        {
            "coef_rows": {"dtype": "int32", "shape": [1], "data": [0]},
            "coef_cols": {"dtype": "int64", "shape": [1], "data": [0]},
            "coef_values": {"dtype": "float64", "shape": [1], "data": [1.0]},
            "coef_shape": {"dtype": "int64", "shape": [2], "data": shape},
        }
    )
    return doc


@pytest.mark.parametrize("shape", [[1, 10**12], [10**12, 10**12], [2**62, 2**62]])
def test_m3_sparse_weights_of_another_shape_are_refused(served: dict[str, Any], shape: list[int]):
    body = json.dumps(_sparse_coef(_doc(served), shape)).encode()
    problem, peak = _peak_bytes(lambda: _refused(served["client"], body, JSON, 422, "arrays.coef_shape"))
    assert "[1, 13]" in problem["detail"]
    assert peak < REFUSAL_BYTES


def test_m4_a_width_over_pgs_max_features_is_refused_before_anything_is_built(served: dict[str, Any]):
    body = json.dumps(widened(_doc(served), 5 * 10**7)).encode()
    assert len(body) < 4096
    problem, peak = _peak_bytes(lambda: _refused(served["client"], body, JSON, 422, "model.n_features"))
    assert "PGS_MAX_FEATURES" in problem["detail"]
    assert peak < REFUSAL_BYTES


def test_m4_dense_weights_over_pgs_max_model_bytes_are_refused_before_anything_is_built(
    served: dict[str, Any],
):
    # 3 classes x 2**24 - 1 features: 384 MiB of weights, within PGS_MAX_FEATURES.
    body = json.dumps(widened(_doc(served), 2**24 - 1, classes=[-1, 1, 2])).encode()
    problem, peak = _peak_bytes(
        lambda: _refused(served["client"], body, JSON, 413, "files.estimator.n_features_in")
    )
    assert "PGS_MAX_MODEL_BYTES" in problem["detail"]
    assert peak < REFUSAL_BYTES


def test_m5_an_npz_bomb_is_refused_from_its_zip_directory(served: dict[str, Any]):
    bomb = npz_bomb(_doc(served))
    assert len(bomb) < 2 * MIB
    problem, peak = _peak_bytes(lambda: _refused(served["client"], bomb, NPZ, 413, "arrays.coef"))
    assert "PGS_MAX_MODEL_BYTES" in problem["detail"]
    assert peak < REFUSAL_BYTES + 2 * len(bomb)


def test_m5_an_npy_header_that_claims_more_than_its_member_holds_is_refused(served: dict[str, Any]):
    """The zip entry holds the 13 weights; its .npy header claims 2**40 of them."""
    lying = io.BytesIO()
    with zipfile.ZipFile(lying, "w") as archive:
        for name, a in _arrays(served).items():
            with archive.open(f"{name}.npy", "w") as fh:
                if name != "coef":
                    np.lib.format.write_array(fh, a)
                    continue
                header = {"descr": "<f8", "fortran_order": False, "shape": (1, 2**40)}
                np.lib.format.write_array_header_1_0(fh, header)
                fh.write(a.tobytes())
    body = lying.getvalue()
    problem, peak = _peak_bytes(lambda: _refused(served["client"], body, NPZ, 422, "arrays.coef"))
    assert "header declares" in problem["detail"]
    assert peak < REFUSAL_BYTES


def test_m5_json_that_would_parse_to_more_than_the_limit_is_refused_unparsed(served: dict[str, Any]):
    bomb = json_parse_bomb(16 * MIB)  # 24 times as much once parsed; the limit is 256 MiB
    problem, peak = _peak_bytes(lambda: _refused(served["client"], bomb, JSON, 413, ""))
    assert "once parsed" in problem["detail"]
    assert peak < REFUSAL_BYTES + 2 * len(bomb)


def test_m6_numbers_json_cannot_hold_are_refused(served: dict[str, Any]):
    c = served["client"]
    text = json.dumps(served["json"])
    assert '"n_iter": 500' in text
    infinite = text.replace('"n_iter": 500', '"n_iter": 1e400', 1).encode()
    _refused(c, infinite, JSON, 422, "model.params.n_iter")
    doc = _doc(served)
    doc["model"]["metrics"]["objective"] = float("nan")
    _refused(c, json.dumps(doc).encode(), JSON, 422, "model.metrics.objective")


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        for key in parents:
            doc = doc[key]
        doc[last] = value

    return change


def _both(*changes: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        for one in changes:
            one(doc)

    return change


PARAMS = ("model.params", "files.estimator.params")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (_set("model.preprocessing.n_features", 5), "files.service.preprocessing"),
        (
            _both(*(_set(f"{p}.preprocessing.n_features", 5) for p in ("model", "files.service"))),
            "model.preprocessing.n_features",
        ),
        (_set("files.service.feature_names", ["a"] * 5), "files.service.feature_names"),
        (
            _both(_set("model.preprocessing", None), _set("files.service.preprocessing", None)),
            "arrays.preprocessing.scale.max_abs_.indices",
        ),
        (_both(*(_set(f"{p}.sigma", -1) for p in PARAMS)), "model.params.sigma"),
        (_both(*(_set(f"{p}.loss", "hinge; rm -rf") for p in PARAMS)), "model.params.loss"),
        (_both(*(_set(f"{p}.__class__", "os.system") for p in PARAMS)), "model.params.__class__"),
        (_set("model.params.sigma", 0.5), "files.estimator.params"),
        (_set("model.solver", "no-such-solver"), "files.service.solver"),
        (_set("model.estimator", "LBFGSClassifier"), "model.estimator"),
        (_set("files.estimator.estimator", "os.system"), "files.estimator.estimator"),
        (_both(_set("model.task", "multiclass"), _set("files.service.task", "multiclass")), "model.classes"),
        (_both(_set("model.classes", [1, 1]), _set("files.service.classes", [1, 1])), "model.classes"),
        (_set("files.estimator.classes", [5, 7]), "files.estimator.classes"),
        (_set("files.estimator.n_features_in", 12), "files.estimator.n_features_in"),
        (_set("files.estimator.n_iter", "500"), "files.estimator.n_iter"),
        (_set("model.index_base", 2), "model.index_base"),
        (_set("arrays.evil", {"dtype": "float64", "shape": [1], "data": [1.0]}), "arrays.evil"),
        (_set("arrays.coef.shape", [13, 1]), "arrays.coef"),
        (_set("arrays.intercept.dtype", "int64"), "arrays.intercept.data"),
        (_set("files", {}), "files.estimator"),
    ],
)
def test_m7_metadata_that_contradicts_itself_or_its_arrays_is_refused(
    served: dict[str, Any], change: Callable[[dict[str, Any]], None], field: str
):
    doc = _doc(served)
    change(doc)
    _refused(served["client"], json.dumps(doc).encode(), JSON, 422, field)


def _mixed_csv(rows: int) -> bytes:
    """An id column (ignored), a text column, missing values and string labels."""
    lines = [f"{i},{'rgb'[i % 3]},{i % 7 if i % 5 else ''},{i * 0.3:.1f},{'yn'[i % 2]}" for i in range(rows)]
    return "\n".join(["id,colour,size,weight,label", *lines]).encode()


def _svmlight_rows(data: bytes, n: int) -> tuple[dict[str, str], bytes]:
    """The first ``n`` lines of an svmlight file without their labels, as a predict body."""
    return {"content-type": "text/plain"}, b"\n".join(
        line.split(b" ", 1)[1] for line in data.splitlines()[:n]
    )


def _predict(c: TestClient, model_id: int, rows: tuple[dict[str, str], bytes]) -> Any:
    r = c.post(f"/v1/models/{model_id}/predict", content=rows[1], headers=rows[0])
    assert r.status_code == 200, r.text
    return r.json()


def test_m8_every_solvers_export_imports_back_and_predicts_the_same(served: dict[str, Any]):
    """Each solver's classifier and regressor, a multiclass model, a kernel model with the linear
    kernel, and a CSV model with text, ignored and missing values: as npz and as JSON."""
    from solver import SOLVERS

    c = served["client"]
    svm = (REPO / "examples" / "sample.svm").read_bytes()
    three = b"".join(f"{i % 3} 1:{i / 10:.1f} 2:{i * 7 % 5}\n".encode() for i in range(60))
    binary = upload(c, svm).json()["id"], _svmlight_rows(svm, 20)
    regression = upload(c, svm, "ages.svm", task="regression").json()["id"], _svmlight_rows(svm, 20)
    multiclass = upload(c, three, "three.svm", task="classification").json()["id"], _svmlight_rows(three, 20)
    mixed = (
        upload(c, _mixed_csv(60), "mixed.csv").json()["id"],
        ({"content-type": "text/csv"}, _mixed_csv(20)),
    )
    runs = [(s, binary, {}) for s in SOLVERS] + [(s, regression, {}) for s in SOLVERS]
    runs += [
        ("lbfgs", multiclass, {}),
        ("kernel_pgs", multiclass, {}),
        ("kernel_pgs", binary, {"params": {"kernel": "linear", "n_iter": 50}}),
        ("pgs", mixed, {"preprocessing": {"ignore": ["id"]}}),
    ]
    for solver, (ds, rows), extra in runs:
        job = create_job(c, dataset_id=ds, solver=solver, **{"params": {"n_iter": 50}, **extra})
        job = wait_for(c, job.json()["id"])
        assert job["status"] == "succeeded", job
        want = _predict(c, job["model_id"], rows)
        for fmt, kind in (("npz", NPZ), ("json", JSON)):
            exported = c.get(f"/v1/models/{job['model_id']}/export", params={"format": fmt}).content
            r = c.post("/v1/models", content=exported, headers=kind)
            assert r.status_code == 201, (solver, ds, fmt, r.text)
            assert _predict(c, r.json()["id"], rows) == want, (solver, ds, fmt)


def _wide_svmlight(rows: int, nnz: int, width: int) -> bytes:
    rng = random.Random(1)
    lines = []
    for i in range(rows):
        columns = sorted(rng.sample(range(1, width + 1), nnz))
        values = " ".join(f"{j}:{rng.random():.4f}" for j in columns)
        lines.append(f"{'1' if i % 2 else '-1'} {values}")
    return "\n".join(lines).encode()


def test_m9_a_wide_model_the_service_exported_imports_back(served: dict[str, Any], tmp_path: Path):
    """200,000 features: the npz and JSON exports are both over PGS_MAX_BODY_BYTES (1 MiB)."""
    c = served["client"]
    data = _wide_svmlight(400, 800, 200_000)
    ds = upload(c, data, "wide.svm").json()["id"]
    body = {"dataset_id": ds, "solver": "lbfgs", "params": {"loss": "logistic", "sigma": 1e-4, "n_iter": 30}}
    job = wait_for(c, create_job(c, **body).json()["id"])
    assert job["status"] == "succeeded", job
    rows = _svmlight_rows(data, 20)
    want = _predict(c, job["model_id"], rows)
    with TestClient(create_app(make_settings(tmp_path))) as other:
        for fmt, headers in (("npz", NPZ), ("json", JSON)):
            exported = c.get(f"/v1/models/{job['model_id']}/export", params={"format": fmt}).content
            assert len(exported) > MIB, (fmt, len(exported))
            r = other.post("/v1/models", content=exported, headers=headers)
            assert r.status_code == 201, r.text
            assert _predict(other, r.json()["id"], rows) == want, fmt


@pytest.mark.parametrize(
    ("body", "headers"),
    [
        (b"[" * 100_000 + b"]" * 100_000, JSON),
        (b'{"format": ' + b"1" * 5000 + b"}", JSON),
        (b"{not json", JSON),
        (b"PK\x03\x04 not a zip" * 10, NPZ),
    ],
)
def test_m10_bodies_that_are_not_json_or_not_zip_are_refused(
    served: dict[str, Any], body: bytes, headers: dict[str, str]
):
    _refused(served["client"], body, headers, 422, "")
