"""What the service tests share (tests/app, tests/faults, tests/fuzz): the settings of a real app
on a fresh data dir and SQLite file, and the calls and checks they all make. The fixtures built
on these are in tests/conftest.py; processes (uvicorn, PostgreSQL, Dask) in
tests/cluster/harness.py."""

from __future__ import annotations

import asyncio
import os
import subprocess
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from app.core.config import Settings
from app.core.storage.base import Store

REPO = Path(__file__).resolve().parents[1]
# Worker processes inherit this: compiled kernels are loaded, not rebuilt, in every test app.
os.environ.setdefault("NUMBA_CACHE_DIR", str(REPO / "var" / "numba-cache"))

PROBLEM = "application/problem+json"


def run_async(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """``asyncio.run(coroutine)`` on a thread of its own, its exception raised here: the browser
    tests' session-wide Playwright keeps an event loop running on the main thread, where
    asyncio.run() refuses."""
    with ThreadPoolExecutor(max_workers=1) as thread:
        return thread.submit(asyncio.run, coroutine).result()


# Generous: these bound a hang, they do not measure speed.
JOB_TIMEOUT_S = 180.0


@contextmanager
def http_server(handler: Callable[..., BaseHTTPRequestHandler]) -> Iterator[str]:
    """``http://127.0.0.1:<a free port>`` answered by ``handler`` in threads, for the block: the
    stand-in for a remote host (an import's source). Its handlers must end by themselves."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def make_settings(root: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "data_dir": root / "var",
        "workers": 1,
        "prestart_workers": False,
        "progress_interval_s": 0.1,
        "api_keys": "",
        "allow_anonymous": False,
        # Not 64 MiB of allocated disk in every test's temp dir (pytest keeps three runs of
        # them); the tests of the reserve set it.
        "disk_reserve_bytes": 0,
    }
    values.update(overrides)
    return Settings(**values)


def upload(client: TestClient, content: bytes | Path, filename: str = "data.svm", **fields: str) -> Any:
    data = content.read_bytes() if isinstance(content, Path) else content
    return client.post("/v1/datasets", files={"file": (filename, data)}, data=fields)


def create_job(client: TestClient, headers: dict[str, str] | None = None, **body: Any) -> Any:
    return client.post("/v1/jobs", json=body, headers=headers or {})


def poll(
    client: TestClient,
    path: str,
    done: Callable[[dict[str, Any]], bool],
    timeout: float = JOB_TIMEOUT_S,
    interval: float = 0.05,
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    """GET ``path`` (with ``headers``) until ``done(body)``; returns the body."""
    deadline = time.monotonic() + timeout
    while True:
        body: dict[str, Any] = client.get(path, headers=headers).json()
        if done(body):
            return body
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} did not get there in {timeout} s: {body}")
        time.sleep(interval)


def wait_for(
    client: TestClient,
    job_id: int,
    done: Callable[[dict[str, Any]], bool] | None = None,
    timeout: float = JOB_TIMEOUT_S,
) -> dict[str, Any]:
    """Poll the job until ``done(job)`` (default: a terminal status)."""
    done = done or (lambda j: j["status"] in ("succeeded", "failed", "cancelled"))
    return poll(client, f"/v1/jobs/{job_id}", done, timeout)


def metric(client: Any, name: str, **labels: str) -> float:
    """The sample ``name{labels}`` of the service's /metrics (0 while a labelled one does not
    exist yet); ``client`` is a TestClient or an httpx.Client on a real server."""
    for family in text_string_to_metric_families(client.get("/metrics").text):
        for sample in family.samples:
            if sample.name == name and sample.labels == labels:
                return float(sample.value)
    return 0.0


def assert_problem(response: Any, status: int, field: str | None = None) -> dict[str, Any]:
    """An RFC 9457 body with the given status (and, for validation, an error naming ``field``)."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM), response.headers
    body = response.json()
    assert body["status"] == status
    assert body["title"] and body["type"] and body["detail"]
    if field is not None:
        fields = [e["field"] for e in body.get("errors", [])]
        assert any(f == field or f.startswith(field + ".") for f in fields), (field, body)
    return body


def assert_nothing_stored(client: TestClient, data_dir: Path) -> None:
    """A refused upload left no data set: no row, no shard, no temp file."""
    assert client.get("/v1/datasets").json()["items"] == []
    assert list((data_dir / "datasets").iterdir()) == []
    assert list((data_dir / "tmp").iterdir()) == []


def stored_rows(store: Store, key: str) -> tuple[Any, Any]:
    """A stored data set's rows as one CSR matrix and its labels (read through the shards)."""
    from app.services.datasets.shards import open_dataset
    from app.services.jobs.rows import RowSelection

    data = open_dataset(store, key)
    return RowSelection(data, data.manifest.n_features).in_memory()


def parse_rows(path: Path, store_root: Path, shard_bytes: int = 512, **options: Any) -> Any:
    """Parse the file at ``path`` into small shards under ``store_root`` and read it back: the
    summary's fields plus ``X``, ``y`` and ``manifest``."""
    from types import SimpleNamespace

    from app.core.storage.local import LocalDirStore
    from app.services.datasets.parse_base import ParseOptions
    from app.services.datasets.parsing import parse_upload
    from app.services.datasets.shards import ShardWriter, new_dataset_key

    store, key = LocalDirStore(store_root), new_dataset_key()
    writer = ShardWriter(store, key, shard_bytes=shard_bytes, max_bytes=2**62, over_limit=OverflowError)
    parsed = parse_upload(path, ParseOptions(**options), writer)
    manifest = writer.finish(parsed.n_features)
    X, y = stored_rows(store, key)
    return SimpleNamespace(**vars(parsed), X=X, y=y, manifest=manifest)


def one_shard_split(n: int, fraction: float, seed: int) -> tuple[Any, Any]:
    """(training rows, held-out rows) of the service's seeded split of a data set stored in one
    shard (app.services.datasets.splits.ShardSplit), as sorted indices."""
    import numpy as np

    from app.services.datasets.splits import ShardSplit

    held_out = ShardSplit([n], fraction, seed).held_out_mask(0)
    return np.flatnonzero(~held_out), np.flatnonzero(held_out)


@contextmanager
def tmpfs(point: Path, size_kb: int) -> Iterator[Path]:
    """A real, tiny file system at ``point`` (a tmpfs of ``size_kb`` KiB) for the life of the
    block. Mounting needs root, which CI has; elsewhere the test skips."""
    point.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_kb}k,mode=0755", "tmpfs", str(point)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.strip()}")
    try:
        yield point
    finally:
        subprocess.run(["umount", "-l", str(point)], check=False)


def assert_same_preprocessor(got: Any, expected: Any) -> None:
    """Two fitted preprocessors (solver.make_preprocessor) with the same settings and fitted
    arrays: floats to 1e-12 relative (statistics merged in another order round differently)."""
    import numpy as np

    from solver import export_preprocessor

    meta, arrays = export_preprocessor(got)
    ref_meta, ref_arrays = export_preprocessor(expected)
    assert meta == ref_meta and arrays.keys() == ref_arrays.keys()
    for name, value in ref_arrays.items():
        if value.dtype.kind == "f":
            np.testing.assert_allclose(arrays[name], value, rtol=1e-12, atol=1e-300, err_msg=name)
        else:
            assert np.array_equal(arrays[name], value), name
