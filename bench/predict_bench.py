"""Prediction latency and throughput of the running service, next to a trivial FastAPI endpoint.

Starts two servers on loopback (the service via ``python -m app`` with a temporary data dir, and
bench/trivial_app.py under the same uvicorn), trains one model on a9a through the API, then from
this process (a separate one) sends:

* single sparse rows, alternating between the two servers request by request, so both see the
  same machine state: p50 / p99 latency;
* batches of 1,000 sparse rows: rows per second.

Run: ``NUMBA_CACHE_DIR=var/numba-cache .venv/bin/python -m bench.predict_bench`` (about a minute).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from sklearn.datasets import load_svmlight_file

from . import tables
from .results import add_results_dir, record

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(url: str, proc: subprocess.Popen[bytes], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url} not ready")


def _sparse_rows(X: Any, start: int, n: int) -> list[dict[str, list[Any]]]:
    rows = []
    for i in range(start, start + n):
        r = X[i % X.shape[0]]
        rows.append({"indices": r.indices.tolist(), "values": r.data.tolist()})
    return rows


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]


HEADERS = {"content-type": "application/json"}


def _train_model(c: httpx.Client, svc: str, train_path: Path) -> str:
    """Train the a9a model through the API; its predict URL."""
    ds = c.post(f"{svc}/v1/datasets", files={"file": ("a9a.svm", train_path.read_bytes())})
    job = c.post(
        f"{svc}/v1/jobs",
        json={
            "dataset_id": ds.json()["id"],
            "params": {"loss": "logistic", "sigma": 1e-4, "n_iter": 32561, "random_state": 0},
        },
    ).json()
    while (j := c.get(f"{svc}/v1/jobs/{job['id']}").json())["status"] in ("queued", "running"):
        time.sleep(0.1)
    assert j["status"] == "succeeded", j
    return f"{svc}/v1/models/{j['model_id']}/predict"


def _latencies(c: httpx.Client, urls: dict[str, str], bodies: list[bytes]) -> dict[str, list[float]]:
    """Seconds per request, alternating between the servers request by request."""
    lat: dict[str, list[float]] = {name: [] for name in urls}
    for body in bodies:
        for name, url in urls.items():
            t = time.perf_counter()
            r = c.post(url, content=body, headers=HEADERS)
            lat[name].append(time.perf_counter() - t)
            r.raise_for_status()
    return lat


def _batch_seconds(c: httpx.Client, urls: dict[str, str], bodies: list[bytes]) -> dict[str, float]:
    spent = dict.fromkeys(urls, 0.0)
    for body in bodies:
        for name, url in urls.items():
            t = time.perf_counter()
            r = c.post(url, content=body, headers=HEADERS)
            spent[name] += time.perf_counter() - t
            r.raise_for_status()
            assert len(r.json()["predictions"]) == 1000
    return spent


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--singles", type=int, default=3000, help="single-row requests per server")
    ap.add_argument("--batches", type=int, default=40, help="1,000-row requests per server")
    add_results_dir(ap)
    args = ap.parse_args(argv)
    recording = record("predict_bench", argv)

    X_train_path, X_test_path = DATA / "a9a.train.svm", DATA / "a9a.test.svm"
    X, _ = load_svmlight_file(str(X_train_path))
    Xt, _ = load_svmlight_file(str(X_test_path), n_features=X.shape[1])

    tmp = Path(tempfile.mkdtemp(prefix="pgs-bench-"))
    svc_port, triv_port = _free_port(), _free_port()
    env = {
        **os.environ,
        "PGS_DATA_DIR": str(tmp),
        "PGS_PORT": str(svc_port),
        "PGS_HOST": "127.0.0.1",
        "PGS_WORKERS": "1",
        "PGS_LOG_LEVEL": "warning",
        "PGS_API_KEYS": "",
    }
    env.setdefault("NUMBA_CACHE_DIR", str(REPO / "var" / "numba-cache"))
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    service = subprocess.Popen([sys.executable, "-m", "app"], cwd=REPO, env=env, **quiet)
    trivial = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "bench.trivial_app:app",
            "--host",
            "127.0.0.1",
            "--port",
            str(triv_port),
            "--log-level",
            "warning",
        ],
        cwd=REPO,
        env=env,
        **quiet,
    )
    try:
        svc, triv = f"http://127.0.0.1:{svc_port}", f"http://127.0.0.1:{triv_port}"
        _wait(f"{svc}/readyz", service)
        _wait(f"{triv}/docs", trivial)
        with httpx.Client(timeout=60) as c:
            urls = {"service": _train_model(c, svc, X_train_path), "trivial": f"{triv}/predict"}
            singles = [
                json.dumps({"instances": _sparse_rows(Xt, i, 1)}).encode() for i in range(args.singles)
            ]
            for body in singles[:200]:  # warm-up: caches, connections
                for url in urls.values():
                    c.post(url, content=body, headers=HEADERS).raise_for_status()
            lat = _latencies(c, urls, singles)
            batch_bodies = [
                json.dumps({"instances": _sparse_rows(Xt, i * 1000, 1000)}).encode()
                for i in range(args.batches)
            ]
            spent = _batch_seconds(c, urls, batch_bodies)
    finally:
        for p in (service, trivial):
            p.terminate()
        for p in (service, trivial):
            p.wait(timeout=60)
        shutil.rmtree(tmp, ignore_errors=True)

    result: dict[str, Any] = {"singles": args.singles, "batches": args.batches, "batch_rows": 1000}
    for name in ("service", "trivial"):
        ms = [v * 1e3 for v in lat[name]]
        result[name] = {
            "single_p50_ms": _percentile(ms, 50),
            "single_p99_ms": _percentile(ms, 99),
            "single_mean_ms": statistics.fmean(ms),
            "batch_rows_per_s": args.batches * 1000 / spent[name],
        }
    path = recording.save(result, args.results_dir)
    print(tables.predict_bench(result))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
