"""The docs' examples read what a reader has: files of ``examples/`` or files the page made, never
a path outside the working directory (tests/docs/example_files.py). The pages the docs test runs
would fail on a missing relative file anyway; an absolute path or ``../`` could pass here and
fail for the reader, and the pages not run are held to the first rule too."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cluster.harness import REPO
from tests.docs.example_files import escapes, unknown_files
from tests.docs.pages import PAGES, RUN


@pytest.mark.parametrize("page", PAGES)
def test_examples_name_no_path_outside_the_working_directory(page: str) -> None:
    assert escapes(REPO / page) == []


@pytest.mark.parametrize("page", sorted(RUN))
def test_examples_read_only_files_of_examples_or_made_on_the_page(page: str) -> None:
    assert unknown_files(REPO / page) == []


def _page(tmp_path: Path, body: str) -> Path:
    page = tmp_path / "page.md"
    page.write_text(body)
    return page


def test_a_shared_or_absolute_path_is_refused(tmp_path: Path) -> None:
    page = _page(
        tmp_path,
        "```sh\ncurl -s -F file=@../shared/data/a9a.svm http://127.0.0.1:8000/v1/datasets\n"
        "curl -s -o /dev/null http://127.0.0.1:8000/v1/models/1/export\n```\n\n"
        '```python\nX = load_svmlight_file("/srv/data/heart.svm")\n```\n\n'
        "```sh no-run\ndocker run -v /srv/pgs:/opt/pgs/var pgs\n```\n",
    )
    assert escapes(page) == [
        "line 1: '../' is outside the working directory",
        "line 6: '/srv/data/heart.svm' is outside the working directory",
    ]


def test_a_file_is_read_from_examples_or_after_the_page_made_it(tmp_path: Path) -> None:
    page = _page(
        tmp_path,
        "```sh\ncurl -s -F file=@examples/sample.svm http://127.0.0.1:8000/v1/datasets\n"
        "printf 'a,b\\n1,2\\n' > small.csv\ncurl -s -F file=@small.csv http://127.0.0.1:8000/v1/datasets\n"
        "curl -s -F file=@patients.csv http://127.0.0.1:8000/v1/datasets\n```\n\n"
        '```python\ndf.to_csv("made.csv")\npd.read_csv("made.csv")\npd.read_csv("later.csv")\n'
        'open("later.csv", "w").write("x")\n```\n',
    )
    assert unknown_files(page) == [
        "line 1: 'patients.csv' is neither in examples/ nor made on the page",
        "line 8: 'later.csv' is neither in examples/ nor made on the page",
    ]
