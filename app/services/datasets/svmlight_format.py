"""svmlight/LIBSVM text, blocks of lines parsed by a compiled kernel in threads, in file order.

The file is read as blocks of whole lines (about 4 MiB each, :func:`parse_base.line_blocks`);
each block is parsed by :func:`svmlight_kernel.parse_lines`, which holds no GIL, so up to
``options.threads`` blocks are parsed at once while the next one is read (and decompressed).
Their rows go to the sink in file order, one block at a time: the memory is a few blocks and a
shard, whatever the file's size. The first refused field names its line in the whole file, its
column and the reason; rows before it may have reached the sink, which the caller aborts.
"""

from __future__ import annotations

import contextlib
import io
from collections import deque
from collections.abc import Callable, Generator, Iterable
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp

from app.services.datasets.parse_base import (
    CountedRows,
    ParseError,
    ParseOptions,
    RowSink,
    check_width,
    first_nonfinite_line,
    line_blocks,
    no_labels,
)
from app.services.datasets.svmlight_kernel import BAD_BYTE, REASONS, SLOW_LABEL, parse_lines

Rows = tuple[sp.csr_matrix, np.ndarray]
# The field shown in an error message, at most this many characters.
SHOWN_CHARS = 40


def parse_block(block: bytes, first_line: int) -> Rows:
    """The rows of ``block`` (whole lines whose first is line ``first_line`` of the file), with
    their raw (as written) indices; ParseError naming the first refused field."""
    labels, indptr, indices, data, max_index, slow, error, error_at = parse_lines(
        np.frombuffer(block, np.uint8)
    )
    for kind, i, start, end in slow.tolist():
        if error and start >= error_at:
            break
        try:
            value = float(block[start:end])
        except ValueError:
            what = "the label" if kind == SLOW_LABEL else "the feature value"
            raise ParseError(_located(block, first_line, start, f"{what} is not a number")) from None
        if not error:
            (labels if kind == SLOW_LABEL else data)[i] = value
    if error:
        raise ParseError(_located(block, first_line, error_at, _reason(block, error, error_at)))
    X = sp.csr_matrix((data, indices, indptr), shape=(len(labels), max_index + 1), copy=False)
    return X, labels


def _reason(block: bytes, error: int, at: int) -> str:
    if error != BAD_BYTE:
        return REASONS[error]
    line = block[block.rfind(b"\n", 0, at) + 1 : _line_end(block, at)]
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return "the text is not valid UTF-8"
    return "a NUL byte" if b"\x00" in line else "a character that is not printable ASCII"


def _line_end(block: bytes, at: int) -> int:
    end = block.find(b"\n", at)
    return len(block) if end < 0 else end


def _located(block: bytes, first_line: int, at: int, reason: str) -> str:
    """The message of a refused field at byte ``at``: its line in the file, its column
    (characters from 1) and the field itself."""
    line_start = block.rfind(b"\n", 0, at) + 1
    line = first_line + block.count(b"\n", 0, at)
    column = len(block[line_start:at].decode("utf-8", "replace")) + 1
    field = block[at : _line_end(block, at)].split(maxsplit=1)[0] if block[at : at + 1].strip() else b""
    shown = field.decode("utf-8", "backslashreplace")
    shown = shown if len(shown) <= SHOWN_CHARS else shown[:SHOWN_CHARS] + "..."
    return f"not a valid svmlight/LIBSVM file: line {line}, column {column} ({shown!r}): {reason}"


def parsed_blocks(blocks: Iterable[tuple[int, bytes]], threads: int) -> Generator[tuple[int, bytes, Rows]]:
    """(first line, block, rows) of each block, in order, parsed by up to ``threads`` threads:
    as many blocks are parsed ahead as there are threads, no more."""
    if threads <= 1:
        for first_line, block in blocks:
            yield first_line, block, parse_block(block, first_line)
        return
    pool = ThreadPoolExecutor(threads, thread_name_prefix="pgs-svmlight")
    ahead: deque[tuple[int, bytes, Future[Rows]]] = deque()
    try:
        for first_line, block in blocks:
            ahead.append((first_line, block, pool.submit(parse_block, block, first_line)))
            if len(ahead) > threads:
                first, text, rows = ahead.popleft()
                yield first, text, rows.result()
        while ahead:
            first, text, rows = ahead.popleft()
            yield first, text, rows.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def parse_svmlight(
    open_stream: Callable[[], io.BufferedReader], options: ParseOptions, out: CountedRows
) -> tuple[int, int]:
    """(width, index base) of the rows given to ``out``."""
    base = _IndexBase(options.zero_based, out.sink)
    raw_width = 0  # the largest index + 1, as written in the file
    # closing: a refused block stops the threads now, not when the traceback is collected.
    with (
        open_stream() as fh,
        contextlib.closing(parsed_blocks(line_blocks(fh, 1), options.threads)) as blocks,
    ):
        for first_line, block, (X, y) in blocks:
            problem = first_nonfinite_line(X, y, block, first_line, comments=True)
            if problem:
                raise ParseError(problem)
            raw_width = max(raw_width, X.shape[1])
            # Rows without labels (labelled=false) still start with one, as /predict reads
            # them: it is read and not kept.
            out.add(base.apply(X), y if options.labelled else no_labels(X.shape[0]))
            check_width(raw_width - 1, options)  # stop early; the exact check is at the end
    return max(raw_width - base.base, 0), base.base


class _IndexBase:
    """scikit-learn's rule for zero_based="auto" (1-based unless some index is 0), decided as
    the blocks come: they are taken as 1-based until a 0 appears, then the rows already written
    get their indices back (rare: LIBSVM files are 1-based)."""

    def __init__(self, zero_based: str, sink: RowSink) -> None:
        self.base = 0 if zero_based == "true" else 1
        self.declared = zero_based != "auto"
        self.sink = sink

    def apply(self, X: sp.csr_matrix) -> sp.csr_matrix:
        if self.base == 1 and X.nnz and X.indices.min() == 0:
            if self.declared:
                raise ParseError("feature index 0 found, but zero_based=false (indices start at 1)")
            self.base = 0
            self.sink.shift_indices(1)
        if self.base == 0:
            return X
        indices = X.indices
        indices -= 1  # in place: a copy would be a third of the block again
        return sp.csr_matrix((X.data, indices, X.indptr), shape=(X.shape[0], max(X.shape[1] - 1, 0)))
