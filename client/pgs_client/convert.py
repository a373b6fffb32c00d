"""JSON answers to the typed result objects (dataclasses), lists of them to DataFrames, and a
solver's typed parameters (``schemas.PGSParams``, ...) to a request's ``params``."""

from __future__ import annotations

import dataclasses
import datetime as dt
import keyword
import types
import typing
from typing import Any, TypeVar

T = TypeVar("T")


def from_json(cls: type[T], data: dict[str, Any]) -> T:
    """Build ``cls`` from a JSON object, nested objects included. Fields the client does not
    know are left out, so a newer service that adds fields does not break an older client."""
    hints = typing.get_type_hints(cls)
    known = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    fields = {_field_name(name): value for name, value in data.items()}
    return cls(**{name: _value(hints[name], value) for name, value in fields.items() if name in known})


def _field_name(key: str) -> str:
    """The dataclass field of a JSON key: a Python keyword ("class") gets a trailing
    underscore, as the generator names it."""
    return key + "_" if keyword.iskeyword(key) else key


def _value(tp: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(tp):
            if _fits(arg, value):
                return _value(arg, value)
        return value
    if origin is list and isinstance(value, list):
        (item,) = typing.get_args(tp) or (Any,)
        return [_value(item, v) for v in value]
    if dataclasses.is_dataclass(tp) and isinstance(value, dict):
        return from_json(tp, value)  # type: ignore[arg-type]
    if tp is dt.datetime and isinstance(value, str):
        return dt.datetime.fromisoformat(value)
    return value


def _fits(tp: Any, value: Any) -> bool:
    """Whether a member of a union is the one to convert ``value`` with."""
    if dataclasses.is_dataclass(tp):
        return isinstance(value, dict)
    if typing.get_origin(tp) is list:
        return isinstance(value, list)
    return tp is dt.datetime and isinstance(value, str)


def params_json(params: Any) -> dict[str, Any]:
    """A job's ``params`` (or ``selection``): a mapping as it is, or of a ``<Solver>Params`` (a
    ``Selection``) the fields set to other
    than their defaults (a field without one, such as ``loss``, whose default depends on the task,
    is None until set). Sending only those leaves the rest to the service, which applies the same
    defaults."""
    if params is None:
        return {}
    if dataclasses.is_dataclass(params) and not isinstance(params, type):
        return {
            field.name: getattr(params, field.name)
            for field in dataclasses.fields(params)
            if getattr(params, field.name) != field.default
        }
    return dict(params)


def to_frame(items: list[Any]) -> Any:
    """A pandas DataFrame with one row per result object (trace points, study rows, ...)."""
    import pandas as pd

    return pd.DataFrame([dataclasses.asdict(item) for item in items])
