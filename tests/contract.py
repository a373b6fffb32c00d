"""The OpenAPI document is the contract: every answer the tests get from the service must be one
it documents.

Every response a test receives through httpx (Starlette's TestClient is an httpx client, and so
are the client package and the harness's clients) is recorded as (method, path, status, media
type); the schemathesis run feeds its answers in by hand (it uses requests). At the end of the
session each answer is matched to its operation in the live app's document, and an operation
that answered a status or content type the document does not list fails the run
(tests/conftest.py). Only what was produced is checked, so any subset of the tests works; the
documented answers no test produced are reported, not failed (error paths such as a full disk
are reached by a few tests only).
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import httpx

METHODS = ("get", "put", "post", "delete", "patch", "head", "options")


@dataclass(frozen=True, order=True)
class Answer:
    """One answer of one operation: ``GET /v1/jobs/{job_id}`` 404 application/problem+json."""

    method: str
    path: str  # the operation's path template
    status: int
    media_type: str | None  # None for a body-less answer (204)

    def __str__(self) -> str:
        return f"{self.method} {self.path} {self.status} {self.media_type or '(no body)'}"


def documented_answers(spec: dict[str, Any]) -> set[Answer]:
    """Every (operation, status, media type) the document lists."""
    out: set[Answer] = set()
    for path, item in spec["paths"].items():
        for method, op in item.items():
            if method not in METHODS:
                continue
            for status, response in op["responses"].items():
                media_types = list(response.get("content") or {}) or [None]
                out.update(Answer(method.upper(), path, int(status), m) for m in media_types)
    return out


def media_type_of(content_type: str | None) -> str | None:
    return content_type.split(";", 1)[0].strip().lower() if content_type else None


@dataclass
class ContractRecorder:
    """Answers as the tests saw them, checked against a document at the end."""

    seen: set[tuple[str, str, int, str | None]] = field(default_factory=set)

    def record(self, method: str, path: str, status: int, content_type: str | None) -> None:
        self.seen.add((method.upper(), path, status, media_type_of(content_type)))

    def record_httpx(self, response: httpx.Response) -> None:
        request = response.request
        self.record(
            request.method, request.url.path, response.status_code, response.headers.get("content-type")
        )

    def check(self, spec: dict[str, Any]) -> Report:
        templates = _Templates(spec)
        produced: set[Answer] = set()
        for method, path, status, media_type in self.seen:
            template = templates.match(method, path)
            if template is not None:  # not an operation of the API (the console, /docs, a 405)
                produced.add(Answer(method, template, status, media_type))
        return Report(produced, documented_answers(spec))


@dataclass(frozen=True)
class Report:
    produced: set[Answer]
    documented: set[Answer]

    @cached_property
    def undocumented(self) -> list[Answer]:
        return sorted(self.produced - self.documented)

    @cached_property
    def unexercised(self) -> list[Answer]:
        return sorted(self.documented - self.produced)

    def summary(self) -> str:
        operations = {(a.method, a.path) for a in self.produced}
        statuses = {(a.method, a.path, a.status) for a in self.documented}
        produced = {(a.method, a.path, a.status) for a in self.produced}
        return (
            f"contract: {len(self.produced)} distinct answers of {len(operations)} operations "
            f"checked against the OpenAPI document, {len(self.undocumented)} undocumented; "
            f"these tests produced {len(statuses & produced)} of the {len(statuses)} "
            "documented (operation, status) pairs"
        )


class _Templates:
    """Maps a request's path to the template of the operation it reached."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self._paths: list[tuple[re.Pattern[str], str, set[str]]] = []
        for path, item in spec["paths"].items():
            pattern = re.compile("^" + re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(path)) + "$")
            self._paths.append((pattern, path, {m.upper() for m in item if m in METHODS}))
        # Literal segments first: /v1/jobs/x/trace is not /v1/jobs/{job_id} (Starlette's order
        # would say the same for this API's paths).
        self._paths.sort(key=lambda entry: entry[1].count("{"))

    def match(self, method: str, path: str) -> str | None:
        return next(
            (
                template
                for pattern, template, methods in self._paths
                if method in methods and pattern.match(path)
            ),
            None,
        )


def live_spec() -> dict[str, Any]:
    """The document of the app as the service builds it (nothing starts: no lifespan)."""
    from app.main import create_app
    from tests.helpers import make_settings

    with tempfile.TemporaryDirectory() as root:
        return create_app(make_settings(Path(root))).openapi()


RECORDER = ContractRecorder()


def install_httpx_recording() -> None:
    """Record every answer received through httpx, sync or async, for the rest of the process."""
    send, async_send = httpx.Client.send, httpx.AsyncClient.send

    def recording_send(self: httpx.Client, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        response = send(self, request, **kwargs)
        RECORDER.record_httpx(response)
        return response

    async def recording_async_send(
        self: httpx.AsyncClient, request: httpx.Request, **kwargs: Any
    ) -> httpx.Response:
        response = await async_send(self, request, **kwargs)
        RECORDER.record_httpx(response)
        return response

    httpx.Client.send = recording_send  # type: ignore[method-assign]
    httpx.AsyncClient.send = recording_async_send  # type: ignore[method-assign]
