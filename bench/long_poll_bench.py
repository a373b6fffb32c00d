"""Many long polls against a real server on loopback: what /readyz and a plain job read see while
``--polls`` clients wait on ``GET /v1/jobs/{id}?wait=30`` (the security review's row L6).

One pool worker runs a job that outlasts the measurement; the polls all wait on it, each on a
connection of its own. /readyz and ``GET /v1/jobs/{id}`` are each read one after the other, from
one client, for ``--seconds`` before the polls (quiet) and once the server counts them all waiting
(loaded): p50, p99 and max. The API process's CPU time over the loaded window, how long the polls
took to be all waiting, and how long each took to answer complete the record.

``--before DIR`` measures a second checkout too (e.g. ``git archive main | tar -x -C DIR``), served
with this virtual environment, so one record holds both sides of a change. Run:
``NUMBA_CACHE_DIR=var/numba-cache .venv/bin/python -m bench.long_poll_bench --before /tmp/main``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from tests.cluster.harness import tiny_svmlight

from . import tables
from .latency import percentiles
from .results import add_results_dir, record
from .server import BenchServer

REPO = Path(__file__).resolve().parents[1]
WAIT_S = 30
JOB = {"params": {"loss": "logistic", "sigma": 1e-4, "n_iter": 10**9}, "time_budget_s": 600}


class Server(BenchServer):
    """``python -m app`` from ``src``, anonymous, one pool worker, every poll allowed to wait."""

    def __init__(self, src: Path, root: Path, polls: int) -> None:
        super().__init__(src, root, PGS_MAX_LONG_POLLS_PER_OWNER=str(polls))
        self.start(timeout=300)

    def cpu_seconds(self) -> float:
        assert self.proc is not None
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


async def _probe(c: httpx.AsyncClient, path: str, seconds: float) -> dict[str, float]:
    """Read ``path`` one request after the other for ``seconds``; each must answer 200."""
    latencies: list[float] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t0 = time.perf_counter()
        r = await c.get(path)
        latencies.append(time.perf_counter() - t0)
        r.raise_for_status()
        await asyncio.sleep(0.02)
    return percentiles(latencies)


async def _long_poll(base: str, path: str) -> tuple[int, float]:
    """One poll on a connection of its own, as raw HTTP/1.1: the time from the request written
    to the answer read is the server's, not a client library's work for hundreds of connections."""
    host, port = base.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(f"GET {path}?wait={WAIT_S} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    t0 = time.perf_counter()
    answer = await reader.read()  # until the server closes: Connection: close
    took = time.perf_counter() - t0
    writer.close()
    return int(answer.split(b" ", 2)[1]), took


async def _waiting(c: httpx.AsyncClient) -> float:
    """The server's gauge of waiting long polls."""
    for line in (await c.get("/metrics")).text.splitlines():
        if line.startswith("pgs_long_polls_waiting "):
            return float(line.split()[1])
    return 0.0


async def _measure(server: Server, polls: int, seconds: float) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=server.base, timeout=120) as c:
        files = {"file": ("t.svm", tiny_svmlight(400, 20))}
        ds = (await c.post("/v1/datasets", files=files)).json()["id"]
        job = (await c.post("/v1/jobs", json={"dataset_id": ds, **JOB})).json()["id"]
        while (await c.get(f"/v1/jobs/{job}")).json()["status"] != "running":
            await asyncio.sleep(0.2)
        path = f"/v1/jobs/{job}"
        quiet = {"readyz": await _probe(c, "/readyz", seconds), "get_job": await _probe(c, path, seconds)}
        waiting = [asyncio.create_task(_long_poll(server.base, path)) for _ in range(polls)]
        sent = time.monotonic()
        while await _waiting(c) < polls:
            await asyncio.sleep(0.1)
        all_waiting_s = time.monotonic() - sent
        cpu0, t0 = server.cpu_seconds(), time.monotonic()
        loaded = {"readyz": await _probe(c, "/readyz", seconds), "get_job": await _probe(c, path, seconds)}
        cpu = (server.cpu_seconds() - cpu0) / (time.monotonic() - t0)
        answers = await asyncio.gather(*waiting)
        await c.post(f"{path}/cancel")
    took = [t for _, t in answers]
    return {
        "quiet": quiet,
        "loaded": loaded,
        "api_cpu_percent": round(100 * cpu, 1),
        "all_waiting_after_s": round(all_waiting_s, 1),
        "polls": {
            "n": polls,
            "ok": sum(status == 200 for status, _ in answers),
            "min_s": round(min(took), 2),
            "max_s": round(max(took), 2),
        },
    }


def run(src: Path, polls: int, seconds: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(src, Path(tmp), polls)
        try:
            return asyncio.run(_measure(server, polls, seconds))
        finally:
            server.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--polls", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=10.0, help="of each probe, quiet and loaded")
    parser.add_argument("--before", type=Path, help="a checkout of the code before a change, also measured")
    add_results_dir(parser)
    args = parser.parse_args(argv)
    recording = record("long_poll_bench", argv)
    results: dict[str, Any] = {"wait_s": WAIT_S}
    if args.before is not None:
        results["before"] = run(args.before, args.polls, args.seconds)
    results["after"] = run(REPO, args.polls, args.seconds)
    path = recording.save(results, args.results_dir)
    print(tables.long_poll_bench(results))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
