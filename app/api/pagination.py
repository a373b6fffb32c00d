"""Pagination: newest first by keyset (the cursor is the last id of the previous page); in any
other order (a list's ``sort``) by position (the cursor is "o" and the offset of the next page)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query
from sqlalchemy import Select
from sqlalchemy.orm import Session

from app.core.errors import field_error, invalid

LimitQuery = Annotated[int, Query(ge=1, le=500, description="Page size")]
CursorQuery = Annotated[str | None, Query(description="Opaque cursor from the previous page's next_cursor")]

# A cursor is an id or an offset, which fits in 63 bits.
MAX_DIGITS = 18


def _number(text: str) -> int:
    # isascii: str.isdigit() also accepts digits such as "¹" that int() refuses.
    if not (text.isascii() and text.isdigit() and len(text) <= MAX_DIGITS):
        msg = "not a cursor this API returned"
        raise invalid(msg, [field_error(["query", "cursor"], msg)])
    return int(text)


def paginate(
    session: Session,
    stmt: Select[Any],
    id_column: Any,
    limit: int,
    cursor: str | None,
    order: list[Any] | None = None,
) -> tuple[list[Any], str | None]:
    """Rows of ``stmt`` after ``cursor`` and the next cursor: ordered by id descending, or by
    ``order`` (app.api.filters.sort_columns) when given."""
    if order is not None:
        offset = 0 if cursor is None else _number(cursor.removeprefix("o") if cursor.startswith("o") else "x")
        rows = list(session.scalars(stmt.order_by(*order).offset(offset).limit(limit + 1)))
        more = len(rows) > limit
        return rows[:limit], (f"o{offset + limit}" if more else None)
    if cursor is not None:
        stmt = stmt.where(id_column < _number(cursor))
    rows = list(session.scalars(stmt.order_by(id_column.desc()).limit(limit + 1)))
    more = len(rows) > limit
    rows = rows[:limit]
    return rows, (str(rows[-1].id) if more and rows else None)
