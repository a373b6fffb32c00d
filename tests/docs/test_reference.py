"""The generated reference pages (tools/reference) say what the code says: a page that differs
from what ``python -m tools.reference`` would write fails here until ``make docs`` is run."""

from __future__ import annotations

import inspect
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import typer
from pgs_client.cli import EXIT_CODES
from pgs_client.cli.app import app as pgs
from typer.models import OptionInfo

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


def test_every_pgs_command_is_on_the_cli_page_with_its_options_and_exit_codes(
    pages: dict[str, str],
) -> None:
    """Read from the functions' declarations, not from the click commands the page is made of."""
    sections = dict(_sections(pages["docs/reference/cli.md"]))

    def walk(group: typer.Typer, path: str) -> int:
        count = 0
        for info in group.registered_commands:
            assert info.callback is not None
            command = f"{path} {info.name or info.callback.__name__.replace('_', '-')}"
            for option in _options(info.callback):
                assert f"`{option}" in sections[command], f"{command} {option}"
            count += 1
        for sub in group.registered_groups:
            assert sub.typer_instance is not None
            count += walk(sub.typer_instance, f"{path} {sub.name}")
        return count

    assert walk(pgs, "pgs") >= 45
    exits = sections["Exit codes"]
    assert all(f"| `{code}` | {meaning}" in exits for code, meaning in EXIT_CODES.items())


def _sections(text: str) -> list[tuple[str, str]]:
    """(heading, its text up to the next heading) of a page."""
    parts = re.split(r"^#{2,3} (.+)$", text, flags=re.MULTILINE)
    return list(zip(parts[1::2], parts[2::2], strict=True))


def _options(callback: Callable[..., Any]) -> list[str]:
    """The first name of each option the function declares (``--json``)."""
    names = []
    for parameter in inspect.signature(callback, eval_str=True).parameters.values():
        for info in getattr(parameter.annotation, "__metadata__", ()):
            if isinstance(info, OptionInfo):
                # In Annotated, typer reads the first positional argument (the default's place)
                # as the option's first name.
                declared = [d for d in (info.default, *info.param_decls) if isinstance(d, str)]
                first = declared[0] if declared else "--" + parameter.name.replace("_", "-")
                # A boolean pair ("--labelled/--unlabelled"): its "on" name.
                names.append(first.split("/")[0])
    return names
