"""Model files for POST /v1/models built from a real export, hostile ones and large valid ones:
the attack replays (test_model_import_attacks.py) and the memory measurements of a real server
(test_model_import_memory.py) send the same."""

from __future__ import annotations

import copy
import io
import json
import zipfile
from typing import Any

import numpy as np
from numpy.lib import format as npy

JSON = {"content-type": "application/json"}
NPZ = {"content-type": "application/octet-stream"}


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)  # type: ignore[arg-type]
    return buf.getvalue()


def npz_bomb(doc: dict[str, Any], inflated: int = 2**30) -> bytes:
    """An npz of about a megabyte whose ``coef`` member honestly inflates to ``inflated`` bytes
    of zeros (written in pieces: the bomb is never whole in this process's memory)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("__model__.npy", "w") as fh:
            npy.write_array(fh, np.asarray(json.dumps(doc)))
        with archive.open("coef.npy", "w", force_zip64=True) as fh:
            header = {"descr": "<f8", "fortran_order": False, "shape": (inflated // 8,)}
            npy.write_array_header_1_0(fh, header)
            piece = bytes(2**20)
            for _ in range(inflated // len(piece)):
                fh.write(piece)
    return buf.getvalue()


def json_parse_bomb(size: int) -> bytes:
    """About ``size`` bytes of JSON that json.loads would turn into 24 times as many (a list of
    empty objects)."""
    return b'{"format": "pgs-model", "model": [' + b"{}," * (size // 3) + b"{}]}"


def widened(doc: dict[str, Any], n: int, classes: list[Any] | None = None) -> dict[str, Any]:
    """The JSON export ``doc`` of a max-abs scaled svmlight model, claiming ``n`` features (its
    weights kept as non-zeros, so the body stays small) and, when given, these classes (a
    multiclass model: one output per class)."""
    doc = copy.deepcopy(doc)
    model, files, arrays = doc["model"], doc["files"], doc["arrays"]
    model["n_features"] = model["preprocessing"]["n_features"] = n
    files["service"]["n_features"] = files["service"]["preprocessing"]["n_features"] = n
    files["estimator"]["n_features_in"] = n
    outputs = 1
    if classes is not None:
        model["task"] = files["service"]["task"] = "multiclass"
        model["classes"] = files["service"]["classes"] = classes
        files["estimator"]["classes"] = list(range(len(classes)))
        outputs = len(classes)
        arrays["intercept"] = {"dtype": "float64", "shape": [outputs], "data": [0.0] * outputs}
    weights = arrays.pop("coef")["data"]
    arrays["coef_rows"] = {"dtype": "int32", "shape": [len(weights)], "data": [0] * len(weights)}
    arrays["coef_cols"] = {"dtype": "int64", "shape": [len(weights)], "data": list(range(len(weights)))}
    arrays["coef_values"] = {"dtype": "float64", "shape": [len(weights)], "data": weights}
    arrays["coef_shape"] = {"dtype": "int64", "shape": [2], "data": [outputs, n]}
    return doc


def wide_npz(doc: dict[str, Any], n: int) -> bytes:
    """A valid npz of the JSON export ``doc`` widened to ``n`` features, every one seen in
    training: dense random weights and max-abs statistics (about 16 bytes per feature)."""
    doc = widened(doc, n)
    intercept = doc.pop("arrays")["intercept"]["data"]
    rng = np.random.default_rng(0)
    return npz_bytes(
        {
            "__model__": np.asarray(json.dumps(doc)),
            "coef": rng.normal(scale=0.01, size=(1, n)),
            "intercept": np.asarray(intercept, dtype=np.float64),
            "preprocessing.scale.max_abs_.indices": np.arange(n, dtype=np.int64),
            "preprocessing.scale.max_abs_.values": rng.uniform(0.5, 2.0, size=n),
        }
    )
