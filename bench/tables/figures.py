"""Figures for the prose of docs/benchmarks.md, each drawn from a record.

The template writes ``{{= NAME.FIGURE ARG ... }}``; ``python -m bench.report`` renders it with
the function the family module registered for (the record's benchmark, FIGURE), given the
record's ``results`` and the arguments (data sets as ``set`` or ``set:sigma``, methods by short
keys, sizes). The figures every record has, whatever its benchmark, are here: its load average
and its duration. This module also holds the helpers the families share: which cases a selector
names, and how a range, a count and a list of cases read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .format import span

# (results, *arguments) -> text
Figure = Callable[..., str]


def sigma_text(sigma: float) -> str:
    """1e-05 as the prose writes it, 1e-5."""
    mantissa, exponent = f"{sigma:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def matches(case: dict, selector: str, key: str = "set", by: str = "sigma") -> bool:
    """Whether a case is the one a selector names: 'a9a' (any sigma) or 'a9a:1e-5'."""
    name, _, value = selector.partition(":")
    return case[key] == name and (not value or case[by] == float(value))


def select(cases: list[dict], selectors: Iterable[str], key: str = "set", by: str = "sigma") -> list[dict]:
    """The cases the selectors name, in the record's order; every case without selectors."""
    selectors = list(selectors)
    if not selectors:
        return cases
    for selector in selectors:
        if not any(matches(case, selector, key, by) for case in cases):
            raise KeyError(f"no case {selector!r} in the record")
    return [case for case in cases if any(matches(case, s, key, by) for s in selectors)]


def listing(items: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'; 'none' for no items."""
    if not items:
        return "none"
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def case_names(
    chosen: list[dict],
    cases: list[dict],
    key: str = "set",
    by: str = "sigma",
    note: Callable[[dict], str] | None = None,
) -> str:
    """The chosen cases by name: a set alone where all its cases are chosen, else 'set 1e-5';
    with ``note``, each name followed by its cases' notes: 'agaricus (0.85, 0.75)'."""
    names = []
    for name in dict.fromkeys(case[key] for case in chosen):
        mine = [c for c in chosen if c[key] == name]
        whole = len(mine) == sum(c[key] == name for c in cases)
        if note:
            label = name if whole else f"{name} " + ", ".join(sigma_text(c[by]) for c in mine)
            names.append(f"{label} ({', '.join(note(c) for c in mine)})")
        else:
            names += [name] if whole else [f"{name} {sigma_text(c[by])}" for c in mine]
    return listing(names)


def ratio_span(values: list[float], fmt: str = ".2f") -> str:
    return span(values, fmt) + "x"


def count(met: int, cases: int) -> str:
    return f"{met} of {cases}"


def thousands(n: float) -> str:
    """A count to 3 significant digits with thousands separators: 107,246 -> 107,000."""
    digits = len(str(int(abs(n)))) if n >= 1 else 1
    return f"{round(n, min(0, 3 - digits)):,.0f}"


def _load(record: dict) -> str:
    load = record["load_average"]
    return f"{load['start'][0]:.1f} at the start and {load['end'][0]:.1f} at the end"


def _minutes(record: dict) -> str:
    return f"{record['wall_seconds'] / 60:.2g} minutes"


# Figures of every record, from its envelope rather than its results.
RECORD_FIGURES: dict[str, Callable[[dict], str]] = {"load": _load, "minutes": _minutes}
