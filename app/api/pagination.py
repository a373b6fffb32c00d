"""Keyset pagination: newest first, the cursor is the last id of the previous page."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query
from sqlalchemy import Select
from sqlalchemy.orm import Session

from app.core.errors import field_error, invalid

LimitQuery = Annotated[int, Query(ge=1, le=500, description="Page size")]
CursorQuery = Annotated[str | None, Query(description="Opaque cursor from the previous page's next_cursor")]


def paginate(
    session: Session, stmt: Select[Any], id_column: Any, limit: int, cursor: str | None
) -> tuple[list[Any], str | None]:
    """Rows of ``stmt`` ordered by id descending, after ``cursor``; and the next cursor."""
    if cursor is not None:
        # isascii: str.isdigit() also accepts digits such as "¹" that int() refuses; and a
        # cursor is an id, which fits in 63 bits.
        if not (cursor.isascii() and cursor.isdigit() and len(cursor) <= 18):
            msg = "not a cursor this API returned"
            raise invalid(msg, [field_error(["query", "cursor"], msg)])
        stmt = stmt.where(id_column < int(cursor))
    rows = list(session.scalars(stmt.order_by(id_column.desc()).limit(limit + 1)))
    more = len(rows) > limit
    rows = rows[:limit]
    return rows, (str(rows[-1].id) if more and rows else None)
