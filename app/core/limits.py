"""Rules every request body obeys, applied before any route sees it.

- Framing: a request with both Content-Length and Transfer-Encoding is refused (400, and the
  connection closed). h11 lets Transfer-Encoding win (RFC 9112 section 6.3), but a proxy in front
  may have used Content-Length: the disagreement is how requests are smuggled past a proxy.
- Time: a body may pause at most ``body_idle_timeout_s`` between two pieces, take at most
  ``body_timeout_s`` in all, and must keep up an average of ``min_body_bytes_per_s`` after a grace
  (:class:`BodyPace`) (408, and the connection closed). A slow sender otherwise holds a
  connection, and an upload's ``.part`` file, for as long as it likes: one byte every few
  seconds passes any idle timeout.
- Size and depth: uploads (``POST /v1/datasets``, streamed to disk with ``max_upload_bytes``;
  a resumable upload's ``PATCH /v1/uploads/{id}``, capped by the upload's length), predictions
  (``max_predict_bytes``, ``max_predict_rows``) and model imports (``POST /v1/models``,
  ``max_model_bytes``: a model the service exports imports back) have their own limits; every
  other body (job and study requests) is cut at ``max_body_bytes`` (413) before the route or
  FastAPI's body parsing buffers it, and a JSON body nested deeper than ``max_json_depth`` is a
  400 (serializing a 400-deep ``params`` for the idempotency hash failed with a 500).
"""

from __future__ import annotations

import math
import re
import time

import anyio
import numpy as np
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.core.config import Settings
from app.core.errors import ProblemError, problem_response

BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# A JSON string, escapes included: its content is not structure.
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_NOT_BRACKETS = bytes(sorted(set(range(256)) - set(b"[]{}")))


def _has_own_limit(method: str, path: str) -> bool:
    if method == "PATCH" and path.startswith("/v1/uploads/"):
        return True  # a resumable upload's bytes: the upload's length and quota cap them
    if method != "POST":
        return False
    return path.rstrip("/") in ("/v1/datasets", "/v1/models") or (
        path.startswith("/v1/models/") and path.endswith("/predict")
    )


def json_depth(body: bytes) -> int:
    """How deeply the arrays and objects of a JSON text nest (0 for a scalar)."""
    marks = np.frombuffer(_JSON_STRING.sub(b'""', body).translate(None, _NOT_BRACKETS), np.uint8)
    if marks.size == 0:
        return 0
    steps = np.where((marks == ord("[")) | (marks == ord("{")), 1, -1)
    return int(np.cumsum(steps).max())


class BodyPace:
    """Whether a body keeps up an average of ``bytes_per_s``: it starts ``grace_s`` seconds ahead,
    every second spent waiting for it puts it a second behind, and every byte ``1 / bytes_per_s``
    seconds ahead; it may wait for its next piece as long as it is ahead (Apache's
    mod_reqtimeout ``MinRate`` works so). Only waiting counts: time the server takes between two
    reads is not the client's. 0 bytes/s: no minimum."""

    def __init__(self, bytes_per_s: float, grace_s: float) -> None:
        self.bytes_per_s = bytes_per_s
        self._ahead_s = grace_s if bytes_per_s > 0 else math.inf

    def may_wait_s(self) -> float:
        """How long the next piece may take to come."""
        return max(self._ahead_s, 0.0)

    def arrived(self, n_bytes: int, waited_s: float) -> None:
        if self.bytes_per_s > 0:
            self._ahead_s += n_bytes / self.bytes_per_s - waited_s


class TimedReceive:
    """``receive`` with the body's idle and total time limits and its minimum pace (408); once the
    body has ended it passes through (a route may wait for the client's disconnect for as long as
    it likes)."""

    def __init__(self, receive: Receive, settings: Settings) -> None:
        self._receive = receive
        self._idle_s = settings.body_idle_timeout_s
        self._total_s = settings.body_timeout_s
        self._deadline = time.monotonic() + self._total_s
        self._pace = BodyPace(settings.min_body_bytes_per_s, settings.body_rate_grace_s)
        self._body_done = False

    async def __call__(self) -> Message:
        if self._body_done:
            return await self._receive()
        total_left = max(self._deadline - time.monotonic(), 0)
        pace_left = self._pace.may_wait_s()
        started = time.monotonic()
        with anyio.move_on_after(min(self._idle_s, total_left, pace_left)):
            message = await self._receive()
            self._pace.arrived(len(message.get("body", b"")), time.monotonic() - started)
            self._body_done = message["type"] != "http.request" or not message.get("more_body")
            return message
        if pace_left <= min(self._idle_s, total_left):
            raise _timeout(
                f"the request body arrived slower than {self._pace.bytes_per_s:g} bytes/s "
                "(PGS_MIN_BODY_BYTES_PER_S)"
            )
        if total_left <= self._idle_s:
            raise _timeout(f"the request body took longer than {self._total_s:g} s (PGS_BODY_TIMEOUT_S)")
        raise _timeout(f"the request body paused for more than {self._idle_s:g} s (PGS_BODY_IDLE_TIMEOUT_S)")


def _timeout(detail: str) -> ProblemError:
    return ProblemError(408, detail, kind="request-timeout", headers={"Connection": "close"})


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        if b"transfer-encoding" in headers and b"content-length" in headers:
            await self._problem(
                scope,
                receive,
                send,
                ProblemError(
                    400,
                    "send either Content-Length or Transfer-Encoding, not both",
                    kind="ambiguous-framing",
                    headers={"Connection": "close"},
                ),
            )
            return
        timed = TimedReceive(receive, self.settings)
        if scope["method"] not in BODY_METHODS or _has_own_limit(scope["method"], scope["path"]):
            await self.app(scope, timed, send)
            return
        try:
            body = await self._read(timed, headers)
            if body is None:
                return  # the client left
            self._check_depth(body, headers)
        except ProblemError as exc:
            await self._problem(scope, receive, send, exc)
            return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _read(self, receive: Receive, headers: dict[bytes, bytes]) -> bytes | None:
        """The (small) body, up to the limit; None if the client disconnected."""
        declared = headers.get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.settings.max_body_bytes:
            raise self._too_large()  # before reading a byte
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.settings.max_body_bytes:
                raise self._too_large()
            chunks.append(chunk)
            more = message.get("more_body", False)
        return b"".join(chunks)

    def _check_depth(self, body: bytes, headers: dict[bytes, bytes]) -> None:
        if not headers.get(b"content-type", b"").split(b";")[0].strip().endswith(b"json"):
            return
        depth, limit = json_depth(body), self.settings.max_json_depth
        if depth > limit:
            raise ProblemError(
                400,
                f"the JSON body nests {depth} levels deep; the limit is {limit} (PGS_MAX_JSON_DEPTH)",
                kind="json-too-deep",
            )

    def _too_large(self) -> ProblemError:
        return ProblemError(
            413,
            f"the request body exceeds {self.settings.max_body_bytes} bytes (PGS_MAX_BODY_BYTES)",
            kind="payload-too-large",
        )

    async def _problem(self, scope: Scope, receive: Receive, send: Send, exc: ProblemError) -> None:
        response = problem_response(
            Request(scope), exc.status, exc.detail, kind=exc.kind, headers=exc.headers
        )
        await response(scope, receive, send)
