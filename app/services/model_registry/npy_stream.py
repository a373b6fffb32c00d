"""NumPy ``.npy`` files written and read a block of rows at a time, so that neither side ever
holds the whole array: the header states the final shape, the rows follow in C order."""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO

import numpy as np
from numpy.lib import format as npy_format


class NpyRowWriter:
    """Writes an array of ``n_rows`` rows to ``fh`` block by block; the trailing shape and the
    dtype are those of the first block (later blocks are cast to it)."""

    def __init__(self, fh: IO[bytes], n_rows: int, min_dtype: np.dtype | None = None) -> None:
        self.fh, self.n_rows, self.min_dtype = fh, n_rows, min_dtype
        self.dtype: np.dtype | None = None
        self.rows = 0

    def write(self, block: np.ndarray) -> None:
        if self.dtype is None:
            # Strings: at least as wide as min_dtype (the longest class name), so a later block
            # with a longer label is not cut.
            self.dtype = (
                block.dtype if self.min_dtype is None else np.promote_types(block.dtype, self.min_dtype)
            )
            npy_format.write_array_header_1_0(
                self.fh,
                {
                    "descr": npy_format.dtype_to_descr(self.dtype),
                    "fortran_order": False,
                    "shape": (self.n_rows, *block.shape[1:]),
                },
            )
        self.fh.write(np.ascontiguousarray(block, dtype=self.dtype).tobytes())
        self.rows += block.shape[0]

    def close(self) -> None:
        if self.rows != self.n_rows:
            raise ValueError(f"wrote {self.rows} rows of an array declared with {self.n_rows}")


def read_header(fh: IO[bytes]) -> tuple[tuple[int, ...], np.dtype]:
    """Shape and dtype of the .npy at ``fh`` (positioned after the header on return)."""
    version = npy_format.read_magic(fh)
    reader = npy_format.read_array_header_1_0 if version == (1, 0) else npy_format.read_array_header_2_0
    shape, fortran_order, dtype = reader(fh)
    if fortran_order or dtype.hasobject:
        raise ValueError("only C-order arrays without objects are streamed")
    return shape, dtype


def iter_rows(fh: IO[bytes], block_rows: int) -> Iterator[np.ndarray]:
    """The rows of the .npy at ``fh``, ``block_rows`` at a time."""
    shape, dtype = read_header(fh)
    row_items = int(np.prod(shape[1:], dtype=np.int64))
    row_bytes = row_items * dtype.itemsize
    for start in range(0, shape[0], block_rows):
        n = min(block_rows, shape[0] - start)
        raw = fh.read(n * row_bytes)
        if len(raw) != n * row_bytes:
            raise ValueError("the .npy file ends before its declared shape")
        yield np.frombuffer(raw, dtype=dtype).reshape((n, *shape[1:]))
