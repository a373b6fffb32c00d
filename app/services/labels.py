"""The labels every resource carries (name, description, tags): filtering lists by tag and
applying a PATCH of them."""

from __future__ import annotations

from typing import Any

from sqlalchemy import String, cast


def tag_filter(column: Any, tags: list[str]) -> list[Any]:
    """Conditions on a JSON tag list holding every one of ``tags``. A tag has no quote or
    backslash (app.schemas.common.Tag), so it is stored as exactly ``"tag"`` in the list's JSON text."""
    return [cast(column, String).contains(f'"{tag}"', autoescape=True) for tag in tags]


def apply_changes(row: Any, changes: dict[str, Any]) -> None:
    for field, value in changes.items():
        setattr(row, field, value)
