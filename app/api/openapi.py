"""The OpenAPI document as the contract: what each operation can answer, errors included.

An operation lists its statuses once, ``responses=problems(404, 409)``: each becomes an
``application/problem+json`` response with the shared schema (``Problem``, or
``ValidationProblem`` for a 422) and an example. The schemas are registered once in the
document's components by :func:`install_openapi`. The statuses that app-wide guards answer on
every operation (``REQUEST_GUARDS``, ``API_GUARDS``) are given where the routers are included
(app/main.py). tests/contract.py checks the document against what the service really answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute
from pydantic.json_schema import models_json_schema

from app.core.errors import PROBLEM_MEDIA_TYPE, TYPE_PREFIX
from app.schemas.errors import Problem, ValidationProblem
from app.services.solvers.params_schema import add_params_schemas

Responses = dict[int | str, dict[str, Any]]
_COMPONENTS = "#/components/schemas/"


@dataclass(frozen=True)
class _Status:
    description: str
    kind: str
    detail: str


# What each error status means in this service, with an example of its problem body.
STATUSES: dict[int, _Status] = {
    400: _Status(
        "Malformed request: both Content-Length and Transfer-Encoding, a JSON body nested "
        "deeper than PGS_MAX_JSON_DEPTH, or (without API keys) a Host that is not this "
        "server's",
        "json-too-deep",
        "the JSON body nests 80 levels deep; the limit is 64 (PGS_MAX_JSON_DEPTH)",
    ),
    401: _Status(
        "No API key: send 'Authorization: Bearer <key>'", "unauthorized", "send 'Authorization: Bearer <key>'"
    ),
    403: _Status(
        "The API key is not valid; or, on a server without keys, a client that is not "
        "on loopback or a write from a page of another origin",
        "forbidden",
        "the API key is not valid",
    ),
    404: _Status("No such resource", "not-found", "job 7 does not exist"),
    408: _Status(
        "The request body arrived too slowly (PGS_BODY_IDLE_TIMEOUT_S, PGS_BODY_TIMEOUT_S, "
        "PGS_MIN_BODY_BYTES_PER_S)",
        "request-timeout",
        "the request body paused for more than 10 s (PGS_BODY_IDLE_TIMEOUT_S)",
    ),
    409: _Status(
        "The request conflicts with the resource's state, or its Idempotency-Key was "
        "used with another request",
        "conflict",
        "Idempotency-Key 'a1b2' was already used with a different request body",
    ),
    410: _Status("The resource expired", "gone", "upload 3f2a expired at 2026-01-16T09:30:00Z"),
    412: _Status(
        "A precondition header is missing or wrong (tus: Tus-Resumable)",
        "tus-version",
        "send 'Tus-Resumable: 1.0.0'",
    ),
    413: _Status(
        "The body is over a size limit",
        "payload-too-large",
        "the request body exceeds 1048576 bytes (PGS_MAX_BODY_BYTES)",
    ),
    415: _Status(
        "The body's content type is not one this operation reads",
        "unsupported-media-type",
        "send the request body as application/json",
    ),
    422: _Status(
        "Invalid request: ``errors`` names each field at fault (an unknown query parameter is one)",
        "validation-error",
        "invalid request: query.foo",
    ),
    429: _Status(
        "Too many at once: the client's open connections (PGS_MAX_CONNECTIONS_PER_CLIENT), "
        "or what the operation says (a queue, uploads or long polls of the owner); retry after "
        "Retry-After seconds",
        "too-many-queued-jobs",
        "owner 'team-a' has 100 queued job(s); 1 more would pass its quota of 100 "
        "(PGS_MAX_QUEUED_JOBS_PER_OWNER)",
    ),
    460: _Status(
        "Checksum mismatch (tus checksum extension): the body does not match "
        "Upload-Checksum; nothing of it was kept",
        "checksum-mismatch",
        "the body's sha1 does not match Upload-Checksum",
    ),
    503: _Status(
        "The database or the store (PGS_STORE_URL) is unavailable or busy: retry after Retry-After seconds",
        "database-unavailable",
        "the database is unavailable; retry shortly",
    ),
    507: _Status(
        "The server cannot store data now (disk full, quota, read-only); nothing was stored",
        "insufficient-storage",
        "the server cannot store data right now (No space left on device); nothing was stored, retry later",
    ),
}

# Answered on every operation, before its handler: the Host and network checks of a server
# without keys (400, 403; app/core/security.py), unknown or invalid query parameters (422) and
# a client over its connections (429; app/core/server.py).
REQUEST_GUARDS = (400, 403, 422, 429)
# Every /v1 operation besides: its API key (401, 403) and its database or store (503).
API_GUARDS = (*REQUEST_GUARDS, 401, 503)
# Every POST and DELETE besides: the body's time and size limits (app/core/limits.py).
BODY_GUARDS = (408, 413)

_VALIDATION_EXAMPLE_ERRORS = [
    {
        "loc": ["query", "foo"],
        "field": "query.foo",
        "msg": "unknown query parameter",
        "type": "extra_forbidden",
    }
]


def _example(status: int, kind: str, detail: str) -> dict[str, Any]:
    # 460 is tus's own status (checksum extension), unknown to http.HTTPStatus.
    title = "Checksum Mismatch" if status == 460 else HTTPStatus(status).phrase
    body: dict[str, Any] = {
        "type": TYPE_PREFIX + kind,
        "title": title,
        "status": status,
        "detail": detail,
        "instance": "/v1/jobs/7",
    }
    if status == 422:
        body["errors"] = _VALIDATION_EXAMPLE_ERRORS
    return body


def problems(*statuses: int | tuple[int, str]) -> Responses:
    """The ``responses=`` of an operation's error statuses: each an int, or ``(status,
    description)`` where the operation says more than the general meaning in STATUSES."""
    out: Responses = {}
    for entry in statuses:
        status, description = entry if isinstance(entry, tuple) else (entry, None)
        meaning = STATUSES[status]
        schema = ValidationProblem if status == 422 else Problem
        response: dict[str, Any] = {
            "description": description or meaning.description,
            "content": {
                PROBLEM_MEDIA_TYPE: {
                    "schema": {"$ref": _COMPONENTS + schema.__name__},
                    "example": _example(status, meaning.kind, description or meaning.detail),
                }
            },
        }
        if status in (429, 503):
            response["headers"] = {
                "Retry-After": {
                    "description": "Seconds to wait before retrying",
                    "schema": {"type": "integer"},
                }
            }
        out[status] = response
    return out


def example(
    status: int, value: Any, description: str | None = None, media_type: str = "application/json"
) -> Responses:
    """A success response's example (merged by FastAPI with the response model's schema)."""
    response: dict[str, Any] = {"content": {media_type: {"example": value}}}
    if description:
        response["description"] = description
    return {status: response}


def _problem_schemas() -> dict[str, Any]:
    _, top = models_json_schema(
        [(Problem, "serialization"), (ValidationProblem, "serialization")],
        ref_template=_COMPONENTS + "{model}",
    )
    schemas: dict[str, Any] = top["$defs"]
    return schemas


def _restore_null_examples(schema: dict[str, Any], routers: Sequence[APIRouter]) -> None:
    """Put back the examples' nulls: FastAPI drops every None of the document, the values of
    examples included (fastapi/fastapi#5559), and an example without its nullable fields is not
    a valid response. The routers' paths carry their prefix, as the document's do."""
    for router in routers:
        for route in router.routes:
            if not isinstance(route, APIRoute):
                continue
            operations = [schema["paths"][route.path][m.lower()] for m in route.methods or ()]
            for status, response in route.responses.items():
                for media_type, content in response.get("content", {}).items():
                    if "example" in content:
                        for op in operations:
                            documented = op["responses"][str(status)]["content"][media_type]
                            documented["example"] = content["example"]


def install_openapi(app: FastAPI, routers: Sequence[APIRouter]) -> None:
    """Register the problem schemas and each solver's params schema in the document FastAPI builds
    (once, on first use)."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = build()  # caches itself in app.openapi_schema
            schema.setdefault("components", {}).setdefault("schemas", {}).update(_problem_schemas())
            add_params_schemas(schema)
            _restore_null_examples(schema, routers)
        return app.openapi_schema or {}

    app.openapi = openapi  # type: ignore[method-assign]
