"""The Markdown and number formats every table of docs/benchmarks.md shares."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable
from typing import Any


def _row(cells: Iterable[Any]) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def md_table(header: list[str], rows: Iterable[Iterable[Any]]) -> str:
    return "\n".join([_row(header), "|" + "---|" * len(header), *(_row(r) for r in rows)])


def sig3(x: float | None) -> str:
    """Seconds (or any positive figure) with 3 significant digits; '-' for none."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return "not reached" if math.isinf(x) else (f"{x:.3g}" if x < 100 else f"{x:.0f}")


def median_of(values: list[float]) -> float:
    return statistics.median(values) if values else math.nan


def approx(x: float) -> str:
    """Two significant digits, never in scientific notation: 0.057, 1.4, 97, 144, 1,529."""
    return f"{x:,.0f}" if abs(x) >= 10 else f"{x:.2g}"


def span(values: list[float], fmt: str | Callable[[float], str] = approx, sep: str = "-") -> str:
    """'lo-hi' of the values (a format spec or a function), or one value when they look the same;
    ``sep=" to "`` where a hyphen would read as a sign."""
    text = fmt if callable(fmt) else (lambda x: format(x, fmt))
    low, high = text(min(values)), text(max(values))
    return low if low == high else f"{low}{sep}{high}"
