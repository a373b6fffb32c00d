"""The audit log: every write through the API (who created, changed or deleted what, and when),
readable by admins (``GET /v1/audit``). The HTTP layer records the events
(app/api/audit.py); this module stores and lists them."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, select

from app.core.tenants import Caller
from app.db.engine import SessionFactory, transaction
from app.db.tables import AuditEvent


@dataclass(frozen=True)
class Write:
    """One write, as the HTTP layer saw it."""

    action: str  # "create", "update" or "delete"
    resource: str
    resource_id: str
    owner: str  # the owner of the object written
    detail: dict[str, Any]


def record(factory: SessionFactory, caller: Caller, write: Write) -> None:
    with transaction(factory) as s:
        s.add(
            AuditEvent(
                owner=write.owner,
                actor_owner=caller.owner,
                actor_key=caller.key_id,
                actor_role=caller.role,
                action=write.action,
                resource=write.resource,
                resource_id=write.resource_id,
                detail=write.detail,
            )
        )


@dataclass(frozen=True)
class AuditFilter:
    owner: str | None = None
    since: dt.datetime | None = None
    until: dt.datetime | None = None
    resource: str | None = None
    action: str | None = None


def events(where: AuditFilter) -> Select[Any]:
    """The events that match ``where`` (the route pages through them, newest first)."""
    stmt = select(AuditEvent)
    if where.owner is not None:
        stmt = stmt.where(AuditEvent.owner == where.owner)
    if where.since is not None:
        stmt = stmt.where(AuditEvent.at >= where.since)
    if where.until is not None:
        stmt = stmt.where(AuditEvent.at < where.until)
    if where.resource is not None:
        stmt = stmt.where(AuditEvent.resource == where.resource)
    if where.action is not None:
        stmt = stmt.where(AuditEvent.action == where.action)
    return stmt
