"""Records every successful write through the API in the audit log (app/services/audit.py).

One middleware instead of a call in each route, so a write route added later is logged without
anyone remembering to: a POST, PUT, PATCH or DELETE under /v1 that answers 2xx is a write, except
a prediction (a reader's POST that changes nothing) and the byte appends of a resumable upload
(its creation and its finish are logged, not each chunk). What was written comes from the path
(``/v1/<collection>/<id>/...``) or, for a create, from the ``id`` of the answer; whose object it
was comes from the lookup that loaded it (``request.state.object_owner``, set by app/api/deps.py),
else it is the caller's own.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.core.tenants import Caller
from app.db.engine import SessionFactory
from app.services import audit

log = logging.getLogger(__name__)

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
COLLECTIONS = {
    "datasets": "dataset",
    "uploads": "upload",
    "jobs": "job",
    "models": "model",
    "aliases": "alias",
    "studies": "study",
    "predictions": "batch_prediction",
}
_NOT_WRITES = [
    ("POST", re.compile(r"^/v1/models/[^/]+/predict$")),
    ("PATCH", re.compile(r"^/v1/uploads/[^/]+$")),
]
# A create's answer is a small JSON object; a larger one is not read for its id.
MAX_ANSWER_BYTES = 256 * 1024


def write_of(
    method: str, path: str, status: int, answer: bytes, location: str, owner: str
) -> audit.Write | None:
    """The write a request was, or None if it was not one."""
    if method not in WRITE_METHODS or not 200 <= status < 300 or not path.startswith("/v1/"):
        return None
    if any(method == m and rx.match(path) for m, rx in _NOT_WRITES):
        return None
    resource, resource_id, step = None, None, None
    segments = path[len("/v1/") :].strip("/").split("/")
    i = 0
    while i < len(segments):
        if segments[i] in COLLECTIONS and (i + 1 >= len(segments) or segments[i + 1] != "import"):
            resource = COLLECTIONS[segments[i]]
            resource_id = segments[i + 1] if i + 1 < len(segments) else None
            i += 2
        else:
            step = segments[i]
            i += 1
    if segments[:2] == ["datasets", "import"]:  # an import is an upload until it is parsed
        resource, resource_id, step = "upload", None, None
    if resource is None:
        return None
    if resource_id is None:  # a create: the new object's id is in its answer or its Location
        resource_id = _answer_id(answer) or location.rstrip("/").rsplit("/", 1)[-1] or None
    action = {"PUT": "update", "PATCH": "update", "DELETE": "delete"}.get(method, "create")
    if method == "POST" and step is not None:
        action = "update"
    detail = {"method": method, "path": path, "status": status}
    return audit.Write(action, resource, resource_id or "", owner, detail)


def _answer_id(answer: bytes) -> str | None:
    try:
        body = json.loads(answer) if answer else None
    except ValueError:
        return None
    ident = body.get("id") if isinstance(body, dict) else None
    return None if ident is None else str(ident)


class AuditMiddleware:
    def __init__(self, app: ASGIApp, factory: Callable[[], SessionFactory]) -> None:
        self.app = app
        # The app's session factory is made by the lifespan, after the middleware: read late.
        self.factory = factory

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in WRITE_METHODS:
            await self.app(scope, receive, send)
            return
        status, answer, location = 0, bytearray(), ""

        async def capture(message: Message) -> None:
            nonlocal status, location
            if message["type"] == "http.response.start":
                status = message["status"]
                location = Headers(raw=message.get("headers", [])).get("location", "")
            elif message["type"] == "http.response.body" and len(answer) < MAX_ANSWER_BYTES:
                answer.extend(message.get("body", b""))
            await send(message)

        await self.app(scope, receive, capture)
        state = scope.get("state") or {}
        caller: Caller | None = state.get("caller")
        if caller is None:
            return
        owner = state.get("object_owner", caller.owner)
        write = write_of(scope["method"], scope["path"], status, bytes(answer), location, owner)
        if write is None:
            return
        try:
            await run_in_threadpool(audit.record, self.factory(), caller, write)
        except Exception:  # the write itself succeeded: its answer is already sent
            log.exception("audit: %s %s by %s not recorded", write.action, write.resource, caller.key_id)
