"""The compiled svmlight/LIBSVM line parser: a buffer of whole lines into CSR arrays.

It reads what scikit-learn's ``load_svmlight_file`` reads, with the same result: a label, an
optional ``qid:`` field (skipped), ``index:value`` pairs with strictly increasing indices, ``#``
comments, blank lines, any run of ASCII whitespace (spaces, tabs, ``\\r``) between fields. Lines
end at ``\\n`` only (``\\r`` is whitespace), as in scikit-learn's loader.

Numbers are converted exactly (the float64 Python's ``float()`` gives for the same text): a
decimal of up to 19 significant digits whose mantissa is at most 2^53 and whose power of ten is
at most 22 is a product or quotient of two exact doubles, which IEEE arithmetic rounds correctly
(Clinger's fast path). Any other token that is printable ASCII (17 significant digits, ``nan``,
``1e400``, ``1_000``) is listed as *slow*: the caller converts it with ``float()``, and refuses
it if ``float()`` does; those are 1-2 % of the values of a real file written with ``repr``.

The kernel holds no GIL (``nogil``): the caller parses several blocks at once in threads.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# Why a line is refused (the byte offset of the field goes with it).
OK = 0
BAD_BYTE = 1  # a byte that is not printable ASCII inside a field (NUL, UTF-8, control)
NO_COLON = 2  # a feature field without ':'
BAD_INDEX = 3  # the index is not an integer
NEGATIVE_INDEX = 4
INDEX_TOO_LARGE = 5  # beyond 2^31 - 1
NOT_INCREASING = 6  # indices of a line must be sorted and unique
EMPTY_VALUE = 7  # 'index:' with nothing after the colon

REASONS = {
    BAD_BYTE: "a byte that is not printable ASCII",
    NO_COLON: "a feature without ':' (index:value expected)",
    BAD_INDEX: "the feature index is not an integer",
    NEGATIVE_INDEX: "a negative feature index",
    INDEX_TOO_LARGE: "the feature index is larger than 2147483647",
    NOT_INCREASING: "feature indices must be increasing within a line (sorted and unique)",
    EMPTY_VALUE: "a feature without a value after ':'",
}

# Slow tokens: what the value is (the row's label or a feature's value).
SLOW_LABEL = 0
SLOW_VALUE = 1

_POW10 = np.array([10.0**k for k in range(23)])  # exact doubles
_TEN = np.uint64(10)
_NINE = np.uint64(9)
_MAX_EXACT = np.uint64(2**53)
_MAX_INDEX = 2**31 - 1

# Parse statuses of a number.
_EXACT = 0
_SLOW = 1
_INVALID_BYTE = 2


# bytes.split()'s whitespace: space, \t, \n, \v, \f, \r; a field also ends at '#' (a comment).
_SPACE = np.zeros(256, np.bool_)
_SPACE[[9, 10, 11, 12, 13, 32]] = True
_FIELD_END = _SPACE.copy()
_FIELD_END[35] = True


@njit(cache=True, nogil=True, inline="always")
def _is_space(c: int) -> bool:
    return _SPACE[c]


@njit(cache=True, nogil=True, inline="always")
def _ends_field(buf: np.ndarray, i: int, n: int) -> bool:
    return i >= n or _FIELD_END[buf[i]]


@njit(cache=True, nogil=True)
def _field_end(buf: np.ndarray, i: int, n: int) -> tuple[int, bool]:
    """Where the field containing byte ``i`` ends, and whether its bytes from ``i`` on are all
    printable ASCII."""
    printable = True
    while not _ends_field(buf, i, n):
        c = buf[i]
        if c < 33 or c > 126:
            printable = False
        i += 1
    return i, printable


@njit(cache=True, nogil=True, inline="always")
def _digit(c: np.uint8) -> np.uint64:
    """The digit of byte ``c``, or a value above 9 (the subtraction wraps below '0')."""
    return np.uint64(c) - np.uint64(48)


@njit(cache=True, nogil=True, inline="always")
def _mantissa(buf: np.ndarray, i: int, n: int) -> tuple[np.uint64, int, bool, int]:
    """The digits (and point) at ``i``: (mantissa, its power of ten, whether it is exact: 1 to
    19 significant digits, position after them)."""
    mantissa = np.uint64(0)
    significant = 0
    start = i
    while i < n and _digit(buf[i]) <= _NINE:
        mantissa = mantissa * _TEN + _digit(buf[i])
        significant += mantissa != 0
        i += 1
    digits = i - start
    exp10 = 0
    if i < n and buf[i] == 46:  # .
        i += 1
        start = i
        while i < n and _digit(buf[i]) <= _NINE:
            mantissa = mantissa * _TEN + _digit(buf[i])
            significant += mantissa != 0
            i += 1
        exp10 = start - i
        digits += i - start
    # Past 19 significant digits the mantissa has wrapped: float() converts the field.
    return mantissa, exp10, digits > 0 and significant <= 19, i


@njit(cache=True, nogil=True, inline="always")
def _exponent(buf: np.ndarray, i: int, n: int) -> tuple[int, bool, int]:
    """The exponent after 'e' or 'E' at ``i`` (0 if there is none): (exponent, whether it has
    digits, position after it)."""
    if i >= n or (buf[i] != 101 and buf[i] != 69):
        return 0, True, i
    i += 1
    negative = False
    if i < n and (buf[i] == 43 or buf[i] == 45):
        negative = buf[i] == 45
        i += 1
    has_digits = i < n and 48 <= buf[i] <= 57
    e = 0
    while i < n and 48 <= buf[i] <= 57:
        e = min(e * 10 + (buf[i] - 48), 100000)
        i += 1
    return (-e if negative else e), has_digits, i


@njit(cache=True, nogil=True, inline="always")
def _exact_double(mantissa: np.uint64, exp10: int) -> tuple[float, bool]:
    """mantissa x 10^exp10 when two exact doubles give it (Clinger's fast path)."""
    if mantissa == 0:
        return 0.0, True
    # An exponent past 22 with a short mantissa: move the excess powers into the mantissa
    # while it stays exact ("1e25" is 1000 x 1e22).
    while exp10 > 22 and mantissa <= _MAX_EXACT // np.uint64(10):
        mantissa = mantissa * np.uint64(10)
        exp10 -= 1
    if mantissa > _MAX_EXACT or exp10 > 22 or exp10 < -22:
        return 0.0, False
    value = float(mantissa)
    return (value * _POW10[exp10] if exp10 >= 0 else value / _POW10[-exp10]), True


@njit(cache=True, nogil=True, inline="always")
def _parse_float(buf: np.ndarray, start: int, n: int) -> tuple[float, int, int]:
    """The number of the field starting at ``start``: (value, _EXACT, end), or (0.0, _SLOW, end)
    when it needs ``float()``, or (0.0, _INVALID_BYTE, end) for a byte no number has."""
    i = start
    negative = i < n and buf[i] == 45
    if i < n and (buf[i] == 43 or buf[i] == 45):  # + -
        i += 1
    mantissa, exp10, exact, i = _mantissa(buf, i, n)
    e, has_digits, i = _exponent(buf, i, n)
    if not _ends_field(buf, i, n):
        end, printable = _field_end(buf, i, n)
        return 0.0, (_SLOW if printable else _INVALID_BYTE), end
    value, fast = _exact_double(mantissa, exp10 + e)
    if not (exact and has_digits and fast):
        return 0.0, _SLOW, i
    return (-value if negative else value), _EXACT, i


@njit(cache=True, nogil=True)
def _colon_in(buf: np.ndarray, start: int, end: int) -> int:
    for i in range(start, end):
        if buf[i] == 58:
            return i
    return -1


@njit(cache=True, nogil=True, inline="always")
def _parse_index(buf: np.ndarray, start: int, n: int) -> tuple[int, int, int]:
    """The index of the ``index:value`` field at ``start`` (Python's ``int()`` of an optional
    sign and digits): (index, OK, position of the colon), or (0, reason, start)."""
    i = start
    negative = False
    if i < n and (buf[i] == 43 or buf[i] == 45):
        negative = buf[i] == 45
        i += 1
    value = 0
    digits = 0
    while i < n and _digit(buf[i]) <= _NINE:
        value = min(value * 10 + (buf[i] - 48), _MAX_INDEX + 1)
        digits += 1
        i += 1
    if digits and i < n and buf[i] == 58:
        if negative and value != 0:
            return 0, NEGATIVE_INDEX, start
        if value > _MAX_INDEX:
            return 0, INDEX_TOO_LARGE, start
        return value, OK, i
    end, printable = _field_end(buf, start, n)
    if not printable:
        return 0, BAD_BYTE, start
    return 0, (NO_COLON if _colon_in(buf, start, end) < 0 else BAD_INDEX), start


@njit(cache=True, nogil=True)
def _note_slow(slow: np.ndarray, n_slow: int, kind: int, i: int, start: int, end: int) -> np.ndarray:
    """``slow`` with the token of buf[start:end] (label or value ``i``) as its row ``n_slow``."""
    if n_slow == slow.shape[0]:
        bigger = np.empty((2 * slow.shape[0], 4), np.int64)
        bigger[:n_slow] = slow
        slow = bigger
    slow[n_slow, 0] = kind
    slow[n_slow, 1] = i
    slow[n_slow, 2] = start
    slow[n_slow, 3] = end
    return slow


@njit(cache=True, nogil=True, inline="always")
def _skip_blanks(buf: np.ndarray, pos: int, n: int) -> int:
    while pos < n and buf[pos] != 10 and _is_space(buf[pos]):
        pos += 1
    return pos


@njit(cache=True, nogil=True, inline="always")
def _is_qid(buf: np.ndarray, pos: int, n: int) -> bool:
    return pos + 3 <= n and buf[pos] == 113 and buf[pos + 1] == 105 and buf[pos + 2] == 100


@njit(cache=True, nogil=True, inline="always")
def _features(
    buf: np.ndarray, pos: int, indices: np.ndarray, data: np.ndarray, nnz: int, slow: np.ndarray, n_slow: int
) -> tuple[int, int, int, np.ndarray, int, int, int]:
    """The index:value fields from ``pos`` to the end of the line (or its comment): (position,
    nnz, largest index or -1, slow, n_slow, error, error offset)."""
    n = buf.shape[0]
    previous = -1
    pos = _skip_blanks(buf, pos, n)
    if _is_qid(buf, pos, n):
        # A query id, read as scikit-learn reads it: skipped when it has a colon.
        start = pos
        pos, _ = _field_end(buf, pos, n)
        if _colon_in(buf, start, pos) < 0:
            return pos, nnz, previous, slow, n_slow, NO_COLON, start
        pos = _skip_blanks(buf, pos, n)
    while not (pos >= n or buf[pos] == 10 or buf[pos] == 35):
        start = pos
        index, reason, colon = _parse_index(buf, start, n)
        if reason == OK and index <= previous:
            reason = NOT_INCREASING
        if reason == OK and _ends_field(buf, colon + 1, n):
            reason = EMPTY_VALUE
        if reason != OK:
            return pos, nnz, previous, slow, n_slow, reason, start
        value, status, pos = _parse_float(buf, colon + 1, n)
        if status == _INVALID_BYTE:
            return pos, nnz, previous, slow, n_slow, BAD_BYTE, colon + 1
        if status == _SLOW:
            slow = _note_slow(slow, n_slow, SLOW_VALUE, nnz, colon + 1, pos)
            n_slow += 1
        indices[nnz] = index
        data[nnz] = value
        nnz += 1
        previous = index
        pos = _skip_blanks(buf, pos, n)
    return pos, nnz, previous, slow, n_slow, OK, 0


@njit(cache=True, nogil=True)
def _bounds(buf: np.ndarray) -> tuple[int, int]:
    """At most how many rows (lines) and values (colons) ``buf`` holds."""
    rows = 1
    nnz = 0
    for i in range(buf.shape[0]):
        c = buf[i]
        rows += c == 10
        nnz += c == 58
    return rows, nnz


@njit(cache=True, nogil=True)
def parse_lines(
    buf: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, np.ndarray, int, int]:
    """CSR rows of ``buf`` (whole lines of svmlight text).

    Returns (labels, indptr, indices, data, largest index or -1, slow, error, error offset):
    ``slow`` holds a row (kind, position in labels or data, start, end) for each token the caller
    converts with ``float()``; ``error`` is OK or the reason the field at byte ``error offset`` is
    refused, in which case only ``slow`` is complete (up to that field: the caller looks there
    for an earlier token that ``float()`` refuses).
    """
    n = buf.shape[0]
    max_rows, max_nnz = _bounds(buf)
    labels = np.empty(max_rows, np.float64)
    indptr = np.zeros(max_rows + 1, np.int64)
    indices = np.empty(max_nnz, np.int32)
    data = np.empty(max_nnz, np.float64)
    slow = np.empty((64, 4), np.int64)
    n_slow = rows = nnz = 0
    max_index = -1
    pos = 0
    while pos < n:
        pos = _skip_blanks(buf, pos, n)
        if pos < n and buf[pos] != 10 and buf[pos] != 35:  # a row, not a blank or comment line
            start = pos
            label, status, pos = _parse_float(buf, start, n)
            if status == _INVALID_BYTE:
                return labels[:0], indptr[:1], indices[:0], data[:0], -1, slow[:n_slow], BAD_BYTE, start
            if status == _SLOW:
                slow = _note_slow(slow, n_slow, SLOW_LABEL, rows, start, pos)
                n_slow += 1
            labels[rows] = label
            pos, nnz, last, slow, n_slow, error, at = _features(buf, pos, indices, data, nnz, slow, n_slow)
            if error != OK:
                return labels[:0], indptr[:1], indices[:0], data[:0], -1, slow[:n_slow], error, at
            max_index = max(max_index, last)
            rows += 1
            indptr[rows] = nnz
        while pos < n and buf[pos] != 10:  # the comment, if any
            pos += 1
        pos += 1
    return labels[:rows], indptr[: rows + 1], indices[:nnz], data[:nnz], max_index, slow[:n_slow], OK, 0


def warm_up() -> None:
    """Compile (or load from the cache) the kernel for the buffers it is given: read-only
    bytes, as ``np.frombuffer`` makes them (``python -m app.services.datasets.svmlight_kernel``,
    part of ``make install`` and the image build, so that no upload waits for the compiler)."""
    parse_lines(np.frombuffer(b"+1 qid:3 1:0.5 3:1e-3 # c\n-1 2:0.12345678901234567\n", np.uint8))


if __name__ == "__main__":
    warm_up()
