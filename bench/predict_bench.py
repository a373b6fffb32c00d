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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--singles", type=int, default=3000, help="single-row requests per server")
    ap.add_argument("--batches", type=int, default=40, help="1,000-row requests per server")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args()

    X_train_path, X_test_path = DATA / "a9a.train.svm", DATA / "a9a.test.svm"
    X, _ = load_svmlight_file(str(X_train_path))
    Xt, _ = load_svmlight_file(str(X_test_path), n_features=X.shape[1])

    tmp = Path(tempfile.mkdtemp(prefix="pgs-bench-"))
    svc_port, triv_port = _free_port(), _free_port()
    env = {**os.environ, "PGS_DATA_DIR": str(tmp), "PGS_PORT": str(svc_port),
           "PGS_HOST": "127.0.0.1", "PGS_WORKERS": "1", "PGS_LOG_LEVEL": "warning",
           "PGS_API_KEYS": ""}
    env.setdefault("NUMBA_CACHE_DIR", str(REPO / "var" / "numba-cache"))
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    service = subprocess.Popen([sys.executable, "-m", "app"], cwd=REPO, env=env, **quiet)
    trivial = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "bench.trivial_app:app", "--host", "127.0.0.1",
         "--port", str(triv_port), "--log-level", "warning"], cwd=REPO, env=env, **quiet)
    try:
        svc, triv = f"http://127.0.0.1:{svc_port}", f"http://127.0.0.1:{triv_port}"
        _wait(f"{svc}/readyz", service)
        _wait(f"{triv}/docs", trivial)
        with httpx.Client(timeout=60) as c:
            ds = c.post(f"{svc}/v1/datasets", files={"file": ("a9a.svm", X_train_path.read_bytes())})
            job = c.post(f"{svc}/v1/jobs", json={
                "dataset_id": ds.json()["id"],
                "params": {"loss": "logistic", "sigma": 1e-4, "n_iter": 32561, "random_state": 0},
            }).json()
            while (j := c.get(f"{svc}/v1/jobs/{job['id']}").json())["status"] in ("queued", "running"):
                time.sleep(0.1)
            assert j["status"] == "succeeded", j
            predict_url = f"{svc}/v1/models/{j['model_id']}/predict"
            urls = {"service": predict_url, "trivial": f"{triv}/predict"}

            singles = [json.dumps({"instances": _sparse_rows(Xt, i, 1)}).encode()
                       for i in range(args.singles)]
            headers = {"content-type": "application/json"}
            lat: dict[str, list[float]] = {"service": [], "trivial": []}
            for body in singles[:200]:  # warm-up: caches, connections
                for url in urls.values():
                    c.post(url, content=body, headers=headers).raise_for_status()
            for body in singles:
                for name, url in urls.items():
                    t = time.perf_counter()
                    r = c.post(url, content=body, headers=headers)
                    lat[name].append(time.perf_counter() - t)
                    r.raise_for_status()

            batch_bodies = [json.dumps({"instances": _sparse_rows(Xt, i * 1000, 1000)}).encode()
                            for i in range(args.batches)]
            spent = {"service": 0.0, "trivial": 0.0}
            for body in batch_bodies:
                for name, url in urls.items():
                    t = time.perf_counter()
                    r = c.post(url, content=body, headers=headers)
                    spent[name] += time.perf_counter() - t
                    r.raise_for_status()
                    assert len(r.json()["predictions"]) == 1000
    finally:
        for p in (service, trivial):
            p.terminate()
        for p in (service, trivial):
            p.wait(timeout=60)

    result: dict[str, Any] = {}
    for name in ("service", "trivial"):
        ms = [v * 1e3 for v in lat[name]]
        result[name] = {
            "single_p50_ms": _percentile(ms, 50), "single_p99_ms": _percentile(ms, 99),
            "single_mean_ms": statistics.fmean(ms),
            "batch_rows_per_s": args.batches * 1000 / spent[name],
        }
    ratio = result["service"]["single_p99_ms"] / result["trivial"]["single_p99_ms"]
    print(f"a9a model (123 features, ~14 non-zeros per row); {args.singles} single-row requests "
          f"per server, alternating; {args.batches} batches of 1,000 rows; loopback, keep-alive")
    print(f"{'endpoint':<10} {'p50 ms':>8} {'p99 ms':>8} {'mean ms':>8} {'rows/s (1k batches)':>20}")
    for name in ("service", "trivial"):
        r = result[name]
        print(f"{name:<10} {r['single_p50_ms']:>8.3f} {r['single_p99_ms']:>8.3f} "
              f"{r['single_mean_ms']:>8.3f} {r['batch_rows_per_s']:>20,.0f}")
    print(f"single-row p99 service / trivial = {ratio:.2f} (target <= 2)")
    if args.json:
        args.json.write_text(json.dumps(result | {"p99_ratio": ratio}, indent=2))


if __name__ == "__main__":
    main()
