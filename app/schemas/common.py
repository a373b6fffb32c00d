"""Field types every resource shares: tasks and labels, names, descriptions and tags, and the
PATCH of those labels."""

from __future__ import annotations

import unicodedata
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
)

Task = Literal["binary", "multiclass", "regression"]
Label = int | float | str

# -- names, descriptions, tags (app/services/labels.py) ----------------------------------------

# Tags are plain tokens ("team=nlp", "prod", "v1.2"): no quotes or spaces, so a list filter can
# match one inside the stored JSON list exactly.
Tag = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:=/+-]{0,63}$")]


# A model name is a path segment of name@alias: no "@", "/" or spaces, and not all digits (an
# all-digit reference is a model id).
def _not_all_digits(name: str) -> str:
    if name.isdigit():
        raise ValueError("a model name is not all digits (that is a model id)")
    return name


ModelName = Annotated[
    str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$"), AfterValidator(_not_all_digits)
]
AliasName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")]
Description = Annotated[str, StringConstraints(max_length=4000)]


def _distinct_tags(tags: list[str] | None) -> list[str] | None:
    if tags is not None and len(set(tags)) != len(tags):
        raise ValueError("tags must be distinct")
    return tags


Tags = Annotated[list[Tag], Field(max_length=32), AfterValidator(_distinct_tags)]


MAX_NAME_CHARS = 255
# Control characters (NUL, the ESC of terminal escape sequences, C1 codes), line or paragraph
# separators, and format characters (bidirectional overrides such as U+202E, zero-width spaces
# and joiners): a name is shown in listings, logs and the console, where these would forge or
# break lines, or show "invoice\u202etxt.exe" as "invoiceexe.txt".
_UNPRINTABLE = {
    "Cc": "control character",
    "Zl": "line separator",
    "Zp": "paragraph separator",
    "Cf": "format character",
}


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a data set, or None."""
    if len(name) > MAX_NAME_CHARS:
        return f"has {len(name)} characters; the limit is {MAX_NAME_CHARS}"
    bad = next((c for c in name if unicodedata.category(c) in _UNPRINTABLE), None)
    if bad is not None:
        return f"contains the {_UNPRINTABLE[unicodedata.category(bad)]} U+{ord(bad):04X}"
    return None


def check_printable_name(value: str | None) -> str | None:
    """``value`` unless :func:`name_problem` finds one (a pydantic validator)."""
    problem = None if value is None else name_problem(value)
    if problem:
        raise ValueError(f"the name {problem}")
    return value


PrintableName = Annotated[
    str, StringConstraints(min_length=1, max_length=MAX_NAME_CHARS), AfterValidator(check_printable_name)
]


class LabelsPatch(BaseModel):
    """What every PATCH may change; a field left out stays as it is, null clears it."""

    model_config = ConfigDict(extra="forbid")

    description: Description | None = None
    tags: Tags | None = None

    def changes(self) -> dict[str, Any]:
        """The fields the request set (null tags mean no tags)."""
        out = self.model_dump(exclude_unset=True)
        if "tags" in out and out["tags"] is None:
            out["tags"] = []
        return out
