"""``/v1/me`` (who the API key is) and ``/v1/audit`` (the log of writes, for admin keys)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

from pgs_client.convert import from_json
from pgs_client.operations import covers
from pgs_client.schemas import AuditEventRead, CallerRead
from pgs_client.transport import Transport


class Account:
    def __init__(self, transport: Transport):
        self._t = transport

    @covers("GET /v1/me")
    def me(self) -> CallerRead:
        """The key's owner and role (``authenticated`` False on a service without keys)."""
        return from_json(CallerRead, self._t.get("/v1/me"))

    @covers("GET /v1/audit")
    def audit(
        self,
        limit: int | None = None,
        *,
        owner: str | None = None,
        since: dt.datetime | str | None = None,
        until: dt.datetime | str | None = None,
        resource: str | None = None,
        action: str | None = None,
        page_size: int = 100,
    ) -> Iterator[AuditEventRead]:
        """The writes, newest first, a page at a time (an admin key's); only those to
        ``owner``'s objects, at or after ``since`` and before ``until``, to ``resource``
        ("job", "model", ...) and of ``action`` ("create", "update", "delete") when given."""
        return self._t.pages(
            "/v1/audit",
            lambda e: from_json(AuditEventRead, e),
            limit,
            page_size,
            owner=owner,
            since=_iso(since),
            until=_iso(until),
            resource=resource,
            action=action,
        )


def _iso(moment: dt.datetime | str | None) -> str | None:
    return moment.isoformat() if isinstance(moment, dt.datetime) else moment
