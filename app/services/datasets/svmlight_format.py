"""svmlight/LIBSVM text, a block of lines at a time, through scikit-learn's ``load_svmlight_file``."""

from __future__ import annotations

import io
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from app.services.datasets.parse_base import (
    CountedRows,
    ParseError,
    ParseOptions,
    RowSink,
    check_width,
    first_nonfinite_line,
    line_blocks,
    without_blank_lines,
)


def _svmlight_block(block: bytes) -> tuple[sp.csr_matrix, np.ndarray]:
    # Raw (0-based) indices; the index base is decided once the whole file is seen.
    X, y = load_svmlight_file(io.BytesIO(block), dtype=np.float64, zero_based=True)
    return sp.csr_matrix(X), y


def _svmlight_error(block: bytes, first_line: int) -> ParseError:
    """Bisect the block's lines (each parses alone) for the first one the parser refuses."""
    lines = block.split(b"\n")
    lo, hi = 0, len(lines)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            _svmlight_block(b"\n".join(lines[lo:mid]))
        except (ValueError, UnicodeDecodeError, OverflowError):
            hi = mid
        else:
            lo = mid
    try:
        _svmlight_block(lines[lo])
    except (ValueError, UnicodeDecodeError, OverflowError) as exc:
        return ParseError(f"not a valid svmlight/LIBSVM file: line {first_line + lo}: {exc}")
    return ParseError("not a valid svmlight/LIBSVM file")


def parse_svmlight(
    open_stream: Callable[[], io.BufferedReader], options: ParseOptions, out: CountedRows
) -> tuple[int, int]:
    """(width, index base) of the rows given to ``out``."""
    base = _IndexBase(options.zero_based, out.sink)
    raw_width = 0  # the largest index + 1, as written in the file
    with open_stream() as fh:
        for first_line, block in line_blocks(fh, 1):
            try:
                X, y = _svmlight_block(without_blank_lines(block))
            except (ValueError, UnicodeDecodeError, OverflowError):
                raise _svmlight_error(block, first_line) from None
            problem = first_nonfinite_line(X, y, block, first_line, comments=True)
            if problem:
                raise ParseError(problem)
            raw_width = max(raw_width, X.shape[1])
            out.add(base.apply(X), y)
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
