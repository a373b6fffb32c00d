"""Load on loopback: concurrent prediction clients plus a stream of training jobs.

For ``--duration`` seconds (default 60), ``--clients`` (default 50) concurrent clients send
single-row sparse predictions as fast as they get answers, while a second loop keeps
``--jobs-in-flight`` training jobs running (a new one as soon as one finishes). Reports
requests/s, p50/p99 latency, errors (anything but 200: must be 0) and jobs completed.

Setups (``--setup``):

* ``local``: the embedded default, SQLite and the local process pool (``PGS_WORKERS=1``).
* ``cluster``: a throwaway PostgreSQL and a Dask scheduler with two workers on loopback (the
  same harness as tests/cluster), the API configured with ``PGS_DATABASE_URL``/``PGS_EXECUTOR``.

The clients run in this process (asyncio + httpx), the server in its own: on a 2-core machine
they compete for the cores, so the figures are a floor of what the service does, not a ceiling.

Run: ``NUMBA_CACHE_DIR=var/numba-cache .venv/bin/python -m bench.load_bench --setup both``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from tests.cluster.harness import ApiServer, backend_env, poll_job

from . import tables
from .results import add_results_dir, record

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"


def _training_set() -> tuple[bytes, str]:
    """heart_scale from the shared data (the README's sample), else a generated set."""
    path = DATA / "heart_scale.svm"
    if path.exists():
        return path.read_bytes(), "heart_scale.svm"
    from tests.cluster.harness import tiny_svmlight

    return tiny_svmlight(2000, 30), "generated.svm"


class _Connection:
    """A minimal HTTP/1.1 keep-alive client on asyncio streams.

    httpx's async pool serializes on its own locks at this concurrency (50 connections gave
    ~70 req/s here, 4 gave ~400), which would measure the client, not the server.
    """

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post_json(self, path: str, body: bytes) -> int:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        self.writer.write(head.encode() + body)
        await self.writer.drain()
        status_line = await self.reader.readline()
        length = 0
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        await self.reader.readexactly(length)
        return int(status_line.split()[1])

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def prediction_clients(
    base: str, model_id: int, n_features: int, n_clients: int, stop_at: float
) -> dict[str, Any]:
    """``n_clients`` keep-alive clients sending single-row sparse predictions back to back until
    ``stop_at`` (``time.monotonic()``): requests, latency percentiles and errors."""
    latencies: list[float] = []
    errors: dict[str, int] = {}
    rng = np.random.default_rng(0)
    k = min(8, n_features)
    bodies = [
        json.dumps(
            {
                "instances": [
                    {
                        "indices": sorted(rng.choice(n_features, size=k, replace=False).tolist()),
                        "values": rng.normal(size=k).round(4).tolist(),
                    }
                ]
            }
        ).encode()
        for _ in range(256)
    ]
    url = f"/v1/models/{model_id}/predict"
    host, port = base.removeprefix("http://").split(":")

    async def one(first: int) -> None:
        conn = _Connection(host, int(port))
        i = first
        try:
            while time.monotonic() < stop_at:
                started = time.perf_counter()
                try:
                    status = await conn.post_json(url, bodies[i % len(bodies)])
                    if status != 200:
                        errors[str(status)] = errors.get(str(status), 0) + 1
                except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
                    errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
                    conn.close()
                    conn = _Connection(host, int(port))
                latencies.append(time.perf_counter() - started)
                i += n_clients
        finally:
            conn.close()

    began = time.monotonic()
    await asyncio.gather(*(one(k) for k in range(n_clients)))
    elapsed = time.monotonic() - began
    lat_ms = np.asarray(latencies) * 1000
    return {
        "requests": len(latencies),
        "requests_per_s": len(latencies) / elapsed,
        "p50_ms": float(np.percentile(lat_ms, 50)),
        "p99_ms": float(np.percentile(lat_ms, 99)),
        "max_ms": float(lat_ms.max()),
        "errors": sum(errors.values()),
        "error_kinds": errors,
    }


async def _training_stream(base: str, dataset_id: int, in_flight: int, stop_at: float) -> dict[str, Any]:
    body = {
        "dataset_id": dataset_id,
        "test_fraction": 0.25,
        "targets": [0.8],
        "params": {"loss": "logistic", "sigma": 1e-3, "n_iter": 20000},
    }
    completed, failed, submitted = 0, 0, 0
    durations: list[float] = []
    async with httpx.AsyncClient(base_url=base, timeout=30) as client:
        active: dict[int, float] = {}
        while time.monotonic() < stop_at or active:
            while len(active) < in_flight and time.monotonic() < stop_at:
                r = await client.post("/v1/jobs", json={**body, "split_seed": submitted})
                submitted += 1
                active[r.json()["id"]] = time.monotonic()
            await asyncio.sleep(0.2)
            for job_id in list(active):
                job = (await client.get(f"/v1/jobs/{job_id}")).json()
                if job["status"] in ("succeeded", "failed", "cancelled"):
                    durations.append(time.monotonic() - active.pop(job_id))
                    completed += job["status"] == "succeeded"
                    failed += job["status"] != "succeeded"
            if time.monotonic() > stop_at + 120:
                break
    return {
        "jobs_submitted": submitted,
        "jobs_completed": completed,
        "jobs_failed": failed,
        "job_wall_s_median": statistics.median(durations) if durations else None,
    }


def run_setup(setup: str, duration: float, n_clients: int, in_flight: int) -> dict[str, Any]:
    with ExitStack() as stack:
        root = Path(tempfile.mkdtemp(prefix=f"pgs-load-{setup}-"))
        stack.callback(shutil.rmtree, root, True)
        env = backend_env(setup, root, stack)
        api = ApiServer(root / "var", root / "api.log", **env).start()
        stack.callback(api.stop)
        content, name = _training_set()
        with api.client() as c:
            ds = c.post("/v1/datasets", files={"file": (name, content)}).json()
            first = poll_job(
                c, c.post("/v1/jobs", json={"dataset_id": ds["id"], "params": {"n_iter": 5000}}).json()["id"]
            )
            assert first["status"] == "succeeded", first

        async def both() -> tuple[dict[str, Any], dict[str, Any]]:
            stop_at = time.monotonic() + duration
            return await asyncio.gather(
                prediction_clients(api.base, first["model_id"], ds["n_features"], n_clients, stop_at),
                _training_stream(api.base, ds["id"], in_flight, stop_at),
            )

        predictions, training = asyncio.run(both())
        return {
            "setup": setup,
            "duration_s": duration,
            "clients": n_clients,
            "predictions": predictions,
            "training": training,
        }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--setup", choices=["local", "cluster", "both"], default="both")
    ap.add_argument("--duration", type=float, default=60.0)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--jobs-in-flight", type=int, default=2)
    add_results_dir(ap)
    args = ap.parse_args(argv)
    recording = record("load_bench", argv)
    setups = ["local", "cluster"] if args.setup == "both" else [args.setup]
    results = [run_setup(s, args.duration, args.clients, args.jobs_in_flight) for s in setups]
    path = recording.save(results, args.results_dir)
    print(tables.load_bench(results))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
