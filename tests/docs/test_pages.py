"""Every page's shell examples: the runnable ones run against a real service and answer what the
page shows, its Python blocks run after them (tests/docs/shell_blocks.py); the others (```sh
no-run) at least parse. Which pages run, and why the others do not: tests/docs/pages.py."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.cluster.harness import REPO
from tests.docs.pages import NOT_RUN, PAGES, RUN
from tests.docs.shell_blocks import fenced_blocks, runnable_blocks, shell_blocks, syntax_error


@pytest.mark.parametrize("page", PAGES)
def test_every_shell_block_parses(page: str) -> None:
    errors = [f"line {b.line}: {e}" for b in shell_blocks(REPO / page) if (e := syntax_error(b))]
    assert not errors, "\n".join(errors)


def test_every_page_with_examples_is_run_or_says_why_not() -> None:
    with_blocks = {page for page in PAGES if fenced_blocks(REPO / page)}
    assert not set(RUN) & set(NOT_RUN), "a page is both run and not run"
    assert sorted(with_blocks - set(RUN) - set(NOT_RUN)) == [], "pages with examples in neither list"
    assert sorted((set(RUN) | set(NOT_RUN)) - with_blocks) == [], "listed pages without examples"
    assert [page for page in RUN if not runnable_blocks(REPO / page)] == [], "run pages with nothing to run"


@pytest.mark.system
@pytest.mark.parametrize("page", sorted(RUN))
def test_page_answers_as_shown(run_docs_page: Callable[..., None], page: str) -> None:
    run_docs_page(page, RUN[page])
