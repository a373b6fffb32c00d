"""The Markdown the generated pages share."""

from __future__ import annotations

from collections.abc import Sequence


def header(title: str, source: str, intro: str) -> str:
    """A page's title, the note that it is generated (and from what), and its first paragraph."""
    return (
        f"# {title}\n\n"
        f"<!-- Generated from {source} by `python -m tools.reference` (make docs): edit the code,"
        " not this page. -->\n\n"
        f"{intro}\n"
    )


def table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A table; a ``|`` or a line break in a cell would end it, so they are escaped and joined."""
    lines = [_row(head), _row(["---"] * len(head))]
    lines += [_row([cell.replace("|", "\\|").replace("\n", " ") for cell in row]) for row in rows]
    return "\n".join(lines) + "\n"


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def code(text: object) -> str:
    return f"`{text}`"


def number(value: float) -> str:
    """Short (86400, 1e+12), unless that would round it (4294967295)."""
    short = f"{value:g}"
    return short if float(short) == value else str(value)
