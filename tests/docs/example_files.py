"""The files a page's runnable examples read, and those that break the rule that a reader with a
checkout has them: an example reads files of the repository's ``examples/`` or files the page
made itself (a redirect, ``curl -o``, a Python ``to_csv``/``open(..., "w")``), never a path
outside its working directory (``../``, an absolute path) or a file that comes from nowhere.

A file is a shell word or a Python string literal that ends in a data file's extension (``@`` of
curl's ``file=@`` and ``--data-binary @`` taken off), read in page order: a file made by an
earlier example may be read by a later one.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from pathlib import Path

from tests.docs.shell_blocks import Block, python_blocks, shell_blocks

EXAMPLES = "examples/"
EXTENSIONS = ("svm", "csv", "tsv", "txt", "gz", "bz2", "xz", "zip", "parquet", "npz", "npy", "json", "onnx")
# Places that are not files a reader lacks: where output is thrown away, or read from a pipe.
DEVICES = ("/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr")
_DATA_FILE = re.compile(rf"[^\s'\"=@]+\.(?:{'|'.join(EXTENSIONS)})$")
_ABSOLUTE = re.compile(r"(?:^|[\s'\"=@(])(/[A-Za-z][\w.-]*(?:/[\w.-]*)*)")
# A relative path that starts by leaving the working directory (a `..` further in, as in
# `$PWD/imports/../x`, may stay inside it; an absolute one is caught as absolute).
_OUTSIDE = re.compile(r"(?:^|[\s'\"=@(])\.\./")
_WRITE_FLAGS = (">", ">>", "-o", "--output", "tee")
_COPY_TARGET = re.compile(r"\b(?:cp|mv)\s+(?:-\w+\s+)*\S+\s+([^\s;&|]+)")
_PY_LITERAL = re.compile(
    r"""(?P<call>[\w.]+\()?\s*(?P<quote>['"])(?P<name>[^'"\s]+)(?P=quote)(?P<rest>[^)\n]*)"""
)
_PY_WRITERS = re.compile(r"(?:^|\.)(?:to_\w+|save\w*|dump\w*|write\w*|savetxt|savez\w*)\($")


def escapes(page: Path) -> list[str]:
    """Where the page's runnable examples name a path outside the reader's working directory
    (``../``, an absolute path), one line each."""
    return [
        f"line {block.line}: {path!r} is outside the working directory"
        for block, _ in _runnable(page)
        for path in _escapes(_code(block))
    ]


def unknown_files(page: Path) -> list[str]:
    """Where the page's runnable examples read a file that is neither in ``examples/`` nor made
    by the page before, one line each."""
    made: set[str] = set()
    found: list[str] = []
    for block, files in _runnable(page):
        for name, writes in files(_code(block)):
            if writes:
                made.add(name)
            elif not (name.startswith((EXAMPLES, "/", "../")) or name in made):
                found.append(f"line {block.line}: {name!r} is neither in examples/ nor made on the page")
    return found


def _runnable(page: Path) -> list[tuple[Block, Callable[[str], list[tuple[str, bool]]]]]:
    """The page's runnable blocks in page order, each with the reader of its files."""
    shell = [(b, _shell_files) for b in shell_blocks(page) if b.runs]
    python = [(b, _python_files) for b in python_blocks(page) if b.runs]
    return sorted(shell + python, key=lambda pair: pair[0].line)


def _code(block: Block) -> str:
    """The block without its comment lines (the answers shown, remarks)."""
    return "\n".join(line for line in block.text.splitlines() if not line.strip().startswith("#"))


def _escapes(text: str) -> list[str]:
    """The absolute paths and ``../`` paths of the text (URLs' paths are not: a host precedes them)."""
    absolute = [m for m in _ABSOLUTE.findall(text) if m not in DEVICES]
    return absolute + ["../" for _ in _OUTSIDE.finditer(text)]


def _shell_files(text: str) -> list[tuple[str, bool]]:
    """The files the shell text names, in order, each with whether it is written."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)  # `>`, `;`, `|` words of their own
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError:  # a here-document's text need not be shell words
        words = re.sub(r"([<>;|&])", r" \1 ", text).split()
    copied_to = set(_COPY_TARGET.findall(text))
    files = []
    for previous, word in zip(["", *words], words, strict=False):
        name = word.rsplit("@", 1)[-1] if "@" in word and "://" not in word else word
        name = name.removeprefix("$PWD/")  # the working directory, spelt out
        if "://" in name or not _DATA_FILE.fullmatch(name):
            continue
        files.append((name, previous in _WRITE_FLAGS or name in copied_to))
    return files


def _python_files(text: str) -> list[tuple[str, bool]]:
    """The files the Python text names, in order, each with whether it is written."""
    files = []
    for m in _PY_LITERAL.finditer(text):
        name = m.group("name")
        if "://" in name or not _DATA_FILE.fullmatch(name):
            continue
        call = m.group("call") or ""
        opened_for_writing = call.endswith("open(") and re.search(r"""['"][wax]b?['"]""", m.group("rest"))
        files.append((name, bool(_PY_WRITERS.search(call) or opened_for_writing)))
    return files
