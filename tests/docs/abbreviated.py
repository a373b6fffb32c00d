"""JSON as the docs abbreviate it, and whether a real answer fits it.

The docs show an answer shortened: ``{"id":1,...,"n_samples":270,...}``. Here ``...`` means

* in an object: other keys (an object lists only the keys it shows, in any order);
* as a value (``"params":...``): any value;
* in an array: other elements there (``[{...}, ..., {...}]``: the first and the last shown, any
  number between); an array without ``...`` has exactly the elements it shows;
* after a number (``0.8382...``): any number that, cut or rounded to the digits written,
  is that number;
* at the end of a string (``"5defa0a4..."``): any string that starts with what is written.

A number written without ``...`` must be equal; so must a string.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

ELLIPSIS = "..."
_TOKEN = re.compile(
    r"""\s*(?:
        (?P<string>"(?:[^"\\]|\\.)*")
      | (?P<number>-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)(?P<approx>\.\.\.)?
      | (?P<ellipsis>\.\.\.)
      | (?P<literal>true|false|null)
      | (?P<punct>[{}\[\]:,])
    )""",
    re.VERBOSE,
)


class Mismatch(AssertionError):
    """The answer does not fit the abbreviation; the message names where (``metrics.objective``)."""


@dataclass(frozen=True)
class Approx:
    """A number written as a prefix: the value cut there, or rounded there."""

    written: str

    def fits(self, value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        if (value < 0) != self.written.startswith("-"):
            return False
        unit = 10.0 ** -len(self.written.partition(".")[2])
        shown = abs(float(self.written))
        return shown - unit / 2 <= abs(value) < shown + unit


@dataclass(frozen=True)
class Prefix:
    """A string written with ``...`` before its closing quote."""

    start: str


@dataclass(frozen=True)
class Elided:
    """``...`` in a value's place, or among an array's elements."""


@dataclass(frozen=True)
class Members:
    """An object: the keys it shows."""

    items: dict[str, Any]


def parse(text: str) -> Any:
    """The pattern the abbreviated JSON ``text`` stands for; raises ValueError where it is not
    JSON with ``...``."""
    tokens = _tokens(text)
    try:
        pattern, end = _value(tokens, 0)
    except IndexError:
        raise ValueError(f"{text!r} ends inside an object or array") from None
    if end != len(tokens):
        raise ValueError(f"unexpected {tokens[end][1]!r} after the value in {text!r}")
    return pattern


def check(pattern: Any, actual: Any, where: str = "") -> None:
    """Raise :class:`Mismatch` unless ``actual`` (parsed JSON) fits ``pattern`` (:func:`parse`)."""
    place = where or "the answer"
    if isinstance(pattern, Elided):
        return
    if isinstance(pattern, Members):
        _check_object(pattern, actual, where)
    elif isinstance(pattern, list):
        _check_array(pattern, actual, where)
    elif isinstance(pattern, Approx):
        if not pattern.fits(actual):
            raise Mismatch(f"{place}: expected {pattern.written}..., got {actual!r}")
    elif isinstance(pattern, Prefix):
        if not (isinstance(actual, str) and actual.startswith(pattern.start)):
            raise Mismatch(f"{place}: expected a string starting {pattern.start!r}, got {actual!r}")
    elif not _same(pattern, actual):
        raise Mismatch(f"{place}: expected {pattern!r}, got {actual!r}")


def _same(expected: Any, actual: Any) -> bool:
    # The types too: True == 1 in Python, not in the answer a reader sees; 1 and 1.0 are one number.
    numbers = [isinstance(v, (int, float)) and not isinstance(v, bool) for v in (expected, actual)]
    if all(numbers):
        return bool(expected == actual)
    return type(expected) is type(actual) and expected == actual


def _check_object(pattern: Members, actual: Any, where: str) -> None:
    if not isinstance(actual, dict):
        raise Mismatch(f"{where or 'the answer'}: expected an object, got {actual!r}")
    for key, expected in pattern.items.items():
        path = f"{where}.{key}" if where else key
        if key not in actual:
            raise Mismatch(f"{path}: missing (the answer has {sorted(actual)})")
        check(expected, actual[key], path)


def _check_array(pattern: list[Any], actual: Any, where: str) -> None:
    place = where or "the answer"
    if not isinstance(actual, list):
        raise Mismatch(f"{place}: expected an array, got {actual!r}")
    cuts = [i for i, p in enumerate(pattern) if isinstance(p, Elided)]
    if len(cuts) > 1:
        raise ValueError(f"{place}: at most one ... per array")
    head, tail = (pattern[: cuts[0]], pattern[cuts[0] + 1 :]) if cuts else (pattern, [])
    if (cuts and len(actual) < len(head) + len(tail)) or (not cuts and len(actual) != len(head)):
        raise Mismatch(f"{place}: expected {len(pattern)} element(s) as shown, got {len(actual)}")
    for i, expected in enumerate(head):
        check(expected, actual[i], f"{where}[{i}]")
    for i, expected in enumerate(tail, start=len(actual) - len(tail)):
        check(expected, actual[i], f"{where}[{i}]")


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens, pos = [], 0
    while pos < len(text.rstrip()):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise ValueError(f"cannot read {text[pos : pos + 20]!r} in {text!r}")
        kind = match.lastgroup if match.lastgroup != "approx" else "number"
        value = match.group(kind or "")
        if kind == "number" and match.group("approx"):
            kind = "approx"
        tokens.append((kind or "", value))
        pos = match.end()
    return tokens


def _value(tokens: list[tuple[str, str]], i: int) -> tuple[Any, int]:
    if i >= len(tokens):
        raise ValueError("the text ends where a value should be")
    kind, text = tokens[i]
    if text == "{":
        return _members(tokens, i + 1)
    if text == "[":
        return _elements(tokens, i + 1)
    if kind == "ellipsis":
        return Elided(), i + 1
    if kind == "approx":
        return Approx(text), i + 1
    if kind == "string" and text.endswith(ELLIPSIS + '"'):
        return Prefix(json.loads(text[: -len(ELLIPSIS) - 1] + '"')), i + 1
    if kind in ("string", "number", "literal"):
        return json.loads(text), i + 1
    raise ValueError(f"unexpected {text!r} where a value should be")


def _members(tokens: list[tuple[str, str]], i: int) -> tuple[Members, int]:
    items: dict[str, Any] = {}
    while tokens[i][1] != "}":
        kind, text = tokens[i]
        if kind == "ellipsis":
            i += 1
        elif kind == "string" and tokens[i + 1][1] == ":":
            items[json.loads(text)], i = _value(tokens, i + 2)
        else:
            raise ValueError(f"unexpected {text!r} in an object")
        i = _after_item(tokens, i, "}")
    return Members(items), i + 1


def _elements(tokens: list[tuple[str, str]], i: int) -> tuple[list[Any], int]:
    items: list[Any] = []
    while tokens[i][1] != "]":
        item, i = _value(tokens, i)
        items.append(item)
        i = _after_item(tokens, i, "]")
    return items, i + 1


def _after_item(tokens: list[tuple[str, str]], i: int, close: str) -> int:
    """The index of the next item (past its comma) or of the closing bracket."""
    if tokens[i][1] == ",":
        return i + 1
    if tokens[i][1] != close:
        raise ValueError(f"expected ',' or {close!r}, got {tokens[i][1]!r}")
    return i
