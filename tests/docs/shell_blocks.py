"""The shell examples of a documentation page, run as a reader runs them.

A page's fenced ``sh`` blocks are split into commands (a command goes on over a trailing ``\\``
or an open quote), and ``# {`` or ``# [`` right after a command starts the answer it gives, in
the abbreviated JSON of tests/docs/abbreviated.py, going on over the ``#`` lines that follow:

    ```sh
    curl -s http://127.0.0.1:8000/v1/datasets/1
    # {"id":1,"name":"heart",...}
    ```

Other comments are comments. :func:`run_page` runs every command of the page in order in one
bash (so a variable set by one is there for the next), from a working directory the caller
provides, with the service's address in place of http://127.0.0.1:8000, and checks each answer.
A block marked ``no-run`` (```` ```sh no-run ````: Docker, hour-long benchmarks) is only checked
for its syntax (:func:`syntax_error`).

A page's ``python`` blocks (but those marked ``no-run``) are one program, run by
:func:`run_python` after the shell commands against the same service, so they may use what the
commands made (an alias) and what an earlier block defined. They must end without an error.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.docs import abbreviated

# The address the docs use, the one `make serve` listens on.
DOCS_URL = "http://127.0.0.1:8000"
NO_RUN = "no-run"
_FENCE = re.compile(r"^```(\S*)(.*)$")
_ANSWER_START = ("{", "[")


@dataclass(frozen=True)
class Block:
    line: int  # of the opening fence, 1-based
    flags: frozenset[str]
    text: str

    @property
    def runs(self) -> bool:
        return NO_RUN not in self.flags


@dataclass(frozen=True)
class Command:
    line: int
    text: str
    answer: str | None  # the abbreviated JSON shown after it, if any


def shell_blocks(page: Path) -> list[Block]:
    """The page's fenced ``sh`` blocks, in order."""
    return fenced_blocks(page, "sh")


def python_blocks(page: Path) -> list[Block]:
    """The page's fenced ``python`` blocks, in order."""
    return fenced_blocks(page, "python")


def fenced_blocks(page: Path, language: str | None = None) -> list[Block]:
    """The page's fenced blocks of ``language`` (of any, without it), in order."""
    blocks, lines, i = [], page.read_text().splitlines(), 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if fence is None:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        if language is None or fence.group(1) == language:
            text = "\n".join(lines[i + 1 : end]) + "\n"
            blocks.append(Block(i + 1, frozenset(fence.group(2).split()), text))
        i = end + 1
    return blocks


def runnable_blocks(page: Path) -> list[Block]:
    """The page's blocks the docs test runs: its ``sh`` and ``python`` blocks but ``no-run`` ones."""
    return [b for b in shell_blocks(page) + python_blocks(page) if b.runs]


def commands(block: Block) -> list[Command]:
    """The block's commands, each with the answer shown after it."""
    texts: list[tuple[int, str]] = []  # (line, command)
    answers: dict[int, list[str]] = {}  # a command's index -> the lines of its answer
    pending: list[str] = []  # the lines of a command not complete yet
    start, after_command, reading_answer = 0, False, False
    for number, line in enumerate(block.text.splitlines(), start=block.line + 1):
        if line.strip().startswith("#") and not pending:
            remark = line.strip()[1:]
            if after_command and remark.strip().startswith(_ANSWER_START):
                answers[len(texts) - 1], reading_answer = [], True
            if reading_answer:
                answers[len(texts) - 1].append(remark)
            after_command = False
            continue
        after_command = reading_answer = False
        if not pending:
            if not line.strip():
                continue
            start = number
        pending.append(line)
        if _complete("\n".join(pending)):
            texts.append((start, "\n".join(pending)))
            pending, after_command = [], True
    if pending:
        raise ValueError(f"the block at line {block.line} ends inside a command: {pending[0]!r}")
    return [
        Command(line, text, "\n".join(answers[i]) if i in answers else None)
        for i, (line, text) in enumerate(texts)
    ]


def _complete(text: str) -> bool:
    """Whether ``text`` is a whole command: no trailing backslash, no open quote."""
    try:
        shlex.split(text, comments=True)
    except ValueError:
        return False
    return True


def syntax_error(block: Block) -> str | None:
    """What ``bash -n`` says about the block, or None when it parses."""
    done = subprocess.run(["bash", "-n"], input=block.text, capture_output=True, text=True)
    return done.stderr.strip() or None if done.returncode else None


def run_page(page: Path, base_url: str, workdir: Path) -> None:
    """Run the page's commands (its blocks but those marked ``no-run``) against the service at
    ``base_url`` from ``workdir``; raise AssertionError at the first one that fails or whose
    answer differs from the one shown."""
    steps = [c for block in shell_blocks(page) if block.runs for c in commands(block)]
    if not steps:
        return  # a page whose examples are Python only
    outputs = workdir.parent / f"{workdir.name}-outputs"
    outputs.mkdir()
    subprocess.run(
        ["bash", "-c", _script(steps, base_url, outputs)], cwd=workdir, env=_environment(base_url), check=True
    )
    for i, step in enumerate(steps):
        _check(page, step, outputs / str(i))


def run_python(page: Path, base_url: str, workdir: Path) -> None:
    """Run the page's runnable ``python`` blocks, in order, as one program from ``workdir``
    against the service at ``base_url``; raise AssertionError with its traceback if it fails."""
    blocks = [b for b in python_blocks(page) if b.runs]
    if not blocks:
        return
    program = workdir.parent / f"{workdir.name}-{page.stem}.py"
    source = "".join(f"# {page.name}:{b.line}\n{b.text}" for b in blocks)
    program.write_text(source.replace(DOCS_URL, base_url))
    command = [sys.executable, str(program)]
    done = subprocess.run(command, cwd=workdir, env=_environment(base_url), capture_output=True, text=True)
    assert done.returncode == 0, f"{page.name}: its Python blocks failed\n{done.stdout}\n{done.stderr}"


def _script(steps: list[Command], base_url: str, outputs: Path) -> str:
    """One bash script: each command in a group whose output goes to files, stopping after the
    first that exits non-zero (the later ones would only fail in its wake)."""
    lines = ["exec </dev/null"]
    for i, step in enumerate(steps):
        out = shlex.quote(str(outputs / str(i)))
        lines += [
            "{",
            step.text.replace(DOCS_URL, base_url),
            f"}} >{out}.out 2>{out}.err",
            f"status=$?; echo $status >{out}.status; [ $status = 0 ] || exit 0",
        ]
    return "\n".join(lines) + "\n"


def _environment(base_url: str) -> dict[str, str]:
    """The reader's shell: this interpreter's scripts first on the PATH (python, pgs), and the
    service's address where the client looks for it."""
    env = {k: v for k, v in os.environ.items() if k != "PGS_API_KEY"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PGS_URL"] = base_url
    return env


def _check(page: Path, step: Command, output: Path) -> None:
    where = f"{page.name}:{step.line}: {step.text}"
    status = output.with_suffix(".status")
    assert status.exists(), f"{where}\nnot run: an earlier command failed"
    stdout = output.with_suffix(".out").read_bytes().decode()  # as sent: a `curl -i` header ends in \r\n
    stderr = output.with_suffix(".err").read_text()
    assert status.read_text().strip() == "0", f"{where}\nexit {status.read_text()}{stdout}\n{stderr}"
    if step.answer is None:
        return
    pattern = abbreviated.parse(step.answer)
    try:
        abbreviated.check(pattern, _json_body(stdout))
    except (abbreviated.Mismatch, ValueError) as exc:
        raise AssertionError(
            f"{where}\n{exc}\nthe page shows: {step.answer}\nthe service said: {stdout}"
        ) from None


def _json_body(stdout: str) -> Any:
    """The JSON of an answer; with ``curl -i``, that of the body after the headers."""
    body = stdout.split("\r\n\r\n")[-1] if stdout.startswith("HTTP/") else stdout
    return json.loads(body)
