"""The repository's Markdown pages that the docs tests read."""

from __future__ import annotations

from tests.cluster.harness import REPO

PAGES = sorted(
    str(p.relative_to(REPO))
    for p in [
        REPO / "README.md",
        REPO / "CONTRIBUTING.md",
        REPO / "client" / "README.md",
        *REPO.glob("docs/**/*.md"),
    ]
)
