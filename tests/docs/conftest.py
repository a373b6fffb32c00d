"""The docs' examples against a real service: ``python -m app`` on a free loopback port with a
fresh data dir per page (so the ids a page shows are those of a fresh service), its commands run
from a working directory of their own that sees the repository's ``examples/``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cluster.harness import REPO, running_service
from tests.docs.shell_blocks import run_page, run_python


@pytest.fixture
def run_docs_page(tmp_path: Path) -> Callable[..., None]:
    """``run_docs_page("README.md", PGS_X="...")``: the page's commands, then its Python blocks,
    against a fresh service started with that environment."""

    def run(page: str, **env: str) -> None:
        workdir = tmp_path / "reader"
        workdir.mkdir()
        (workdir / "examples").symlink_to(REPO / "examples")
        with running_service(tmp_path / "service", **env) as server:
            run_page(REPO / page, server.base, workdir)
            run_python(REPO / page, server.base, workdir)

    return run
