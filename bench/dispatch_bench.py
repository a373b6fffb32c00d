"""Job dispatch overhead: from ``POST /v1/jobs`` to "running".

Measured from the database's own timestamps (``created_at`` is written by the POST, ``started_at``
by the worker's claim), so polling does not blur it; the client-side time from sending the POST
to seeing "running" is reported beside it.

* ``warm``: an idle, warmed-up worker; ``--repeat`` jobs one after another (each waits for the
  previous to finish). Target: under 100 ms.
* ``cold_prestarted``: the first job of a fresh server with the defaults (the worker process is
  started and warmed up with the server; ``/readyz`` waits for it), sent as soon as ``/readyz``
  answers 200. Target: under 1 s more than a warm job.
* ``cold_cache_warm`` / ``cold_cache_empty``: the same with ``PGS_PRESTART_WORKERS=0``, so the
  job itself spawns the worker process (interpreter, imports, Numba kernels from the cache, or
  compiled into an empty cache dir): what prestarting saves.

Setups: ``local`` (SQLite, process pool) and ``cluster`` (PostgreSQL + Dask with two workers;
its "cold" case is a fresh API against already running workers).

Run: ``NUMBA_CACHE_DIR=var/numba-cache .venv/bin/python -m bench.dispatch_bench --setup both``
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from contextlib import ExitStack
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from tests.cluster.harness import ApiServer, backend_env, poll_job, tiny_svmlight

from . import tables
from .results import add_results_dir, record

JOB = {"params": {"loss": "logistic", "sigma": 1e-3, "n_iter": 2000}}


def _dispatch(c: httpx.Client, dataset_id: int) -> dict[str, float]:
    sent = time.perf_counter()
    job_id = c.post("/v1/jobs", json={"dataset_id": dataset_id, **JOB}).json()["id"]
    seen_running = None
    while True:
        job = c.get(f"/v1/jobs/{job_id}").json()
        if seen_running is None and job["started_at"] is not None:
            seen_running = time.perf_counter() - sent
        if job["status"] in ("succeeded", "failed", "cancelled"):
            break
        time.sleep(0.002)
    assert job["status"] == "succeeded", job
    created = datetime.fromisoformat(job["created_at"])
    started = datetime.fromisoformat(job["started_at"])
    return {
        "server_ms": (started - created).total_seconds() * 1000,
        "client_ms": (seen_running or 0.0) * 1000,
    }


def _summary(samples: list[dict[str, float]]) -> dict[str, float]:
    server = [s["server_ms"] for s in samples]
    client = [s["client_ms"] for s in samples]
    return {
        "n": len(samples),
        "server_p50_ms": statistics.median(server),
        "server_max_ms": max(server),
        "client_p50_ms": statistics.median(client),
    }


def run_setup(setup: str, repeat: int) -> dict[str, Any]:
    out: dict[str, Any] = {"setup": setup}
    with ExitStack() as stack:
        root = Path(tempfile.mkdtemp(prefix=f"pgs-dispatch-{setup}-"))
        stack.callback(shutil.rmtree, root, True)
        env = backend_env(setup, root, stack)

        def cold(label: str, numba_cache: str | None, prestart: bool = False) -> None:
            extra = {"PGS_PRESTART_WORKERS": "1" if prestart else "0"}
            if numba_cache is not None:
                extra["NUMBA_CACHE_DIR"] = numba_cache
                extra["PGS_NUMBA_CACHE_DIR"] = numba_cache
            api = ApiServer(root / f"var-{label}", root / f"api-{label}.log", **env, **extra)
            api.start()
            try:
                with api.client() as c:
                    ds = c.post("/v1/datasets", files={"file": ("t.svm", tiny_svmlight())}).json()["id"]
                    out[f"cold_{label}"] = _dispatch(c, ds)
            finally:
                api.stop()

        # The default: the worker process starts and warms up with the server, and /readyz
        # (which ApiServer.start waits for, as an orchestrator would) waits for it.
        cold("prestarted", None, prestart=True)
        cold("cache_warm", None)
        if setup == "local":  # Dask workers already hold their kernels: no cold-cache case
            empty = root / "empty-numba-cache"
            empty.mkdir()
            cold("cache_empty", str(empty))

        api = ApiServer(root / "var", root / "api.log", **env).start()
        stack.callback(api.stop)
        with api.client() as c:
            ds = c.post("/v1/datasets", files={"file": ("t.svm", tiny_svmlight())}).json()["id"]
            poll_job(c, c.post("/v1/jobs", json={"dataset_id": ds, **JOB}).json()["id"])
            time.sleep(1.0)  # idle
            out["warm"] = _summary([_dispatch(c, ds) for _ in range(repeat)])
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--setup", choices=["local", "cluster", "both"], default="both")
    ap.add_argument("--repeat", type=int, default=20)
    add_results_dir(ap)
    args = ap.parse_args(argv)
    recording = record("dispatch_bench", argv)
    setups = ["local", "cluster"] if args.setup == "both" else [args.setup]
    results = [run_setup(s, args.repeat) for s in setups]
    path = recording.save(results, args.results_dir)
    print(tables.dispatch_bench(results))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
