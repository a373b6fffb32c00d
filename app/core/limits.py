"""A limit on request bodies for every route that does not stream its body with its own limit.

Uploads (``POST /v1/datasets``, streamed to disk with ``max_upload_bytes``) and predictions
(``max_predict_bytes``, ``max_predict_rows``) have their own; every other body (job requests and
whatever JSON a route takes) is cut at ``max_body_bytes`` with a 413 problem+json, before the
route or FastAPI's body parsing buffers it.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.core.errors import problem_response

BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def _has_own_limit(method: str, path: str) -> bool:
    if method != "POST":
        return False
    return path.rstrip("/") == "/v1/datasets" or (
        path.startswith("/v1/models/") and path.endswith("/predict")
    )


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (scope["type"] != "http" or scope["method"] not in BODY_METHODS
                or _has_own_limit(scope["method"], scope["path"])):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.max_bytes:
            await self._too_large(scope, receive, send)
            return
        # Read the (small) body here, up to the limit, then replay it to the app.
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await self._too_large(scope, receive, send)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = problem_response(
            Request(scope), 413, f"the request body exceeds the limit of {self.max_bytes} bytes",
            kind="payload-too-large",
        )
        await response(scope, receive, send)
