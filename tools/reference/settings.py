"""docs/reference/settings.md: every field of ``app.core.config.Settings``, as an environment
variable with its type, default and description."""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any

import annotated_types
from pydantic import SecretStr
from pydantic.fields import FieldInfo

from tools.reference.markdown import code, header, number, table

INTRO = """\
The service reads these environment variables once, at start-up (`python -m app`, and each worker
process from the API's settings). Sizes are in bytes, times in seconds. What a caller sees when a
limit is hit: [limits.md](limits.md)."""

_TYPES = {int: "integer", float: "number", bool: "boolean", str: "string", Path: "path", SecretStr: "string"}
_BOUNDS = {
    annotated_types.Ge: (">=", "ge"),
    annotated_types.Gt: (">", "gt"),
    annotated_types.Le: ("<=", "le"),
    annotated_types.Lt: ("<", "lt"),
}


def page() -> str:
    from app.core.config import Settings

    prefix = Settings.model_config.get("env_prefix", "")
    rows = [
        [
            code(f"{prefix}{name.upper()}"),
            _type(name, field),
            _default(name, field),
            _description(name, field),
        ]
        for name, field in Settings.model_fields.items()
    ]
    settings_table = table(["variable", "type", "default", "what it does"], rows)
    return header("Settings", "app/core/config.py", INTRO) + "\n" + settings_table


def _description(name: str, field: FieldInfo) -> str:
    if not field.description:
        raise ValueError(f"Settings.{name} has no description: give it Field(description=...)")
    return field.description


def _type(name: str, field: FieldInfo) -> str:
    kinds = [a for a in typing.get_args(field.annotation) if a is not type(None)] or [field.annotation]
    if typing.get_origin(field.annotation) is typing.Literal:
        return "one of " + ", ".join(code(v) for v in typing.get_args(field.annotation))
    text = " or ".join(_TYPES[kind] for kind in kinds)
    for bound in field.metadata:
        symbol, attribute = _BOUNDS[type(bound)]
        text += f", {symbol} {_quantity(name, getattr(bound, attribute))}"
    return text


def _default(name: str, field: FieldInfo) -> str:
    if field.default_factory is not None:
        return "computed"
    value: Any = field.default
    if isinstance(value, SecretStr):
        value = value.get_secret_value()
    if value is None or value == "":
        return "unset" if value is None else "empty"
    if isinstance(value, bool):
        return code(str(value).lower())
    if isinstance(value, Path):
        return code(value if value.is_absolute() else f"./{value}")
    if name.endswith("_bytes") and isinstance(value, int) and value >= 1024:
        return f"{code(value)} ({_bytes(value)})"
    return code(number(value) if isinstance(value, (int, float)) else value)


def _quantity(name: str, value: float) -> str:
    """A bound: in KiB, MiB or GiB for a size."""
    if name.endswith("_bytes") and isinstance(value, int) and value >= 1024:
        return _bytes(value)
    return number(value)


def _bytes(size: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size / 2**20:.1f} MiB"
