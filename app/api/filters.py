"""Query parameters the list routes share: filters by tag and by name."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query

TagsQuery = Annotated[
    list[str] | None,
    Query(
        alias="tag", max_length=32, description="Only items with this tag; repeat for items with all of them"
    ),
]
NameQuery = Annotated[str | None, Query(max_length=255, description="Only items of this name")]
