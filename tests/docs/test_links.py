"""Every relative link of the Markdown pages reaches a file, and its ``#anchor`` a heading of that
page, named as GitHub names it (the heading's text in lower case, punctuation dropped, spaces as
hyphens, a repeated one numbered)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.cluster.harness import REPO
from tests.docs.pages import PAGES

_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_CODE_SPAN = re.compile(r"`[^`]*`")


def _prose_lines(page: Path) -> list[tuple[int, str]]:
    """The page's lines outside fenced code blocks, with their numbers."""
    lines, fenced = [], False
    for number, line in enumerate(page.read_text().splitlines(), start=1):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            lines.append((number, line))
    return lines


def links(page: Path) -> list[tuple[int, str]]:
    """(line, target) of the page's relative links, those in code spans left out; a link's text
    may go on over lines."""
    lines = dict(_prose_lines(page))
    prose = "\n".join(_CODE_SPAN.sub("", lines.get(n, "")) for n in range(1, max(lines, default=0) + 1))
    return [
        (prose.count("\n", 0, link.start()) + 1, link.group(1))
        for link in _LINK.finditer(prose)
        if not re.match(r"[a-z]+:", link.group(1))
    ]


def slug(heading: str) -> str:
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found, counts = set(), dict[str, int]()
    for _, line in _prose_lines(page):
        heading = re.match(r"#{1,6} (.+)", line)
        if heading:
            name = slug(heading.group(1))
            repeats = counts.get(name, 0)
            found.add(f"{name}-{repeats}" if repeats else name)
            counts[name] = repeats + 1
    return found


def broken(page: str) -> dict[str, str]:
    """The page's links that reach no file, or no heading of it: target -> what is wrong."""
    found = {}
    for number, target in links(REPO / page):
        path, _, anchor = target.partition("#")
        file = (REPO / page).parent / path if path else REPO / page
        if not file.exists():
            found[target] = f"line {number}: no such file"
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            found[target] = f"line {number}: no heading #{anchor} in {file.relative_to(REPO)}"
    return found


@pytest.mark.parametrize("page", PAGES)
def test_every_relative_link_reaches_a_file_and_a_heading(page: str) -> None:
    assert broken(page) == {}


def test_slugs_and_anchors_are_githubs(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# Training from shards (data larger than memory)\n\n## The `pgs` command\n\n"
        "## Notes\n\n## Notes\n\n```sh\n# not a heading\n```\n\n"
        "[x](#notes-1) and `[y](missing.md)`, [a\nb](c.md)\n"
    )
    assert anchors(page) == {
        "training-from-shards-data-larger-than-memory",
        "the-pgs-command",
        "notes",
        "notes-1",
    }
    assert links(page) == [(13, "#notes-1"), (13, "c.md")]
