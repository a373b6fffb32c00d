"""The client against real services: ``python -m app`` on free loopback ports, each with a temp
data dir (its own SQLite file) and its real worker pool; real data from ../shared/data."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pgs_client import Client, Dataset, Job

from tests.cluster.harness import ApiServer, running_service

# Predictions over this many bytes are refused by the main test service (413), so that the
# client's batch splitting runs against the real limit; the default is 64 MiB.
PREDICT_LIMIT = 256 * 1024
API_KEY = "client-test-key"
# The console script installed beside this interpreter (pip install -e './client[all]').
PGS = str(Path(sys.executable).parent / "pgs")


@pytest.fixture(scope="session")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    """The service most tests share (they create their own data sets and jobs)."""
    with running_service(
        tmp_path_factory.mktemp("service"), PGS_MAX_PREDICT_BYTES=str(PREDICT_LIMIT)
    ) as server:
        yield server


@pytest.fixture(scope="session")
def strict_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    """API keys, a 100 kB upload limit and a short SQLite busy timeout (a locked database
    answers 503 within half a second). Faults are made here, so its log has tracebacks."""
    with running_service(
        tmp_path_factory.mktemp("strict"),
        clean_log=False,
        PGS_API_KEYS=API_KEY,
        PGS_MAX_UPLOAD_BYTES="100000",
        PGS_SQLITE_BUSY_TIMEOUT_S="0.5",
        PGS_PRESTART_WORKERS="false",
    ) as server:
        yield server


@pytest.fixture
def client(service: ApiServer) -> Iterator[Client]:
    with Client(service.base) as c:
        yield c


@pytest.fixture(scope="session")
def heart(data_dir: Path) -> Path:
    return data_dir / "heart_scale.svm"


@pytest.fixture(scope="session")
def heart_job(service: ApiServer, heart: Path) -> tuple[Dataset, Job]:
    """heart_scale, uploaded, and a logistic model trained on 75 % of it."""
    with Client(service.base) as c:
        ds = c.datasets.upload(heart, name="heart")
        job = c.jobs.create(
            ds,
            params={"loss": "logistic", "sigma": 1e-3, "random_state": 0},
            test_fraction=0.25,
            targets=[0.8],
        )
        return ds, c.jobs.wait(job)


class DroppingProxy:
    """A TCP proxy on loopback that forwards to ``upstream`` but, for the first connection
    whose request starts with ``prefix``, lets the service answer and then closes the client's
    connection without passing the answer on: a response lost on the way back."""

    def __init__(self, upstream_port: int, prefix: bytes):
        self.upstream_port, self.prefix = upstream_port, prefix
        self.dropped = 0
        self._armed = True
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._threads: list[threading.Thread] = []
        self._spawn(self._accept)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _spawn(self, target: Any, *args: Any) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _accept(self) -> None:
        with contextlib.suppress(OSError):  # the listener closed
            while True:
                conn, _ = self._listener.accept()
                self._spawn(self._serve, conn)

    def _serve(self, conn: socket.socket) -> None:
        upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
        first = conn.recv(65536)
        drop = self._armed and first.startswith(self.prefix)
        if drop:
            self._armed = False
        upstream.sendall(first)
        self._spawn(self._pump, conn, upstream)
        if drop:
            upstream.recv(65536)  # the service has answered: it did the work
            self.dropped += 1
            _hang_up(conn, upstream)
            return
        self._pump(upstream, conn)

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while chunk := src.recv(65536):
                dst.sendall(chunk)
        _hang_up(src, dst)

    def close(self) -> None:
        _hang_up(self._listener)  # shutdown wakes the thread blocked in accept()
        for thread in self._threads:
            thread.join(timeout=5)


def _hang_up(*sockets: socket.socket) -> None:
    # shutdown, not only close: it sends the FIN and wakes a thread blocked in recv/accept.
    for s in sockets:
        with contextlib.suppress(OSError):
            s.shutdown(socket.SHUT_RDWR)
        s.close()


def run_pgs(*args: str, url: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The installed ``pgs`` command in a subprocess, with ``PGS_URL`` (and ``env``) set."""
    full_env = {k: v for k, v in os.environ.items() if k not in ("PGS_URL", "PGS_API_KEY")}
    full_env.update(PGS_URL=url, **env)
    return subprocess.run(
        [PGS, *args], capture_output=True, text=True, env=full_env, timeout=600, stdin=subprocess.DEVNULL
    )
