"""Hostile uploads and prediction bodies against a real server on loopback: time to the answer,
the API process's peak memory, and what predictions and /healthz see meanwhile.

Cases (``--cases``, default all):

* ``quiet``: single-row predictions from one client for ``--seconds``: p50/p99 (the baseline).
* ``upload``: the same predictions while a ``--upload-mb`` svmlight file (a9a rows repeated) is
  uploaded and parsed: predict p50/p99, the upload's status and time, the API's peak RSS growth.
* ``upload_gz``: the same with that file gzip-compressed (~10x smaller): mostly parsing time.
* ``bomb``: a gzip of ~150 MB of one-feature rows (about 150 KB compressed).
* ``newlines``: a ~3 MB gzip of ~3 GB of newlines after two valid rows.
* ``cr_rows``: a 36 MB text/plain prediction of ``\\r``-separated rows.
* ``json_rows``: a 64 MB JSON prediction of one-number rows.

Each hostile case reports its HTTP status, seconds to the answer, the API process's peak RSS
growth (VmHWM, reset before the case) and the worst /healthz latency polled every 10 ms.

``--src DIR`` runs the server from another checkout (e.g. ``git archive main | tar -x -C DIR``)
with this virtual environment, to compare before and after. Run:
``NUMBA_CACHE_DIR=var/numba-cache .venv/bin/python -m bench.hostile_bench``
"""

from __future__ import annotations

import argparse
import gzip
import json
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from tests.cluster.harness import tiny_svmlight

from . import procs, tables
from .latency import percentiles
from .results import add_results_dir, record
from .server import BenchServer

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
MIB = 1024 * 1024
CASES = ("quiet", "upload", "upload_gz", "bomb", "newlines", "cr_rows", "json_rows")


class Server(BenchServer):
    """``python -m app`` from ``src``, anonymous, one pool worker, uploads up to 1 GiB; ``http``
    talks to it."""

    def __init__(self, src: Path, root: Path, client_timeout: float) -> None:
        super().__init__(src, root, PGS_MAX_UPLOAD_BYTES=str(1024 * MIB))
        # /healthz: the first job (in _train) waits for the worker's warm-up instead.
        self.start(timeout=300, ready_path="/healthz")
        self.http = httpx.Client(base_url=self.base, timeout=client_timeout)

    def stop(self) -> bool:
        self.http.close()
        return super().stop()

    def reset_peak(self) -> int:
        assert self.proc is not None
        procs.reset_peak(self.proc.pid)
        return self.peak()

    def peak(self) -> int:
        assert self.proc is not None
        return procs.status_bytes(self.proc.pid, "VmHWM")


def _train(server: Server) -> int:
    c = server.http
    ds = c.post("/v1/datasets", files={"file": ("t.svm", tiny_svmlight(2000, 20))}).json()["id"]
    job = c.post("/v1/jobs", json={"dataset_id": ds, "params": {"n_iter": 2000}}).json()
    while job["status"] not in ("succeeded", "failed", "cancelled"):
        time.sleep(0.3)
        job = c.get(f"/v1/jobs/{job['id']}").json()
    assert job["status"] == "succeeded", job
    return int(job["model_id"])


def _poll(server: Server, stop: threading.Event, make: Callable[[httpx.Client], Any]) -> list[float]:
    """Call ``make(client)`` back to back (10 ms apart) until ``stop``; their latencies."""
    latencies: list[float] = []
    with httpx.Client(base_url=server.base, timeout=600) as c:
        while not stop.is_set():
            started = time.perf_counter()
            make(c)
            latencies.append(time.perf_counter() - started)
            time.sleep(0.01)
    return latencies


def _during(
    server: Server, make: Callable[[httpx.Client], Any], action: Callable[[], dict[str, Any]]
) -> tuple[dict[str, Any], list[float]]:
    stop = threading.Event()
    out: list[list[float]] = []
    poller = threading.Thread(target=lambda: out.append(_poll(server, stop, make)))
    poller.start()
    try:
        result = action()
    finally:
        stop.set()
        poller.join()
    return result, out[0]


def _timed_post(server: Server, path: str, **kwargs: Any) -> dict[str, Any]:
    started = time.perf_counter()
    try:
        r = server.http.post(path, **kwargs)
        status: Any = r.status_code
        detail = r.json().get("detail") if r.status_code >= 400 else None
    except httpx.HTTPError as exc:
        status, detail = type(exc).__name__, str(exc)[:100]
    return {"status": status, "seconds": round(time.perf_counter() - started, 2), "detail": detail}


def _hostile(server: Server, name: str, post: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    before = server.reset_peak()
    result, healthz = _during(server, lambda c: c.get("/healthz"), post)
    result["api_peak_rss_growth_mb"] = round((server.peak() - before) / MIB, 1)
    result["healthz_worst_ms"] = round(max(healthz, default=0) * 1e3, 1)
    print(name, json.dumps(result), flush=True)
    return result


def _big_svmlight(path: Path, mb: int) -> Path:
    if not path.exists():
        block = (DATA / "a9a.train.svm").read_bytes()
        with path.open("wb") as fh:
            for _ in range(mb * MIB // len(block) + 1):
                fh.write(block)
    return path


def gzip_of(path: Path, first: bytes, filler: bytes, total: int) -> Path:
    if not path.exists():
        with gzip.open(path, "wb", compresslevel=9) as fh:
            fh.write(first)
            chunk = filler * (64 * MIB // len(filler))
            for _ in range(total // len(chunk)):
                fh.write(chunk)
    return path


def gzip_bombs(cache: Path) -> dict[str, Callable[[], Path]]:
    """The two compressed uploads of the issue, each made (once, into ``cache``) when called."""
    return {
        "bomb": lambda: gzip_of(cache / "bomb.svm.gz", b"", b"0 1:0\n", 150 * MIB),
        "newlines": lambda: gzip_of(cache / "newlines.svm.gz", b"1 1:1\n-1 2:1\n", b"\n", 3072 * MIB),
    }


def _gzipped(path: Path) -> Path:
    out = path.with_name(path.name + ".gz")
    if not out.exists():
        with path.open("rb") as src, gzip.open(out, "wb", compresslevel=1) as dst:
            while chunk := src.read(64 * MIB):
                dst.write(chunk)
    return out


def _upload_while_predicting(
    server: Server, one: Callable[[httpx.Client], Any], path: Path
) -> dict[str, Any]:
    def send() -> dict[str, Any]:
        with path.open("rb") as fh:
            return _timed_post(server, "/v1/datasets", files={"file": (path.name, fh)})

    before = server.reset_peak()
    outcome, latencies = _during(server, one, send)
    outcome["api_peak_rss_growth_mb"] = round((server.peak() - before) / MIB, 1)
    return {
        "file_mb": round(path.stat().st_size / MIB, 1),
        "upload": outcome,
        "predict": percentiles(latencies),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="pgs-hostile-") as tmp:
        server = Server(Path(args.src).resolve(), Path(tmp), args.client_timeout)
        try:
            model = _train(server)
            predict = f"/v1/models/{model}/predict"
            row = {"instances": [{"indices": [0, 3, 7], "values": [0.5, -1.0, 2.0]}]}

            def one(c: httpx.Client) -> None:
                assert c.post(predict, json=row).status_code == 200

            if "quiet" in args.cases:
                stop = threading.Event()
                timer = threading.Timer(args.seconds, stop.set)
                timer.start()
                results["quiet"] = percentiles(_poll(server, stop, one))
                print("quiet", json.dumps(results["quiet"]), flush=True)
            for case in ("upload", "upload_gz"):
                if case in args.cases:
                    big = _big_svmlight(cache / f"a9a_x_{args.upload_mb}mb.svm", args.upload_mb)
                    if case == "upload_gz":
                        big = _gzipped(big)
                    results[case] = _upload_while_predicting(server, one, big)
                    print(case, json.dumps(results[case]), flush=True)
            for name, make_file in gzip_bombs(cache).items():
                if name in args.cases:
                    path = make_file()
                    print(name, f"{path.stat().st_size / 1e6:.2f} MB compressed", flush=True)
                    results[name] = _hostile(
                        server,
                        name,
                        lambda p=path: _timed_post(
                            server, "/v1/datasets", files={"file": (p.name, p.read_bytes())}
                        ),
                    )
            bodies = {
                "cr_rows": ("text/plain", b"1:1\r" * (9 * MIB)),
                "json_rows": ("application/json", b'{"instances": [' + b"[1]," * (16 * MIB - 8) + b"[1]]}"),
            }
            for name, (ctype, body) in bodies.items():
                if name in args.cases:
                    results[name] = _hostile(
                        server,
                        name,
                        lambda b=body, t=ctype: _timed_post(
                            server, predict, content=b, headers={"content-type": t}
                        ),
                    )
        finally:
            server.stop()
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", default=str(REPO), help="checkout whose app/ is served")
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=CASES)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--upload-mb", type=int, default=300)
    parser.add_argument("--client-timeout", type=float, default=900.0)
    parser.add_argument(
        "--cache",
        default=str(REPO / "var" / "bench-hostile"),
        help="where the generated files are kept between runs",
    )
    add_results_dir(parser)
    args = parser.parse_args(argv)
    recording = record("hostile_bench", argv)
    results = run(args) | {"upload_mb": args.upload_mb}
    path = recording.save(results, args.results_dir)
    print(tables.hostile_bench(results))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
