"""The docs' examples against a real service: ``python -m app`` on a free loopback port with a
fresh data dir per page (so the ids a page shows are those of a fresh service), its commands run
from a working directory of their own that sees the repository's ``examples/``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cluster.harness import REPO, running_service
from tests.docs.pages import Run
from tests.docs.shell_blocks import run_page, run_python


@pytest.fixture
def run_docs_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """``run_docs_page("README.md", Run(...))``: the page's commands, then its Python blocks,
    against a fresh service started with the settings the page needs."""

    def run(page: str, needs: Run) -> None:
        workdir, service = tmp_path / "reader", tmp_path / "service"
        workdir.mkdir()
        (workdir / "examples").symlink_to(REPO / "examples")

        def expand(env: dict[str, str]) -> dict[str, str]:
            places = {"service": str(service), "reader": str(workdir), "repo": str(REPO)}
            return {name: value.format(**places) for name, value in env.items()}

        for name, value in expand(needs.reader).items():
            monkeypatch.setenv(name, value)
        with running_service(service, **expand(needs.service)) as server:
            run_page(REPO / page, server.base, workdir)
            run_python(REPO / page, server.base, workdir)

    return run
