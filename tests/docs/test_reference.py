"""The generated reference pages (tools/reference) say what the code says: a page that differs
from what ``python -m tools.reference`` would write fails here until ``make docs`` is run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.core.config import Settings
from tests.cluster.harness import REPO
from tools.reference import generate, stale, write


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return generate()


def test_the_generated_pages_are_up_to_date(pages: dict[str, str]) -> None:
    assert stale(REPO, pages) == [], "run make docs"


def test_a_changed_or_missing_page_is_stale_until_written_again(
    pages: dict[str, str], tmp_path: Path
) -> None:
    for path in pages:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / path, tmp_path / path)
    settings_page, endpoints_page = "docs/reference/settings.md", "docs/reference/endpoints.md"
    (tmp_path / settings_page).write_text(pages[settings_page].replace("`PGS_WORKERS`", "`PGS_WORKER`"))
    (tmp_path / endpoints_page).unlink()
    assert stale(tmp_path, pages) == [endpoints_page, settings_page]
    assert write(tmp_path, pages) == [endpoints_page, settings_page]
    assert stale(tmp_path, pages) == []


def test_every_setting_is_on_the_settings_page_with_its_description(pages: dict[str, str]) -> None:
    text = pages["docs/reference/settings.md"]
    for name, field in Settings.model_fields.items():
        row = next(line for line in text.splitlines() if line.startswith(f"| `PGS_{name.upper()}` |"))
        assert field.description and field.description in row.replace("\\|", "|")
