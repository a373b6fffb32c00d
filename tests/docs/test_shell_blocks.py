"""The docs harness itself (tests/docs/shell_blocks.py, tests/docs/abbreviated.py): what it takes
for a command and for an answer, and that an answer unlike the page's fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs import abbreviated
from tests.docs.shell_blocks import Block, commands, run_page, run_python, shell_blocks, syntax_error

ANSWER = {
    "id": 1,
    "status": "succeeded",
    "sha256": "5defa0a4c4c5bdaf",
    "metrics": {"solver_seconds": 0.0035, "test_accuracy": 0.8382352941176471, "nnz_weights": 13},
    "classes": [-1, 1],
    "points": [{"iteration": 0}, {"iteration": 1000}, {"iteration": 20000}],
    "error": None,
    "scores": [-2.126511096220682],
}


@pytest.mark.parametrize(
    "shown",
    [
        '{"id":1,...}',
        '{...,"status":"succeeded",...,"id":1}',
        '{"sha256":"5defa0a4...","metrics":{"solver_seconds":...,"test_accuracy":0.8382...}}',
        '{"classes":[-1,1],"points":[{"iteration":0},...,{"iteration":20000}],"error":null}',
        '{"points":[...,{"iteration":20000}],"metrics":{"test_accuracy":0.8382352941176471}}',
        '{"metrics":{"nnz_weights":13.0},"points":[{...},{...},{...}]}',
        '{"metrics":{"test_accuracy":0.83824...},"scores":[-2.1265...]}',
        '{"scores":[-2.12651...]}',
    ],
)
def test_an_answer_that_has_everything_shown_fits(shown: str) -> None:
    abbreviated.check(abbreviated.parse(shown), ANSWER)


@pytest.mark.parametrize(
    ("shown", "where"),
    [
        ('{"id":2,...}', "id"),
        ('{"model_id":1,...}', "model_id: missing"),
        ('{"metrics":{"test_accuracy":0.8383...}}', "metrics.test_accuracy"),
        ('{"metrics":{"test_accuracy":0.83823}}', "metrics.test_accuracy"),
        ('{"metrics":{"test_accuracy":-0.8382...}}', "metrics.test_accuracy"),
        ('{"metrics":{"solver_seconds":0.0038...}}', "metrics.solver_seconds"),
        ('{"sha256":"5defa0a5..."}', "sha256"),
        ('{"classes":[-1]}', "classes"),
        ('{"classes":[1,...]}', "classes[0]"),
        ('{"points":[...,{"iteration":1000}]}', "points[2].iteration"),
        ('{"error":false}', "error"),
        ('{"id":true}', "id"),
        ('{"status":["succeeded"]}', "status"),
    ],
)
def test_an_answer_unlike_the_one_shown_is_a_mismatch_naming_where(shown: str, where: str) -> None:
    with pytest.raises(abbreviated.Mismatch, match=where.replace("[", r"\[").replace("]", r"\]")):
        abbreviated.check(abbreviated.parse(shown), ANSWER)


@pytest.mark.parametrize("shown", ['{"id":1', '{"id" 1}', "{'id': 1}", '{"id":1} x', "[1, ..., 2, ..., 3]"])
def test_text_that_is_not_abbreviated_json_is_refused(shown: str) -> None:
    with pytest.raises(ValueError):
        abbreviated.check(abbreviated.parse(shown), [1, 2, 3])


def _block(text: str) -> Block:
    return Block(10, frozenset(), text)


def test_a_command_goes_on_over_backslashes_and_open_quotes_and_its_answer_over_comments() -> None:
    found = commands(
        _block(
            "curl -s -X POST http://127.0.0.1:8000/v1/jobs \\\n"
            '  -d \'{"dataset_id": 1,\n'
            '       "targets": [0.8]}\'\n'
            '# {"id":1,\n'
            '#  "status":"queued"}\n'
            "\n"
            "curl -s http://127.0.0.1:8000/v1/jobs/1   # it's a remark, quote and all\n"
            "# the same for job 2\n"
            "\n"
            '# {"not": "an answer: a blank line came before it"}\n'
            "echo done\n"
        )
    )
    assert [(c.line, c.text.splitlines()[0][:18]) for c in found] == [
        (11, "curl -s -X POST ht"),
        (17, "curl -s http://127"),
        (21, "echo done"),
    ]
    assert found[0].text.endswith('"targets": [0.8]}\'')
    assert abbreviated.parse(found[0].answer or "") == abbreviated.parse('{"id":1,"status":"queued"}')
    assert found[1].answer is None and found[2].answer is None


def test_a_block_that_ends_inside_a_command_is_refused() -> None:
    with pytest.raises(ValueError, match="ends inside a command"):
        commands(_block("curl -d '{\n"))


def test_syntax_errors_are_reported_and_flags_read(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("```sh no-run\nif true; then\n```\n\n```python\nx = 1\n```\n\n```sh\necho ok\n```\n")
    broken, fine = shell_blocks(page)
    assert not broken.runs and fine.runs
    assert syntax_error(broken) and syntax_error(fine) is None


def _page(tmp_path: Path, body: str) -> Path:
    (tmp_path / "reader").mkdir()
    page = tmp_path / "page.md"
    page.write_text(f"```sh\n{body}```\n\n```sh no-run\nexit 1\n```\n")
    return page


def test_a_page_whose_answers_are_as_shown_runs_in_one_shell(tmp_path: Path) -> None:
    page = _page(
        tmp_path,
        "ADDRESS=http://127.0.0.1:8000/v1\n"
        'printf \'{"url": "%s", "n": 3}\' "$ADDRESS"\n'
        '# {"url":"http://service.test/v1","n":3}\n',
    )
    run_page(page, "http://service.test", tmp_path / "reader")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('echo \'{"n": 4}\'\n# {"n":3}\n', "n: expected 3, got 4"),
        ("echo 'not json'\n# {\"n\":3}\n", "Expecting value"),
        ("false\necho '{}'\n", "exit 1"),
    ],
)
def test_a_page_whose_answer_differs_or_whose_command_fails_fails(
    tmp_path: Path, body: str, message: str
) -> None:
    with pytest.raises(AssertionError, match=message):
        run_page(_page(tmp_path, body), "http://service.test", tmp_path / "reader")


def _python_page(tmp_path: Path, *blocks: str) -> Path:
    (tmp_path / "reader").mkdir()
    page = tmp_path / "page.md"
    page.write_text("".join(f"```python{flags}\n{body}```\n\n" for flags, body in blocks))
    return page


def test_a_pages_python_blocks_run_as_one_program_with_the_services_address(tmp_path: Path) -> None:
    page = _python_page(
        tmp_path,
        ("", 'url = "http://127.0.0.1:8000/v1"\n'),
        (" no-run", "raise SystemExit(1)\n"),
        ("", 'assert url == "http://service.test/v1", url\nopen("ran", "w").close()\n'),
    )
    run_python(page, "http://service.test", tmp_path / "reader")
    assert (tmp_path / "reader" / "ran").exists()  # from the reader's working directory


def test_a_python_block_that_fails_fails_with_its_traceback(tmp_path: Path) -> None:
    page = _python_page(tmp_path, ("", "x = 1\n"), ("", "1 / (x - 1)\n"))
    with pytest.raises(AssertionError, match="ZeroDivisionError"):
        run_python(page, "http://service.test", tmp_path / "reader")


def test_a_page_of_python_blocks_only_runs(tmp_path: Path) -> None:
    page = _python_page(tmp_path, ("", 'open("ran", "w").close()\n'))
    run_page(page, "http://service.test", tmp_path / "reader")  # no command: nothing to do
    run_python(page, "http://service.test", tmp_path / "reader")
    assert (tmp_path / "reader" / "ran").exists()


def test_the_answer_of_curl_i_is_its_body_after_the_crlf_headers(tmp_path: Path) -> None:
    page = _page(
        tmp_path,
        'printf \'HTTP/1.1 202 Accepted\\r\\nlocation: /v1/studies/1\\r\\n\\r\\n{"id": 1}\'\n# {"id":1}\n',
    )
    run_page(page, "http://service.test", tmp_path / "reader")
