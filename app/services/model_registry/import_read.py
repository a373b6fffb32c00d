"""A model import's body read within the model size limit (PGS_MAX_MODEL_BYTES): its document and
the dtype and shape of each array come first, and nothing larger than the limit is allocated to
learn them.

- npz: the zip's directory is sized from its end record before zipfile reads it (zipfile builds
  up to ``DIRECTORY_COST`` bytes of objects per byte of it), and the members' uncompressed sizes
  are summed from it; each member's .npy header is then read by inflating a few hundred bytes,
  and a member must hold exactly the array its header declares, so loading it inflates and
  allocates that much and no more.
- JSON: what ``json.loads`` will build is bounded from the text first (:func:`json_parse_bytes`),
  then each array's declared dtype, shape and list length are checked.

The arrays are built only by :attr:`Source.load`, once app.services.model_registry.import_checks
has checked their headers against the document.
"""

from __future__ import annotations

import io
import json
import math
import struct
import zipfile
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.lib import format as npy

from app.core.config import Settings
from app.core.errors import ProblemError, field_error, invalid
from app.services.model_registry.portable import DOC_KEY

# The array dtypes of a model: weights and statistics, indices and counts, and (kind "U")
# categories and the npz's document.
NUMBER_DTYPES = {"float64": "f", "int64": "i", "int32": "i"}
# Objects zipfile builds per byte of the zip's directory, at most: a ZipInfo (about 500 bytes)
# per entry of at least 46 bytes, plus up to 4 bytes per byte of a name (one astral character
# makes the whole name 4 bytes per character); tests/app/model_registry/test_import_read.py
# measures it.
DIRECTORY_COST = 16
# What json.loads builds for one value, at most: a dict or list (64 bytes), a number (a float 24,
# an int below 2**64 36) or a string's header (up to 80), with the slot that holds it in its
# parent and, for a key, its entry in the dict and in the parser's memo of keys. Measured by the
# same test.
JSON_VALUE_BYTES = 80
# RuntimeError: an encrypted member; zlib.error: a broken deflate stream.
NPZ_ERRORS = (ValueError, OSError, EOFError, zipfile.BadZipFile, zlib.error, RuntimeError)
_END = struct.Struct("<4s4H2LH")  # the zip's end of central directory record
_END64_LOCATOR = struct.Struct("<4sLQL")
_END64 = struct.Struct("<4sQ2H2L4Q")


@dataclass(frozen=True)
class ImportLimits:
    max_bytes: int  # PGS_MAX_MODEL_BYTES
    max_features: int  # PGS_MAX_FEATURES

    @classmethod
    def of(cls, settings: Settings) -> ImportLimits:
        return cls(settings.max_model_bytes, settings.max_features)


def refuse(loc: Sequence[str | int], message: str) -> ProblemError:
    """422 naming the field ``loc`` (below the body) and the rule it breaks."""
    where = ".".join(str(p) for p in loc)
    return invalid(
        f"not a model export: {where + ': ' if where else ''}{message}",
        [field_error(["body", *loc], message)],
    )


def too_large(loc: Sequence[str | int], what: str, size: int, limit: int) -> ProblemError:
    """413: ``what`` takes ``size`` bytes, more than PGS_MAX_MODEL_BYTES (``limit``)."""
    message = f"{what}: {size} bytes, over the limit of {limit} bytes (PGS_MAX_MODEL_BYTES)"
    where = ".".join(str(p) for p in loc)
    return ProblemError(
        413,
        f"the model is too large: {where + ': ' if where else ''}{message}",
        kind="payload-too-large",
        errors=[field_error(["body", *loc], message)],
    )


@dataclass(frozen=True)
class ArrayHeader:
    """An array as its .npy header or its JSON spec declares it, before it is built."""

    dtype: np.dtype[Any]
    shape: tuple[int, ...]

    @property
    def kind(self) -> str:
        """The array's kind: "f" (float64), "i" (int64 or int32) or "U" (strings)."""
        return "U" if self.dtype.kind == "U" else NUMBER_DTYPES[self.dtype.name]

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize


@dataclass(frozen=True)
class Source:
    """A parsed document, the headers of its arrays, and how to build the arrays."""

    doc: dict[str, Any]
    headers: dict[str, ArrayHeader]
    load: Callable[[], dict[str, np.ndarray]]


def _checked_header(name: str, dtype: np.dtype[Any], shape: tuple[int, ...]) -> ArrayHeader:
    if dtype.hasobject:
        raise refuse(["arrays", name], "object arrays are refused: they would need pickle")
    if dtype.kind != "U" and dtype.name not in NUMBER_DTYPES:
        raise refuse(["arrays", name], f"dtype {dtype} is not one of {sorted(NUMBER_DTYPES)} or strings")
    if len(shape) > 2:
        raise refuse(["arrays", name], f"shape {list(shape)} has more than 2 dimensions")
    if dtype.itemsize == 0:  # numpy would build any number of these for free
        raise refuse(["arrays", name], f"dtype {dtype} holds nothing")
    return ArrayHeader(dtype, shape)


def _charge(sizes: dict[str, int], limit: int, what: str) -> None:
    """413 when the arrays' ``sizes`` (bytes) pass ``limit``; names the largest."""
    total = sum(sizes.values())
    if total > limit:
        largest = max(sizes, key=lambda name: sizes[name])
        raise too_large(["arrays", largest], f"{what} (the largest is {largest!r})", total, limit)


# -- JSON -------------------------------------------------------------------------------------------


def json_parse_bytes(text: str | bytes) -> int:
    """At most what ``json.loads(text)`` allocates: ``JSON_VALUE_BYTES`` per value (each value
    after the first follows a comma, a colon or an opening bracket), and the characters of its
    strings, 1 byte each when the text is ASCII with no \\u escape, else up to 4."""
    if isinstance(text, str):
        values = 1 + sum(text.count(mark) for mark in ",:[{")
        plain = text.isascii() and "\\u" not in text
    else:
        values = 1 + sum(text.count(mark) for mark in (b",", b":", b"[", b"{"))
        plain = text.isascii() and b"\\u" not in text
    return JSON_VALUE_BYTES * values + (1 if plain else 4) * len(text)


def parse_json(text: str | bytes, limit: int, loc: Sequence[str | int]) -> dict[str, Any]:
    """The JSON object ``text``; 413 before parsing when parsing it could take more than ``limit``."""
    need = json_parse_bytes(text)
    if need > limit:
        raise too_large(loc, "the JSON document once parsed, at most", need, limit)
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as exc:
        # ValueError: JSONDecodeError, UnicodeDecodeError, an int of over 4300 digits.
        raise refuse(loc, f"invalid JSON ({exc})") from exc
    if not isinstance(doc, dict):
        raise refuse(loc, "the document is not a JSON object")
    return doc


def read_json(body: bytes, limits: ImportLimits) -> Source:
    doc = parse_json(body, limits.max_bytes, [])
    encoded = doc.pop("arrays", None)
    if not isinstance(encoded, dict):
        raise refuse(["arrays"], "the JSON has no 'arrays' object")
    headers = {name: _json_header(name, spec) for name, spec in encoded.items()}
    _charge({name: h.nbytes for name, h in headers.items()}, limits.max_bytes, "the arrays")

    def load() -> dict[str, np.ndarray]:
        # Each list is dropped once its array is built: the two forms of an array overlap once.
        return {name: _json_array(name, encoded.pop(name)["data"], headers[name]) for name in headers}

    return Source(doc, headers, load)


def _json_header(name: str, spec: Any) -> ArrayHeader:
    loc = ["arrays", name]
    if not isinstance(spec, dict) or set(spec) != {"dtype", "shape", "data"}:
        raise refuse(loc, "an array is an object with dtype, shape and data")
    dtype, shape, data = spec["dtype"], spec["shape"], spec["data"]
    if dtype not in (*NUMBER_DTYPES, "str"):
        raise refuse([*loc, "dtype"], f"dtype {dtype!r} is not one of {sorted((*NUMBER_DTYPES, 'str'))}")
    if not isinstance(shape, list) or not all(type(d) is int and d >= 0 for d in shape):
        raise refuse([*loc, "shape"], "shape is a list of sizes")
    if not isinstance(data, list) or len(data) != math.prod(shape):
        raise refuse([*loc, "data"], f"data must be a list of {math.prod(shape)} values")
    kind = str if dtype == "str" else (float if dtype == "float64" else int)
    if not all(type(v) is kind or (kind is float and type(v) is int) for v in data):
        raise refuse([*loc, "data"], f"every value must be a {kind.__name__}")
    # A string array takes 4 bytes per character of its longest string, for every string.
    width = max(map(len, data), default=1) if dtype == "str" else 0
    return _checked_header(name, np.dtype(f"<U{max(width, 1)}" if dtype == "str" else dtype), tuple(shape))


def _json_array(name: str, data: list[Any], header: ArrayHeader) -> np.ndarray:
    try:
        return np.asarray(data, dtype=header.dtype).reshape(header.shape)
    except (OverflowError, ValueError) as exc:  # an int beyond int64 (or beyond a float)
        raise refuse(["arrays", name, "data"], f"a value does not fit {header.dtype}: {exc}") from exc


# -- npz ----------------------------------------------------------------------------------------------


def read_npz(body: bytes, limits: ImportLimits) -> Source:
    limit = limits.max_bytes
    directory = DIRECTORY_COST * directory_size(body)
    if directory > limit:
        raise too_large([], "the zip's directory once read", directory, limit)
    try:
        archive = zipfile.ZipFile(io.BytesIO(body))
        infos = _members(archive)
        _charge({name: info.file_size for name, info in infos.items()}, limit, "the arrays once inflated")
        headers = {name: _member_header(archive, name, info) for name, info in infos.items()}
    except NPZ_ERRORS as exc:
        raise refuse([], f"not a readable .npz file ({exc})") from exc
    doc_header = headers.pop(DOC_KEY, None)
    if doc_header is None or doc_header.kind != "U" or doc_header.shape != ():
        raise refuse([], f"the .npz has no {DOC_KEY} document (a 0-d string array)")
    text = str(_load_member(archive, DOC_KEY, infos.pop(DOC_KEY)).item())
    doc = parse_json(text, limit, ["arrays", DOC_KEY])

    def load() -> dict[str, np.ndarray]:
        return {name: _load_member(archive, name, info) for name, info in infos.items()}

    return Source(doc, headers, load)


def directory_size(body: bytes) -> int:
    """The bytes of the zip's central directory as zipfile will read them: its end record is
    found where zipfile looks for it (at the very end, else the last one within a maximal
    comment of the end), and a zip64 end record, when there is one, gives the size instead.
    0 when there is no end record (zipfile then refuses the file without reading anything)."""
    end = len(body) - _END.size
    if not (end >= 0 and body.startswith(b"PK\x05\x06", end) and body.endswith(b"\0\0")):
        end = body.rfind(b"PK\x05\x06", max(end - 0x10000, 0))
        if end < 0 or end + _END.size > len(body):
            return 0
    size: int = _END.unpack_from(body, end)[5]
    locator = end - _END64_LOCATOR.size
    record = locator - _END64.size
    if record >= 0 and body.startswith(b"PK\x06\x07", locator) and body.startswith(b"PK\x06\x06", record):
        size = _END64.unpack_from(body, record)[8]
    return size


def _members(archive: zipfile.ZipFile) -> dict[str, zipfile.ZipInfo]:
    """Each member by its array name (its file name less ``.npy``)."""
    infos: dict[str, zipfile.ZipInfo] = {}
    for info in archive.infolist():
        name = info.filename.removesuffix(".npy")
        if name == info.filename or name in infos:
            raise refuse(["arrays", name], "every member of the .npz is one distinct <name>.npy array")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise refuse(["arrays", name], "members are stored or deflated (as numpy.savez writes them)")
        infos[name] = info
    return infos


def _member_header(archive: zipfile.ZipFile, name: str, info: zipfile.ZipInfo) -> ArrayHeader:
    """The member's .npy header (inflating only its first bytes); it must declare exactly the
    bytes the zip entry holds, so loading the member allocates what the header says."""
    with archive.open(info) as fh:
        version = npy.read_magic(fh)
        if version == (1, 0):
            shape, _, dtype = npy.read_array_header_1_0(fh)
        elif version == (2, 0):
            shape, _, dtype = npy.read_array_header_2_0(fh)
        else:
            raise refuse(["arrays", name], f".npy format version {version} is not 1.0 or 2.0")
        offset = fh.tell()
    header = _checked_header(name, dtype, shape)
    if offset + header.nbytes != info.file_size:
        raise refuse(
            ["arrays", name],
            f"its header declares {header.nbytes} bytes of {dtype} {list(shape)}, "
            f"but the zip entry holds {info.file_size - offset}",
        )
    return header


def _load_member(archive: zipfile.ZipFile, name: str, info: zipfile.ZipInfo) -> np.ndarray:
    try:
        with archive.open(info) as fh:
            return npy.read_array(fh, allow_pickle=False)
    except NPZ_ERRORS as exc:
        raise refuse(["arrays", name], f"not a readable array ({exc})") from exc
