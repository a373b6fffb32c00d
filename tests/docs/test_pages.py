"""Every page's shell examples: the runnable ones run against a real service and answer what the
page shows, its Python blocks run after them (tests/docs/shell_blocks.py); the others (```sh
no-run) at least parse."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cluster.harness import REPO
from tests.docs.pages import PAGES
from tests.docs.shell_blocks import shell_blocks, syntax_error


@pytest.mark.parametrize("page", PAGES)
def test_every_shell_block_parses(page: str) -> None:
    errors = [f"line {b.line}: {e}" for b in shell_blocks(REPO / page) if (e := syntax_error(b))]
    assert not errors, "\n".join(errors)


@pytest.mark.system
def test_readme_quick_start_answers_as_shown(run_docs_page: Callable[..., None]) -> None:
    run_docs_page("README.md")


@pytest.mark.system
def test_tutorial_answers_as_shown(run_docs_page: Callable[..., None]) -> None:
    run_docs_page("docs/tutorial.md")


@pytest.mark.system
def test_client_readme_answers_as_shown(run_docs_page: Callable[..., None]) -> None:
    run_docs_page("client/README.md")


@pytest.mark.system
def test_auth_how_to_answers_as_shown(run_docs_page: Callable[..., None]) -> None:
    run_docs_page(
        "docs/how-to/auth.md",
        PGS_API_KEYS="ops:admin:key-admin-01,team-a:member:key-team-a-1,"
        "team-a:reader:key-reader-a1,team-b:member:key-team-b-1",
    )


@pytest.mark.system
def test_backup_how_to_answers_as_shown(
    run_docs_page: Callable[..., None], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The reader's shell has the service's settings, as the page asks: its data dir (where the
    # run_docs_page fixture starts it) and this checkout's code.
    monkeypatch.setenv("PGS_DATA_DIR", str(tmp_path / "service" / "var"))
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    run_docs_page("docs/how-to/backup.md")


@pytest.mark.system
@pytest.mark.parametrize(
    "page",
    [
        "docs/how-to/metrics.md",
        "docs/how-to/weights.md",
        "docs/how-to/batch-predictions.md",
        "docs/how-to/choose-sigma.md",
        "docs/how-to/read-coefficients.md",
        "docs/how-to/model-registry.md",
    ],
)
def test_how_to_answers_as_shown(run_docs_page: Callable[..., None], page: str) -> None:
    run_docs_page(page)


@pytest.mark.system
def test_storage_explanation_answers_as_shown(run_docs_page: Callable[..., None]) -> None:
    run_docs_page("docs/explanation/storage.md", PGS_WORKER_MEMORY_BYTES="40000")
