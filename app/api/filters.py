"""Query parameters the list routes share: filters by tag and by name, a search, and a sort."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from fastapi import Query
from sqlalchemy import ColumnElement, or_

from app.core.errors import field_error, invalid

TagsQuery = Annotated[
    list[str] | None,
    Query(
        alias="tag", max_length=32, description="Only items with this tag; repeat for items with all of them"
    ),
]
NameQuery = Annotated[str | None, Query(max_length=255, description="Only items of this name")]
SearchQuery = Annotated[
    str | None,
    Query(
        min_length=1,
        max_length=255,
        description="Only items whose name (or other text the list names) contains this, any case",
    ),
]
SortQuery = Annotated[
    str | None,
    Query(
        max_length=40,
        description="Order by this field, descending with a leading '-' (e.g. name, -created_at); "
        "the list names its fields. Default: newest first",
    ),
]


def search_filter(columns: list[Any], text: str | None) -> list[ColumnElement[bool]]:
    """A condition matching rows where any of ``columns`` contains ``text`` (case-insensitive;
    % and _ are plain characters); none without ``text``."""
    if text is None:
        return []
    return [or_(*(column.icontains(text, autoescape=True) for column in columns))]


def sort_columns(sort: str | None, fields: Mapping[str, Any], id_column: Any) -> list[Any] | None:
    """The ORDER BY of ``sort`` over ``fields`` (ties broken by id in the same direction); None
    for the default order (newest first), which pages by id."""
    if sort in (None, "-id"):
        return None
    descending = sort.startswith("-")
    name = sort.removeprefix("-")
    allowed = {"id": id_column, **fields}
    if name not in allowed:
        msg = f"cannot sort by {name!r}: one of {', '.join(sorted(allowed))}, '-' in front for descending"
        raise invalid(msg, [field_error(["query", "sort"], msg)])
    column = allowed[name]
    if descending:
        return [column.desc().nulls_last(), id_column.desc()]
    return [column.asc().nulls_last(), id_column.asc()]
