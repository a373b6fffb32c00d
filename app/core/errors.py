"""RFC 9457 problem details: every error the service answers is ``application/problem+json``."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

log = logging.getLogger(__name__)

PROBLEM_MEDIA_TYPE = "application/problem+json"
# Problem type URIs: stable identifiers, not links (RFC 9457 section 3.1.1 allows that).
TYPE_PREFIX = "urn:pgs:problem:"


class ProblemError(Exception):
    """An error with an HTTP status that handlers turn into a problem+json response."""

    def __init__(
        self,
        status: int,
        detail: str,
        *,
        kind: str | None = None,
        title: str | None = None,
        errors: list[dict[str, Any]] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.kind = kind
        self.title = title or HTTPStatus(status).phrase
        self.errors = errors
        self.headers = headers


def field_error(
    loc: Sequence[str | int], msg: str, type_: str = "value_error", **details: Any
) -> dict[str, Any]:
    """One entry of a validation problem's ``errors`` list, shaped like FastAPI's own; ``details``
    are further members (a solver parameter's ``rule`` and ``input``, app.schemas.errors)."""
    return {"loc": list(loc), "field": ".".join(str(p) for p in loc), "msg": msg, "type": type_, **details}


def not_found(resource: str, ident: object) -> ProblemError:
    return ProblemError(404, f"{resource} {ident} does not exist", kind="not-found")


def conflict(detail: str) -> ProblemError:
    return ProblemError(409, detail, kind="conflict")


def invalid(detail: str, errors: list[dict[str, Any]] | None = None) -> ProblemError:
    return ProblemError(422, detail, kind="validation-error", errors=errors)


def problem_response(
    request: Request,
    status: int,
    detail: str | None,
    *,
    kind: str | None = None,
    title: str | None = None,
    errors: list[dict[str, Any]] | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    body: dict[str, Any] = {
        "type": TYPE_PREFIX + kind if kind else "about:blank",
        "title": title or HTTPStatus(status).phrase,
        "status": status,
        "detail": detail,
        "instance": request.url.path,
    }
    if errors is not None:
        body["errors"] = errors
    return JSONResponse(body, status_code=status, media_type=PROBLEM_MEDIA_TYPE, headers=headers)


async def _problem_handler(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ProblemError)
    return problem_response(
        request,
        exc.status,
        exc.detail,
        kind=exc.kind,
        title=exc.title,
        errors=exc.errors,
        headers=exc.headers,
    )


async def _http_handler(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
    headers = dict(exc.headers) if exc.headers else None
    return problem_response(request, exc.status_code, detail, headers=headers)


def _jsonable_loc(loc: Any) -> list[str | int]:
    return [p if isinstance(p, int) else str(p) for p in loc]


async def _validation_handler(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    # Keep loc/msg/type only: "input" and "ctx" can hold bytes or exception objects.
    errors = [
        field_error(_jsonable_loc(e.get("loc", ())), str(e.get("msg", "")), str(e.get("type", "")))
        for e in exc.errors()
    ]
    fields = ", ".join(e["field"] for e in errors) or "request"
    return problem_response(
        request, 422, f"invalid request: {fields}", kind="validation-error", errors=errors
    )


async def _unhandled_handler(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return problem_response(request, 500, "internal error; see the server log", kind="internal")


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(ProblemError, _problem_handler)
    app.add_exception_handler(StarletteHTTPException, _http_handler)
    app.add_exception_handler(RequestValidationError, _validation_handler)
    app.add_exception_handler(Exception, _unhandled_handler)
