"""A batch prediction's stored result streamed as CSV, JSON lines or .npy, a block of rows at a
time: the result is never whole in memory, whatever its size."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any, Literal

import numpy as np

from app.core.storage.base import Store
from app.services.model_registry.npy_stream import iter_rows, read_header

ResultFormat = Literal["csv", "jsonl", "npy"]
MEDIA_TYPES: dict[str, str] = {
    "csv": "text/csv",
    "jsonl": "application/x-ndjson",
    "npy": "application/x-npy",
}
# Accept header values that choose a format when ?format= is absent.
ACCEPTED: dict[str, ResultFormat] = {
    "text/csv": "csv",
    "application/x-ndjson": "jsonl",
    "application/jsonl": "jsonl",
    "application/x-npy": "npy",
    "application/octet-stream": "npy",
}
# Rows formatted at a time: a block's text and its Python objects stay under a megabyte.
BLOCK_ROWS = 1024
NPY_CHUNK_BYTES = 1 << 20


def format_from_accept(accept: str) -> ResultFormat | None:
    for part in accept.split(","):
        media = part.split(";", 1)[0].strip().lower()
        if media in ACCEPTED:
            return ACCEPTED[media]
    return None


def _columns(outputs: dict[str, tuple[int, ...]], classes: list[Any] | None) -> list[str]:
    """CSV header: row, prediction, the score(s), the probabilities (one per class)."""
    names = ["row", "prediction"]
    for output, prefix in (("scores", "score"), ("probabilities", "probability")):
        shape = outputs.get(output)
        if shape is None:
            continue
        if len(shape) == 1:
            names.append(prefix)
        else:
            labels = classes if classes and len(classes) == shape[1] else range(shape[1])
            names.extend(f"{prefix}_{label}" for label in labels)
    return names


def _blocks(store: Store, keys: dict[str, str]) -> Iterator[tuple[int, dict[str, np.ndarray]]]:
    """(first row, {output: its block}) for the outputs in lockstep."""
    with ExitStack() as stack:
        iters = {
            name: iter_rows(stack.enter_context(store.open(key)), BLOCK_ROWS) for name, key in keys.items()
        }
        start = 0
        for blocks in zip(*iters.values(), strict=True):
            yield start, dict(zip(iters, blocks, strict=True))
            start += blocks[0].shape[0]


def _shapes(store: Store, keys: dict[str, str]) -> dict[str, tuple[int, ...]]:
    shapes = {}
    for name, key in keys.items():
        with store.open(key) as fh:
            shapes[name] = read_header(fh)[0]
    return shapes


def stream_csv(store: Store, keys: dict[str, str], classes: list[Any] | None) -> Iterator[bytes]:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(_columns(_shapes(store, keys), classes))
    for start, block in _blocks(store, keys):
        parts = [
            np.arange(start, start + block["predictions"].shape[0])[:, None],
            block["predictions"][:, None],
        ]
        for name in ("scores", "probabilities"):
            if name in block:
                arr = block[name]
                parts.append(arr[:, None] if arr.ndim == 1 else arr)
        rows = np.concatenate([p.astype(object) for p in parts], axis=1)
        writer.writerows(rows.tolist())
        yield buffer.getvalue().encode()
        buffer.seek(0)
        buffer.truncate()
    if buffer.tell():
        yield buffer.getvalue().encode()


def stream_jsonl(store: Store, keys: dict[str, str]) -> Iterator[bytes]:
    singular = {"predictions": "prediction", "scores": "score", "probabilities": "probabilities"}
    for start, block in _blocks(store, keys):
        columns = {singular[name]: arr.tolist() for name, arr in block.items()}
        n = block["predictions"].shape[0]
        lines = (
            json.dumps({"row": start + i, **{k: v[i] for k, v in columns.items()}}, allow_nan=False)
            for i in range(n)
        )
        yield ("\n".join(lines) + "\n").encode()


def stream_npy(store: Store, key: str) -> Iterator[bytes]:
    with store.open(key) as fh:
        while chunk := fh.read(NPY_CHUNK_BYTES):
            yield chunk
