"""The attacks on prediction of the security review (rows R1-R4), replayed against the real app
on a model trained as the review's was (examples/sample.svm, 13 features, logistic): each test is
one attack and asserts the outcome that must hold. Bad input is a 4xx naming what is wrong,
never a 500.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from tests.helpers import REPO, assert_problem, create_job, make_settings, poll, upload, wait_for

MIB = 1024 * 1024
ROW = [0.1] * 13


def _train(c: TestClient, dataset_id: int) -> dict[str, Any]:
    params = {"loss": "logistic", "sigma": 1e-3, "n_iter": 2000, "random_state": 0}
    r = create_job(c, dataset_id=dataset_id, params=params)
    assert r.status_code == 202, r.text
    job = wait_for(c, r.json()["id"])
    assert job["status"] == "succeeded", job
    return c.get(f"/v1/models/{job['model_id']}").json()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The default limits; the review's model, and one trained on a CSV with feature names."""
    with TestClient(create_app(make_settings(tmp_path_factory.mktemp("predict-attacks")))) as c:
        sample = upload(c, REPO / "examples" / "sample.svm", "sample.svm").json()["id"]
        named_rows = "".join(f"{i % 7},{(i * 3) % 5},{'ab'[i % 2]}\n" for i in range(60))
        named = upload(c, ("x,y,label\n" + named_rows).encode(), "named.csv").json()["id"]
        yield {"client": c, "sample": sample, "logistic": _train(c, sample), "named": _train(c, named)}


def _predict(c: TestClient, model_id: int, **kwargs: Any) -> Any:
    return c.post(f"/v1/models/{model_id}/predict", **kwargs)


BAD_JSON: list[tuple[Any, str]] = [
    ({"instances": [[0.1] * 12]}, "body.instances.0"),
    ({"instances": [[0.1] * 13, [0.1] * 14]}, "body.instances.1"),
    ({"instances": [[]]}, "body.instances.0"),
    ({"instances": [{"indices": [13], "values": [1.0]}]}, "body.instances.0.indices"),
    ({"instances": [{"indices": [2**63], "values": [1.0]}]}, "body.instances.0.indices"),
    ({"instances": [{"indices": [-1], "values": [1.0]}]}, "body.instances.0.indices"),
    ({"instances": [{"indices": [2, 2], "values": [1.0, 2.0]}]}, "body.instances.0.indices"),
    ({"instances": [{"indices": [1.5], "values": [1.0]}]}, "body.instances.0.indices"),
    ({"instances": [{"indices": [1, 2], "values": [1.0]}]}, "body.instances.0"),
    ({"instances": [{"indices": [1], "values": ["x"]}]}, "body.instances.0.values"),
    ({"instances": [{"indices": [1]}]}, "body.instances.0"),
    ({"instances": [["a"] * 13]}, "body.instances.0"),
    ({"instances": [[None] * 13]}, "body.instances.0"),
    ({"instances": [[True] * 13]}, "body.instances.0"),
    # R3: lists nested to uneven depths, which NumPy refuses to make an array of.
    ({"instances": [[[1], *[0.0] * 12]]}, "body.instances.0"),
    ({"instances": [[[], *[0.0] * 12]]}, "body.instances.0"),
    ({"instances": [[0.0] * 13, [[1], *[0.0] * 12]]}, "body.instances.1"),
    ({"instances": [{"indices": [[1], 2], "values": [1.0, 2.0]}]}, "body.instances.0.indices"),
    ({"instances": [{"indices": [1, 2], "values": [[1.0], 2.0]}]}, "body.instances.0.values"),
    ({"instances": ["1:1"]}, "body.instances.0"),
    ({"instances": []}, "body.instances"),
    ({"instances": "nope"}, "body.instances"),
    ({"rows": [[0.0] * 13]}, "body.instances"),
    ({"instances": [[0.0] * 13], "extra": 1}, "body.extra"),
    ([[0.0] * 13], "body.instances"),
]


@pytest.mark.parametrize(("payload", "field"), BAD_JSON)
def test_r1_r3_bad_json_instances_are_422_naming_the_row(served: dict[str, Any], payload: Any, field: str):
    """R1: widths 12, 14 and 0; empty or non-list instances; strings, null, booleans; sparse
    indices out of range, -1, 2^63, duplicated, float, of another length than the values. R3: a
    list nested inside a dense row (a 500 once, on models with sparse input)."""
    r = _predict(served["client"], served["logistic"]["id"], json=payload)
    assert_problem(r, 422, field)


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_r1_non_finite_values_are_422(served: dict[str, Any], token: str):
    c, mid = served["client"], served["logistic"]["id"]
    dense = '{"instances": [[' + ", ".join(["0.5"] * 12 + [token]) + "]]}"
    sparse = '{"instances": [{"indices": [0], "values": [' + token + "]}]}"
    for body in (dense, sparse):
        r = _predict(c, mid, content=body, headers={"content-type": "application/json"})
        assert_problem(r, 422, "body.instances.0")
    r = _predict(c, mid, content=b"1:nan\n", headers={"content-type": "text/plain"})
    assert_problem(r, 422)


@pytest.mark.parametrize(
    "text",
    [b"", b"\n# only a comment\n", b"1:1 99:2\n", b"0:1\n", b"x:y\n", b"1:1 1:2\n"],
    ids=["empty", "comment", "index-too-large", "zero-index", "garbage", "duplicate"],
)
def test_r1_bad_svmlight_text_is_422(served: dict[str, Any], text: bytes):
    r = _predict(
        served["client"], served["logistic"]["id"], content=text, headers={"content-type": "text/plain"}
    )
    assert_problem(r, 422)


def test_r1_wrong_or_missing_media_type_unknown_model_and_broken_json(served: dict[str, Any]):
    """R1: a wrong or missing Content-Type is a 415; an unknown model a 404."""
    c, mid = served["client"], served["logistic"]["id"]
    assert_problem(_predict(c, mid, content=b"<x/>", headers={"content-type": "application/xml"}), 415)
    assert_problem(_predict(c, mid, content=b"{}"), 415)  # no content type at all
    assert_problem(_predict(c, 999_999, json={"instances": [[0.0] * 13]}), 404)
    r = _predict(c, mid, content=b'{"instances": [', headers={"content-type": "application/json"})
    assert_problem(r, 422)


def test_r1_unknown_names_and_extra_features(served: dict[str, Any]):
    """R1: features by names the model does not have, in JSON and CSV, are a 422; so is an
    infinite CSV cell (a nan cell is missing, as in an upload); a row wider than the model is a
    422; sparse features beyond it are dropped only on request (200)."""
    c, mid, named = served["client"], served["logistic"]["id"], served["named"]["id"]
    assert_problem(_predict(c, mid, json={"instances": [{"x": 1.0}]}), 422)
    assert_problem(_predict(c, named, json={"instances": [{"x": 1.0, "zzz": 2.0}]}), 422)
    csv = {"content-type": "text/csv"}
    assert _predict(c, named, content=b"x,y\n1,2\n", headers=csv).status_code == 200
    assert_problem(_predict(c, named, content=b"x,zzz\n1,2\n", headers=csv), 422)
    # nan is a missing-value marker, as in an upload: imputed like an empty cell; inf is no number.
    as_missing = _predict(c, named, content=b"x,y\n1,nan\n", headers=csv)
    assert as_missing.json() == _predict(c, named, content=b"x,y\n1,\n", headers=csv).json()
    assert_problem(_predict(c, named, content=b"x,y\n1,inf\n", headers=csv), 422)
    assert_problem(_predict(c, mid, content=b"1:1 14:1\n", headers={"content-type": "text/plain"}), 422)
    assert_problem(_predict(c, mid, json={"instances": [ROW + [0.5]]}), 422)
    # Sparse and svmlight rows may carry features beyond the model's width, dropped on request.
    beyond = {"instances": [{"indices": [0, 13], "values": [0.5, 1.0]}]}
    assert_problem(_predict(c, mid, json=beyond), 422, "body.instances.0.indices")
    ignore = {"extra_features": "ignore"}
    r = _predict(c, mid, json=beyond, params=ignore)
    assert r.status_code == 200 and len(r.json()["predictions"]) == 1
    r = _predict(c, mid, content=b"1:1 14:1\n", headers={"content-type": "text/plain"}, params=ignore)
    assert r.status_code == 200 and len(r.json()["predictions"]) == 1


@pytest.mark.slow
def test_r2_a_million_rows_or_a_body_over_the_limit_is_a_413_and_100k_rows_are_answered(
    served: dict[str, Any],
):
    """R2: 10^6 rows as JSON (32 MB) and as svmlight (with blank lines between), 100,001 rows,
    and a body of PGS_MAX_PREDICT_BYTES + 1 are 413s, counted before parsing; 100,000 rows, the
    limit, are answered."""
    c, mid = served["client"], served["logistic"]["id"]
    as_json = {"content-type": "application/json"}
    row = json.dumps(ROW).encode()
    million = b'{"instances": [' + b",".join([row] * 1_000_000) + b"]}"
    assert len(million) > 30 * MIB
    assert (
        "PGS_MAX_PREDICT_ROWS"
        in assert_problem(_predict(c, mid, content=million, headers=as_json), 413)["detail"]
    )
    lines = b"1:0.5 3:1.25\n\n" * 1_000_000
    assert_problem(_predict(c, mid, content=lines, headers={"content-type": "text/plain"}), 413)
    over = b'{"instances": [' + b",".join([row] * 100_001) + b"]}"
    assert_problem(_predict(c, mid, content=over, headers=as_json), 413)
    padded = b'{"instances": [' + row + b"]" + b" " * (64 * MIB) + b"}"
    assert (
        "PGS_MAX_PREDICT_BYTES"
        in assert_problem(_predict(c, mid, content=padded, headers=as_json), 413)["detail"]
    )
    limit = b'{"instances": [' + b",".join([row] * 100_000) + b"]}"
    r = _predict(c, mid, content=limit, headers=as_json)
    assert r.status_code == 200 and len(r.json()["predictions"]) == 100_000


def test_r4_a_batch_results_output_and_format_are_closed_sets(served: dict[str, Any]):
    """R4: ``?output=../../etc/passwd`` and ``?format=../x`` on a batch prediction's result are
    422s, whatever the format asked for: neither is ever used as a path."""
    c, mid = served["client"], served["logistic"]["id"]
    batch = c.post(f"/v1/models/{mid}/predictions", json={"dataset_id": served["sample"]}).json()
    path = f"/v1/models/{mid}/predictions/{batch['id']}"
    assert poll(c, path, lambda b: b["status"] in ("succeeded", "failed"))["status"] == "succeeded"
    for query in (
        {"output": "../../etc/passwd"},
        {"output": "../../etc/passwd", "format": "npy"},
        {"output": "../../etc/passwd", "format": "csv"},
        {"format": "../x"},
        {"format": "../../etc/passwd"},
    ):
        r = c.get(f"{path}/result", params=query)
        assert_problem(r, 422, f"query.{next(iter(query))}")
        assert "root:" not in r.text
    assert c.get(f"{path}/result", params={"output": "scores", "format": "npy"}).status_code == 200
