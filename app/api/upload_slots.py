"""At most ``max_concurrent_uploads_per_owner`` upload bodies of one owner are received at once
(``POST /v1/datasets`` and a resumable upload's ``PATCH /v1/uploads/{id}``): each holds a
connection and a file being written, and one owner's many slow uploads would otherwise hold as
many as it can open. One more is a 429 with Retry-After before its body is read; other owners
are not affected. The slots are :class:`app.background.slots.FairSlots`, taken without waiting.
"""

from __future__ import annotations

import re

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from app.background.slots import FairSlots
from app.core.errors import problem_response
from app.core.tenants import Caller

# Uploads are long: retrying sooner would mostly find the same ones still running.
RETRY_AFTER_S = 5
_PATCH_UPLOAD = re.compile(r"^/v1/uploads/[^/]+$")
# The 429 of the upload operations, in the OpenAPI document.
TOO_MANY_UPLOADS = (
    429,
    "The owner is already sending PGS_MAX_CONCURRENT_UPLOADS_PER_OWNER uploads; retry after "
    "Retry-After seconds",
)


def is_upload(method: str, path: str) -> bool:
    if method == "PATCH":
        return _PATCH_UPLOAD.match(path) is not None
    return method == "POST" and path.rstrip("/") == "/v1/datasets"


class UploadSlotsMiddleware:
    """Runs inside AuthMiddleware, which puts the caller into the scope."""

    def __init__(self, app: ASGIApp, per_owner: int) -> None:
        self.app = app
        self.per_owner = per_owner
        self.slots = FairSlots(per_owner=per_owner)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        caller: Caller | None = (scope.get("state") or {}).get("caller")
        if scope["type"] != "http" or caller is None or not is_upload(scope["method"], scope["path"]):
            await self.app(scope, receive, send)
            return
        with self.slots.slot_if_free(caller.owner) as free:
            if free:
                await self.app(scope, receive, send)
                return
        response = problem_response(
            Request(scope),
            429,
            f"owner {caller.owner!r} is already sending {self.per_owner} upload(s) "
            "(PGS_MAX_CONCURRENT_UPLOADS_PER_OWNER); retry when one has ended",
            kind="too-many-uploads",
            headers={"Retry-After": str(RETRY_AFTER_S)},
        )
        await response(scope, receive, send)
