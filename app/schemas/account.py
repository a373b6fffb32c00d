"""Who is calling (``/v1/me``) and the audit log of writes (``/v1/audit``)."""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class CallerRead(BaseModel):
    owner: str = Field(description="The owner whose objects this key sees and creates")
    role: Literal["admin", "member", "reader"] = Field(
        description="admin: every owner's objects; member: its owner's; reader: reads and predicts only"
    )
    key_id: str = Field(description="The key's non-secret name, as the audit log records it")
    authenticated: bool = Field(description="False on a server without API keys (loopback only)")


class AuditEventRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    at: dt.datetime
    owner: str = Field(description="The owner of the object written")
    actor_owner: str
    actor_key: str
    actor_role: str
    action: Literal["create", "update", "delete"]
    resource: str = Field(description="dataset, upload, job, model, alias, study or batch_prediction")
    resource_id: str
    detail: dict[str, Any] | None = Field(default=None, description="The request's method, path and status")


class AuditList(BaseModel):
    items: list[AuditEventRead]
    next_cursor: str | None = Field(description="Pass as ?cursor= for the next page; null at the end")
