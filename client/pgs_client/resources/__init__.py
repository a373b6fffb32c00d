"""One class per resource of the API; each holds the client's transport."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def ident(obj: Any) -> int:
    """The id of a result object, or the id itself (so calls take either)."""
    return int(obj if isinstance(obj, int) else obj.id)


def model_ref(obj: Any) -> str:
    """A model as the path names it: its id, or ``name@alias`` (a string) as given."""
    return obj if isinstance(obj, str) else str(ident(obj))


def labels(description: str | None, tags: Sequence[str] | None, **more: Any) -> dict[str, Any]:
    """The label fields of a create or PATCH body that were given (None: leave as is)."""
    fields = {"description": description, "tags": None if tags is None else list(tags), **more}
    return {k: v for k, v in fields.items() if v is not None}
