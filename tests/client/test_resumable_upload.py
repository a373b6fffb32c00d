"""A multi-GiB gzip file through the real server in resumable chunks, the connection cut in the
middle of a chunk, the upload resumed from the offset the server reports (the client and the
``pgs`` command do it by themselves), finished, and the data set trained on.

The file is generated quickly and streaming: one gzip member (svmlight rows, each with a
comment of random characters that level-1 deflate cannot shrink much) written again and again;
concatenated gzip members are one valid gzip stream. The comments make the file large while the
rows stay few, so the parse stays within this test's time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import socket
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pgs_client import Client
from pgs_client.resumable import CHUNK_BYTES, ResumeStore, Uploader

from tests.client.conftest import _hang_up, run_pgs, running_service

# Against real services (conftest.py): out of make test-fast.
pytestmark = pytest.mark.system

GIB = 1024**3
FILE_BYTES = 2 * GIB + 1  # "multi-GiB": past 2 GiB, where 32-bit sizes break
CUT_AFTER_BYTES = 100 * 1024 * 1024 + 12345  # into the second chunk's PATCH body
ALPHABET = np.frombuffer(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", np.uint8)


def _member(seed: int, rows: int = 400, pad: int = 8000) -> bytes:
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(rows):
        idx = np.sort(rng.choice(30, 5, replace=False)) + 1
        val = rng.normal(size=5)
        label = 1 if val[0] + 0.5 * val[1] > 0 else -1
        junk = ALPHABET[rng.integers(0, 64, pad)].tobytes().decode()
        features = " ".join(f"{j}:{v:.3f}" for j, v in zip(idx, val, strict=True))
        lines.append(f"{label} {features} # {junk}")
    deflate = zlib.compressobj(1, zlib.DEFLATED, 31)  # wbits 31: a gzip member
    return deflate.compress(("\n".join(lines) + "\n").encode()) + deflate.flush()


def write_big_gzip(path: Path, size: int) -> str:
    """At least ``size`` bytes of gzip'ed svmlight; returns its SHA-256."""
    member = _member(0)
    digest = hashlib.sha256()
    written = 0
    with path.open("wb") as fh:
        while written < size:
            fh.write(member)
            digest.update(member)
            written += len(member)
    return digest.hexdigest()


class CuttingProxy:
    """Forwards loopback TCP to ``upstream``, but cuts the first request that starts with
    ``marker`` (on any connection) after ``after`` more bytes: a connection dropped mid-chunk."""

    def __init__(self, upstream_port: int, marker: bytes, after: int):
        self.upstream_port, self.marker, self.after = upstream_port, marker, after
        self.cuts = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._threads: list[threading.Thread] = []
        self._spawn(self._accept)

    def _spawn(self, target: Any, *args: Any) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = self._listener.accept()
                upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
                self._spawn(self._pump, upstream, conn, False)
                self._spawn(self._pump, conn, upstream, True)

    def _pump(self, src: socket.socket, dst: socket.socket, outgoing: bool) -> None:
        left: int | None = None
        with contextlib.suppress(OSError):
            while chunk := src.recv(1 << 20):
                if outgoing and left is None and self.cuts == 0 and self.marker in chunk:
                    left = self.after + len(chunk) - chunk.index(self.marker)
                if left is not None:
                    if len(chunk) >= left:
                        dst.sendall(chunk[:left])
                        self.cuts += 1
                        break
                    left -= len(chunk)
                dst.sendall(chunk)
        _hang_up(src, dst)

    def close(self) -> None:
        _hang_up(self._listener)
        for thread in self._threads:
            thread.join(timeout=5)


@pytest.fixture(scope="module")
def big_file(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    path = tmp_path_factory.mktemp("big") / "big.svm.gz"
    sha = write_big_gzip(path, FILE_BYTES)
    yield path, sha
    path.unlink()


@pytest.mark.large
def test_a_multi_gib_upload_cut_mid_chunk_resumes_and_trains(
    tmp_path: Path,
    big_file: tuple[Path, str],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
):
    path, source_sha = big_file
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    caplog.set_level(logging.INFO, logger="pgs_client")
    env = {"PGS_MAX_DECOMPRESSED_BYTES": str(8 * GIB), "PGS_PARSE_TIMEOUT_S": "1200"}
    with running_service(tmp_path / "svc", **env) as server:
        proxy = CuttingProxy(server.port, b"PATCH /v1/uploads/", CUT_AFTER_BYTES)
        try:
            with Client(proxy.url, timeout=300) as client:
                ds = client.datasets.upload(path, "big", progress=False)
        finally:
            proxy.close()
        assert proxy.cuts == 1
        # The first resume starts inside the chunk that broke: what arrived before the cut was
        # kept. (A PATCH sent at once may still meet the broken one writing its last buffered
        # bytes: a 409, and the client resumes again from the newer offset.)
        resumed = [
            int(r.getMessage().rsplit(" ", 1)[1])
            for r in caplog.records
            if "resuming at byte" in r.getMessage()
        ]
        assert resumed and resumed == sorted(resumed), resumed
        assert CHUNK_BYTES < resumed[0] < 2 * CHUNK_BYTES, resumed
        assert ds.sha256 == source_sha and ds.size_bytes == path.stat().st_size
        assert ds.n_samples > 0 and ds.task == "binary"
        with Client(server.base) as client:
            job = client.jobs.wait(client.jobs.create(ds, params={"loss": "logistic"}, test_fraction=0.2))
            assert job.status == "succeeded", job
            # The uploads area is empty once the data set exists.
            assert list((tmp_path / "svc" / "var" / "uploads").iterdir()) == []


def test_the_pgs_command_resumes_an_upload_it_had_started(tmp_path: Path):
    """An upload stopped after its first chunk (the program ended) is resumed by running the
    same command again: the second run sends only the rest."""
    path = tmp_path / "d.svm.gz"
    sha = write_big_gzip(path, 3 * 1024 * 1024)
    cache = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    with running_service(tmp_path / "svc") as server:
        with Client(server.base) as client:
            store = ResumeStore(tmp_path / "cache" / "pgs-client" / "uploads.json")
            uploader = Uploader(client._transport, store, chunk_size=1024 * 1024)
            location = uploader._create(path.stat().st_size, path.name)
            store.put(ResumeStore.key(client.url, path), location)
            with path.open("rb") as fh:
                assert uploader._patch(location, fh, 0, 1024 * 1024) == 1024 * 1024
        r = run_pgs("datasets", "upload", str(path), "--resumable", "--json", url=server.base, **cache)
        assert r.returncode == 0, r.stderr
        ds = json.loads(r.stdout)
        assert ds["sha256"] == sha
        # The data set came from the upload the first run had started, not from a new one.
        with Client(server.base) as client:
            upload = client._transport.get(location)
        assert (upload["state"], upload["dataset_id"]) == ("done", ds["id"])
