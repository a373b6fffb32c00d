"""One class per resource of the API; each holds the client's transport."""

from __future__ import annotations

from typing import Any


def ident(obj: Any) -> int:
    """The id of a result object, or the id itself (so calls take either)."""
    return int(obj if isinstance(obj, int) else obj.id)
