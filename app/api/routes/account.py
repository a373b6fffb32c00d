"""/v1/me, who a key is; /v1/audit, the log of writes (admins only)."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from app.api.deps import CallerDep, SessionDep
from app.api.openapi import example, problems
from app.api.pagination import CursorQuery, LimitQuery, paginate
from app.core.errors import ProblemError
from app.db.tables import AuditEvent
from app.schemas.account import AuditList, CallerRead
from app.services import audit

router = APIRouter(prefix="/v1", tags=["account"])

_AUDIT_EVENT = {
    "id": 7,
    "at": "2026-11-27T10:15:00Z",
    "owner": "team-a",
    "actor_owner": "team-a",
    "actor_key": "key:3f2a9c1b7d4e5f60",
    "actor_role": "member",
    "action": "create",
    "resource": "job",
    "resource_id": "12",
    "detail": {"method": "POST", "path": "/v1/jobs", "status": 202},
}


@router.get(
    "/me",
    response_model=CallerRead,
    summary="Who this API key is: its owner and role",
    responses=example(
        200, {"owner": "team-a", "role": "member", "key_id": "key:3f2a9c1b7d4e5f60", "authenticated": True}
    ),
)
def me(caller: CallerDep) -> dict[str, Any]:
    return {
        "owner": caller.owner,
        "role": caller.role,
        "key_id": caller.key_id,
        "authenticated": caller.key_id != "anonymous",
    }


OwnerQuery = Annotated[str | None, Query(max_length=64, description="Only writes to this owner's objects")]
SinceQuery = Annotated[dt.datetime | None, Query(description="Only writes at or after this time (ISO 8601)")]
UntilQuery = Annotated[dt.datetime | None, Query(description="Only writes before this time (ISO 8601)")]
ResourceQuery = Annotated[str | None, Query(max_length=32, description="Only writes to this kind of object")]
ActionQuery = Annotated[Literal["create", "update", "delete"] | None, Query(description="Only this action")]


@router.get(
    "/audit",
    response_model=AuditList,
    summary="The audit log of writes, newest first (admins only)",
    responses={**example(200, {"items": [_AUDIT_EVENT], "next_cursor": "6"}), **problems(403)},
)
def audit_log(
    session: SessionDep,
    caller: CallerDep,
    owner: OwnerQuery = None,
    since: SinceQuery = None,
    until: UntilQuery = None,
    resource: ResourceQuery = None,
    action: ActionQuery = None,
    limit: LimitQuery = 50,
    cursor: CursorQuery = None,
) -> dict[str, Any]:
    if not caller.is_admin:
        raise ProblemError(403, "the audit log is for admin keys", kind="forbidden")
    where = audit.AuditFilter(owner, since, until, resource, action)
    items, next_cursor = paginate(session, audit.events(where), AuditEvent.id, limit, cursor)
    return {"items": items, "next_cursor": next_cursor}
