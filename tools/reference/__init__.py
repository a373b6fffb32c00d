"""The reference pages that are generated from the code, so that they cannot disagree with it:
the endpoints from the OpenAPI document, the settings from ``Settings``, the solver parameters
from the solvers' declarations, the ``pgs`` commands from the client's typer app.
``python -m tools.reference`` (``make docs``) writes them; ``--check`` (and
tests/docs/test_reference.py) fails when a page differs from what the code gives.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tools.reference import cli, endpoints, settings, solvers

PAGES: dict[str, Callable[[], str]] = {
    "docs/reference/cli.md": cli.page,
    "docs/reference/endpoints.md": endpoints.page,
    "docs/reference/settings.md": settings.page,
    "docs/reference/solver-parameters.md": solvers.page,
}


def generate() -> dict[str, str]:
    """Every generated page's text, by its path in the repository."""
    return {path: make() for path, make in PAGES.items()}


def stale(root: Path, pages: dict[str, str]) -> list[str]:
    """The pages whose file under ``root`` is missing or differs from ``pages``."""
    return [path for path, text in pages.items() if _read(root / path) != text]


def write(root: Path, pages: dict[str, str]) -> list[str]:
    """Write the stale pages; returns their paths."""
    changed = stale(root, pages)
    for path in changed:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(pages[path])
    return changed


def _read(path: Path) -> str | None:
    return path.read_text() if path.exists() else None
