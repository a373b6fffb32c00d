"""The OpenAPI document as the contract (app/api/openapi.py): errors as problem+json with their
schemas, examples that fit their models, unknown query parameters refused, /docs offline. That the
service answers only what the document lists is checked over the whole session
(tests/contract.py, wired in tests/conftest.py); its own logic is tested here too."""

from __future__ import annotations

import importlib
import pkgutil
import re
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import BaseModel

from app import schemas
from tests.contract import Answer, ContractRecorder, live_spec
from tests.helpers import PROBLEM, assert_problem

SUCCESS = {"200", "201", "202", "204"}


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    return live_spec()


def _operations(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(method.upper(), path, op) for path, item in spec["paths"].items() for method, op in item.items()]


def test_every_error_is_problem_json_with_its_schema(spec: dict[str, Any]):
    operations = _operations(spec)
    assert len(operations) >= 23
    for method, path, op in operations:
        errors = {s: r for s, r in op["responses"].items() if s not in SUCCESS}
        # Every operation answers 422 (unknown query parameters) and the request guards.
        assert {"400", "403", "422"} <= set(errors), (method, path, sorted(errors))
        if path.startswith("/v1/"):
            assert {"401", "503"} <= set(errors), (method, path)
        if "{" in path:
            assert "404" in errors, (method, path)
        for status, response in errors.items():
            assert list(response["content"]) == [PROBLEM], (method, path, status)
            media = response["content"][PROBLEM]
            schema = "ValidationProblem" if status == "422" else "Problem"
            assert media["schema"] == {"$ref": f"#/components/schemas/{schema}"}
            assert media["example"]["status"] == int(status)
    schemas = spec["components"]["schemas"]
    assert "HTTPValidationError" not in schemas and "ValidationError" not in schemas
    errors_schema = schemas["ValidationProblem"]["properties"]["errors"]["anyOf"][0]
    assert errors_schema["items"] == {"$ref": "#/components/schemas/FieldError"}
    assert set(schemas["FieldError"]["required"]) == {"loc", "field", "msg", "type"}


def test_the_statuses_the_issue_named_are_documented(spec: dict[str, Any]):
    ops = {(m, p): set(op["responses"]) for m, p, op in _operations(spec)}
    assert "409" in ops[("DELETE", "/v1/datasets/{dataset_id}")]
    for creating in ("/v1/datasets", "/v1/jobs", "/v1/studies"):
        assert {"409", "413", "415"} <= ops[("POST", creating)], creating
    assert {"413", "415", "507"} <= ops[("POST", "/v1/models/{model_id}/predict")]
    assert "507" in ops[("POST", "/v1/datasets")]
    assert {"200", "202", "409"} <= ops[("POST", "/v1/jobs/{job_id}/cancel")]


def test_every_operation_has_a_response_example_and_body_operations_a_request_example(spec: dict[str, Any]):
    for method, path, op in _operations(spec):
        examples = [
            m
            for s, r in op["responses"].items()
            if s in SUCCESS
            for m in (r.get("content") or {}).values()
            if "example" in m
        ]
        # tus answers carry their meaning in headers, with no body (Location, Upload-Offset).
        headers_only = [
            s
            for s, r in op["responses"].items()
            if s in SUCCESS and r.get("headers") and not r.get("content")
        ]
        assert examples or headers_only or "204" in op["responses"], (method, path)
        body = op.get("requestBody")
        if body is not None:
            assert any(
                "example" in m or "examples" in m or _schema_examples(spec, m)
                for m in body["content"].values()
            ), (method, path)


def _schema_examples(spec: dict[str, Any], media: dict[str, Any]) -> bool:
    ref = media.get("schema", {}).get("$ref", "")
    return bool(ref) and "examples" in spec["components"]["schemas"][ref.rsplit("/", 1)[1]]


def _schema_classes() -> dict[str, type[BaseModel]]:
    """Every pydantic model of app/schemas/, by its name in the OpenAPI document."""
    found: dict[str, type[BaseModel]] = {}
    for info in pkgutil.iter_modules(schemas.__path__):
        module = importlib.import_module(f"{schemas.__name__}.{info.name}")
        for name, value in vars(module).items():
            if (
                isinstance(value, type)
                and issubclass(value, BaseModel)
                and value.__module__ == module.__name__
            ):
                found[name] = value
    return found


def test_response_examples_are_valid_instances_of_the_response_models(spec: dict[str, Any]):
    models = _schema_classes()
    checked = 0
    for _, _, op in _operations(spec):
        for status, response in op["responses"].items():
            media = (response.get("content") or {}).get("application/json", {})
            ref = media.get("schema", {}).get("$ref")
            if status in SUCCESS and ref and "example" in media:
                model = models[ref.rsplit("/", 1)[1]]
                model.model_validate(media["example"])  # raises if the example drifted
                checked += 1
    assert checked >= 15


# -- unknown query parameters ------------------------------------------------------------------


def test_unknown_query_parameters_are_a_422_naming_them(client: TestClient, spec: dict[str, Any]):
    r = client.get("/v1/jobs", params={"dataset": 4, "statuz": "queued", "limit": 5})
    body = assert_problem(r, 422, "query.dataset")
    assert {e["field"] for e in body["errors"]} == {"query.dataset", "query.statuz"}
    assert "query.dataset" in body["detail"] and "query.statuz" in body["detail"]
    # Declared ones still work, also those of dependencies (the pagination's limit and cursor).
    assert client.get("/v1/jobs", params={"status": "queued", "limit": 5}).status_code == 200
    assert client.get("/v1/studies/1/plot", params={"y": "iterations"}).status_code == 404
    # Every operation of the document refuses one, before looking anything up.
    for method, path, _ in _operations(spec):
        url = re.sub(r"\{[^}]+\}", "1", path)
        r = client.request(method, url, params={"nonsense": "1"})
        if method == "HEAD":  # the problem's headers, no body
            assert r.status_code == 422 and r.headers["content-type"].startswith(PROBLEM)
            continue
        assert_problem(r, 422, "query.nonsense")


# -- /docs offline -----------------------------------------------------------------------------


@pytest.mark.slow
def test_docs_load_nothing_from_outside(client: TestClient):
    page = client.get("/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    urls = re.findall(r"""(?:src|href)=["']([^"']+)["']|url: *["']([^"']+)["']""", page.text)
    refs = [u for pair in urls for u in pair if u]
    assert refs and all(u.startswith("/") and not u.startswith("//") for u in refs), refs
    assert "validatorUrl" in page.text  # Swagger UI would call validator.swagger.io otherwise
    assert "cdn" not in page.text.lower()
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css", "favicon-32x32.png"):
        assert f"/docs/assets/{asset}" in refs
        r = client.get(f"/docs/assets/{asset}")
        assert r.status_code == 200 and len(r.content) > 500, asset
    assert client.get("/openapi.json").status_code == 200
    assert client.get("/docs/oauth2-redirect").status_code == 200
    assert client.get("/redoc").status_code == 404  # turned off rather than loaded from a CDN


# -- the session-wide check's own logic ----------------------------------------------------------


def test_the_recorder_flags_only_undocumented_answers(spec: dict[str, Any]):
    recorder = ContractRecorder()
    recorder.record("GET", "/v1/jobs/12", 404, "application/problem+json")
    recorder.record("GET", "/v1/jobs/12/trace", 200, "application/json; charset=utf-8")
    recorder.record("DELETE", "/v1/datasets/3", 204, None)
    recorder.record("GET", "/v1/jobs/12", 418, "application/problem+json")  # not documented
    recorder.record("GET", "/v1/jobs", 422, "application/json")  # wrong content type
    recorder.record("GET", "/docs", 200, "text/html")  # not an operation: ignored
    recorder.record("PUT", "/v1/jobs/12", 405, "application/problem+json")  # no such operation
    report = recorder.check(spec)
    assert report.undocumented == [
        Answer("GET", "/v1/jobs", 422, "application/json"),
        Answer("GET", "/v1/jobs/{job_id}", 418, PROBLEM),
    ]
    assert Answer("GET", "/v1/jobs/{job_id}/trace", 200, "application/json") in report.produced
    assert Answer("GET", "/v1/jobs/{job_id}", 503, PROBLEM) in report.unexercised
