"""Security properties, checked mechanically: auth on every non-health operation of the OpenAPI
document, no path traversal through names, limits on upload size, request body size and
prediction batch size, and no pickle anywhere in app/ or solver/."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.core.storage.base import InvalidKey
from app.core.storage.local import LocalDirStore
from app.main import create_app
from tests.cluster.harness import tiny_svmlight
from tests.helpers import REPO, assert_problem, make_settings, wait_for

KEY = "s3cret-key"
AUTH = {"Authorization": f"Bearer {KEY}"}
# /metrics needs a key too by default (PGS_METRICS_ACCESS=key): it shows per-route 401/403 counts.
PUBLIC = {"/healthz", "/readyz"}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    settings = make_settings(
        tmp_path,
        api_keys=KEY,
        max_upload_bytes=64 * 1024,
        max_body_bytes=16 * 1024,
        max_predict_bytes=32 * 1024,
        max_predict_rows=100,
    )
    with TestClient(create_app(settings)) as c:
        yield c


def _operations(client: TestClient) -> list[tuple[str, str]]:
    spec = client.get("/openapi.json").json()
    return [
        (method.upper(), path)
        for path, item in spec["paths"].items()
        for method in item
        if method in ("get", "post", "put", "patch", "delete")
    ]


def test_every_non_health_operation_needs_a_key(client: TestClient):
    """Attack A1 of the security review, first half: no key and a wrong key on every operation
    (the key in the query, a cookie or Basic auth: tests/security/test_access_attacks.py)."""
    ops = _operations(client)
    guarded = [(m, p) for m, p in ops if p not in PUBLIC]
    assert len(guarded) >= 15 and {p for _, p in ops} >= PUBLIC
    spec = client.get("/openapi.json").json()
    for method, path in guarded:
        url = re.sub(r"\{[^}]+\}", "1", path)
        # The document says so, and the server does so: 401 without a key, 403 with a wrong one.
        assert spec["paths"][path][method.lower()].get("security"), (method, path)
        assert_problem(client.request(method, url), 401)
        assert_problem(client.request(method, url, headers={"Authorization": "Bearer nope"}), 403)
    for path in PUBLIC:
        assert client.get(path).status_code == 200


def test_no_path_traversal_through_names(client: TestClient, tmp_path: Path):
    evil = "../../../../tmp/pgs-evil"
    r = client.post(
        "/v1/datasets",
        headers=AUTH,
        data={"name": evil},
        files={"file": ("../../../etc/passwd", tiny_svmlight(30))},
    )
    assert r.status_code == 201, r.text
    assert r.json()["name"] == evil  # kept as a label, never used as a path
    data_dir = tmp_path / "var"
    stored = list((data_dir / "datasets").iterdir())
    assert len(stored) == 1 and re.fullmatch(r"[0-9a-f]{32}", stored[0].name)  # its shards
    assert not Path("/tmp/pgs-evil").exists()
    # The store refuses keys that leave it, whatever the database says.
    store = LocalDirStore(data_dir)
    for key in ("../x.npz", "/etc/passwd", "datasets/../../x", "datasets//x", "..", "a/../../b"):
        with pytest.raises(InvalidKey):
            store.path(key)
    (data_dir / "datasets" / "link").symlink_to("/etc")
    with pytest.raises(InvalidKey):
        store.path("datasets/link/passwd")


def test_size_limits(client: TestClient):
    # Upload: the file streams to disk and is refused at the limit.
    assert_problem(
        client.post("/v1/datasets", headers=AUTH, files={"file": ("big.svm", b"1 1:1\n" * 20_000)}), 413
    )
    ds = client.post("/v1/datasets", headers=AUTH, files={"file": ("t.svm", tiny_svmlight(200))}).json()["id"]
    # Any other JSON body: cut at max_body_bytes, declared or streamed (chunked).
    big_job = b'{"dataset_id": %d, "targets": [%s]}' % (ds, b", ".join([b"0.5"] * 5000))
    r = client.post("/v1/jobs", headers={**AUTH, "content-type": "application/json"}, content=big_job)
    assert_problem(r, 413)
    r = client.post(
        "/v1/jobs",
        headers={**AUTH, "content-type": "application/json"},
        content=iter([big_job[:8000], big_job[8000:]]),
    )
    assert_problem(r, 413)
    job = wait_for_model(client, ds)
    predict = f"/v1/models/{job['model_id']}/predict"
    # Prediction: the body limit, then the batch size.
    rows = [{"indices": [0], "values": [1.0]}]
    assert_problem(client.post(predict, headers=AUTH, json={"instances": rows * 3000}), 413)
    assert_problem(client.post(predict, headers=AUTH, json={"instances": rows * 101}), 413)
    assert client.post(predict, headers=AUTH, json={"instances": rows * 100}).status_code == 200
    lines = b"1:1\n" * 101
    assert_problem(client.post(predict, headers={**AUTH, "content-type": "text/plain"}, content=lines), 413)


def wait_for_model(client: TestClient, ds: int) -> dict:
    r = client.post("/v1/jobs", headers=AUTH, json={"dataset_id": ds, "params": {"n_iter": 300}})
    assert r.status_code == 202, r.text
    client.headers.update(AUTH)
    job = wait_for(client, r.json()["id"])
    assert job["status"] == "succeeded", job
    return job


# -- no pickle ---------------------------------------------------------------------------------

PICKLING_MODULES = {
    "pickle",
    "cPickle",
    "_pickle",
    "dill",
    "cloudpickle",
    "joblib",
    "shelve",
    "marshal",
    "torch",
}
LOADERS = {"load", "loads"}
# The one module allowed to pickle, and why: the pipe between the API and the worker processes
# it spawned carries a task's function and its result (as concurrent.futures' process pool does
# inside); no byte from outside the service reaches it.
INTERNAL_PIPES = {"app/training/pool.py"}


def _python_files() -> list[Path]:
    files = sorted(p for d in ("app", "solver") for p in (REPO / d).rglob("*.py"))
    return [p for p in files if str(p.relative_to(REPO)) not in INTERNAL_PIPES]


def _violations(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        where = f"{path.relative_to(REPO)}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Import):
            found += [
                f"{where} import {a.name}" for a in node.names if a.name.split(".")[0] in PICKLING_MODULES
            ]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in PICKLING_MODULES:
            found.append(f"{where} from {node.module} import ...")
        elif isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            kwargs = {k.arg: k.value for k in node.keywords}
            flag = kwargs.get("allow_pickle")
            if flag is not None and not (isinstance(flag, ast.Constant) and flag.value is False):
                found.append(f"{where} allow_pickle is not the literal False")
            if name in {"read_pickle", "to_pickle", "Unpickler"}:
                found.append(f"{where} {name}()")
            # Every np.load states allow_pickle=False (the default can be changed by numpy).
            if (
                name in LOADERS
                and isinstance(node.func, ast.Attribute)
                and getattr(node.func.value, "id", "") in ("np", "numpy")
                and "allow_pickle" not in kwargs
            ):
                found.append(f"{where} np.{name} without allow_pickle=False")
    return found


def test_no_pickle_in_app_or_solver():
    files = _python_files()
    assert len(files) > 20
    violations = [v for f in files for v in _violations(f)]
    assert violations == [], violations
    text = "\n".join(f.read_text() for f in files)
    assert "allow_pickle=True" not in text
