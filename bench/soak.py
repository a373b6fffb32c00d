"""Soak on loopback: predictions under hostile uploads, a stream of jobs and killed workers.

A real server (``python -m app``: SQLite, a local pool of ``--workers`` workers, the server's job
time limit lowered to ``--max-job-seconds``) first serves ``--clients`` prediction clients alone
for ``--quiet-seconds`` (the baseline). Then, for ``--seconds``, the same clients run while:

* hostile files are uploaded in loops, one per file (the gzip bomb and the gzip of newlines of
  bench/hostile_bench.py, a ragged CSV, a CSV with a 1M-character label, a 100,001-column CSV,
  and the 40-byte svmlight file whose feature index 16,777,216 makes a 4-class model 537 MB);
* a job is submitted every ``--job-interval`` seconds, in turn: a short one (ends
  "completed"), one with a time budget ("time_budget"), one with a checkpoint at every
  iteration and a budget ("time_budget"), one without a budget that runs into the server's
  limit ("time_limit"), one cancelled 3 s after its submission ("cancelled"), and one on the
  wide file (refused, 422);
* every ``--kill-every`` seconds a worker process is killed (SIGKILL): a running job's, or an
  idle one when no job runs (e.g. while the pool that replaces a killed one warms up).

Then every job is polled until it is final (at most ``--drain-seconds``). Reported: predictions
that failed (anything but 200; goal 0), p50/p99 against the quiet run (goal: p99 within 3x),
each job's final state and whether its reason is the true one (the expected stop reason of its
kind, or failed after its worker was killed as often as the service retries), the answers to the
uploads, and the API process's resident memory (start, peak, end).

The clients run in this process, the server and its workers in others: on a 2-core machine they
compete for the cores. Run:
``NUMBA_CACHE_DIR=var/numba-cache .venv/bin/python -m bench.soak``
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import sqlite3
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.cluster.harness import ApiServer, poll_job, tiny_svmlight

from . import procs, tables
from .hostile_bench import gzip_bombs
from .load_bench import prediction_clients
from .results import add_results_dir, record

REPO = Path(__file__).resolve().parents[1]
MIB = 1024 * 1024
FINAL = ("succeeded", "failed", "cancelled")
LONG = {"loss": "logistic", "sigma": 1e-4, "n_iter": 10**9, "random_state": 0}
# The job kinds submitted in turn, and the (status, stop_reason) each must end with.
KINDS: dict[str, tuple[dict[str, Any], tuple[str, str] | None]] = {
    "short": ({"params": {"n_iter": 5000, "random_state": 0}}, ("succeeded", "completed")),
    "budget": ({"params": LONG, "time_budget_s": 4}, ("succeeded", "time_budget")),
    "every_iteration": (
        {
            "params": {**LONG, "checkpoint_growth": 1.0000001},
            "test_fraction": 0.25,
            "targets": [0.6],
            "time_budget_s": 3,
        },
        ("succeeded", "time_budget"),
    ),
    "no_budget": ({"params": LONG}, ("succeeded", "time_limit")),
    "cancelled": ({"params": LONG, "time_budget_s": 60}, ("cancelled", "cancelled")),
    "too_wide": ({"params": {"n_iter": 10}}, None),  # refused before queueing
}


def hostile_uploads(cache: Path) -> dict[str, Callable[[], bytes]]:
    """File name -> its bytes (the gzip files are made once, into ``cache``)."""
    bombs = gzip_bombs(cache)
    return {
        "bomb.svm.gz": lambda: bombs["bomb"]().read_bytes(),
        "newlines.svm.gz": lambda: bombs["newlines"]().read_bytes(),
        "ragged.csv": lambda: b"1,2,1\n3,4,0\n5,6,7,8,9,1\n2,2,0\n",
        "long_label.csv": lambda: b"1,2,a\n3,4," + b"x" * 1_000_000 + b"\n",
        "wide_columns.csv": lambda: (b",".join([b"1"] * 100_001) + b"\n") * 3,
        "wide4.svm": lambda: b"1 1:1 16777216:1\n2 2:1\n3 3:1\n4 4:1\n",
    }


@dataclass
class Soak:
    """What the background loops of the soak record, shared between their threads."""

    server: ApiServer
    dataset_id: int
    wide_id: int
    stop: threading.Event = field(default_factory=threading.Event)
    uploads: dict[str, Counter[str]] = field(default_factory=dict)
    jobs: dict[int, str] = field(default_factory=dict)  # job id -> kind
    refused: Counter[str] = field(default_factory=Counter)
    kills: list[int] = field(default_factory=list)  # job ids whose worker was killed
    idle_kills: int = 0  # workers killed without a job
    rss: list[int] = field(default_factory=list)
    slowest: dict[str, float] = field(default_factory=dict)  # seconds of the slowest answer

    @property
    def pid(self) -> int:
        assert self.server.proc is not None
        return self.server.proc.pid


def _upload_loop(soak: Soak, name: str, content: bytes) -> None:
    """One hostile file, uploaded again as soon as it is answered (one loop per file: parses
    run at a low priority, so a slow one does not hold up the others)."""
    with httpx.Client(base_url=soak.server.base, timeout=600) as c:
        while not soak.stop.is_set():
            started = time.monotonic()
            try:
                answer = str(c.post("/v1/datasets", files={"file": (name, content)}).status_code)
            except httpx.HTTPError as exc:
                answer = type(exc).__name__
            soak.uploads.setdefault(name, Counter())[answer] += 1
            soak.slowest[name] = max(soak.slowest.get(name, 0.0), time.monotonic() - started)


def _submit(soak: Soak, kind: str, n: int) -> None:
    """One job of ``kind``; a "cancelled" one is cancelled 3 s after its submission."""
    body = {
        "dataset_id": soak.wide_id if kind == "too_wide" else soak.dataset_id,
        "split_seed": n,
        **KINDS[kind][0],
    }
    with httpx.Client(base_url=soak.server.base, timeout=120) as c:
        started = time.monotonic()
        try:
            r = c.post("/v1/jobs", json=body)
        except httpx.HTTPError as exc:
            soak.refused[f"{kind}: {type(exc).__name__}"] += 1
            return
        soak.slowest["POST /v1/jobs"] = max(
            soak.slowest.get("POST /v1/jobs", 0.0), time.monotonic() - started
        )
        if r.status_code != 202:
            soak.refused[f"{kind}: {r.status_code}"] += 1
            return
        soak.jobs[r.json()["id"]] = kind
        if kind == "cancelled":
            time.sleep(3)
            c.post(f"/v1/jobs/{r.json()['id']}/cancel")


def _job_loop(soak: Soak, interval: float) -> None:
    """A job every ``interval`` seconds, each submitted from a thread of its own, so that the
    stream keeps its pace however long the server takes to answer."""
    kinds = list(KINDS)
    submitters: list[threading.Thread] = []
    while not soak.stop.wait(interval if submitters else 0):
        n = len(submitters)
        submitters.append(threading.Thread(target=_submit, args=(soak, kinds[n % len(kinds)], n)))
        submitters[-1].start()
    for t in submitters:
        t.join()


def _kill_loop(soak: Soak, every: float, db: Path) -> None:
    """SIGKILL a pool worker of this server every ``every`` seconds: the worker of a running job
    when there is one, else an idle one (while a pool is replaced there may be none)."""
    while not soak.stop.wait(every):
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as conn:
            running = conn.execute(
                "SELECT id, worker_pid FROM jobs WHERE status = 'running' "
                "AND worker_pid IS NOT NULL ORDER BY id"
            ).fetchall()
        workers = _pool_workers(soak.pid)
        busy = [(job_id, pid) for job_id, pid in running if pid in workers]
        if busy:
            os.kill(busy[0][1], signal.SIGKILL)
            soak.kills.append(busy[0][0])
        elif workers:
            os.kill(workers[0], signal.SIGKILL)
            soak.idle_kills += 1


def _pool_workers(api_pid: int) -> list[int]:
    """The API process's pool workers: its spawned children (an upload's parse is a forked
    child, which runs the parent's command line, not multiprocessing's spawn_main)."""
    workers = []
    for pid in procs.children(api_pid):
        with contextlib.suppress(OSError):
            if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes():
                workers.append(pid)
    return workers


def _rss(pid: int) -> int:
    return procs.status_bytes(pid, "VmRSS")


def _rss_loop(soak: Soak) -> None:
    while not soak.stop.wait(0.25):
        soak.rss.append(_rss(soak.pid))


def _predict(soak: Soak, model_id: int, n_features: int, clients: int, seconds: float) -> dict:
    stop_at = time.monotonic() + seconds
    result = asyncio.run(prediction_clients(soak.server.base, model_id, n_features, clients, stop_at))
    return {k: round(v, 2) if isinstance(v, float) else v for k, v in result.items()}


def _outcomes(client: httpx.Client, soak: Soak, drain: float, max_attempts: int) -> dict:
    """Every submitted job polled to its final state; whether its reason is the true one."""
    deadline = time.monotonic() + drain
    outcomes: Counter[str] = Counter()
    untrue, not_final = [], []
    killed = Counter(soak.kills)
    for job_id, kind in sorted(soak.jobs.items()):
        try:
            job = poll_job(client, job_id, timeout=max(deadline - time.monotonic(), 1))
        except AssertionError:
            not_final.append(job_id)
            continue
        expected = KINDS[kind][1]
        got = (job["status"], job["stop_reason"])
        outcomes[f"{kind}: {job['status']} ({job['stop_reason'] or job['error']})"] += 1
        # A worker killed as often as the service retries fails the job, and says so.
        gave_up = (
            job["status"] == "failed" and killed[job_id] >= max_attempts and "attempt" in (job["error"] or "")
        )
        if got != expected and not gave_up:
            untrue.append(
                {
                    "id": job_id,
                    "kind": kind,
                    "status": job["status"],
                    "stop_reason": job["stop_reason"],
                    "error": job["error"],
                    "worker_killed": killed[job_id],
                }
            )
    return {
        "submitted": len(soak.jobs),
        "refused": dict(soak.refused),
        "outcomes": dict(sorted(outcomes.items())),
        "not_final": not_final,
        "untrue_reasons": untrue,
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    files = {name: make() for name, make in hostile_uploads(cache).items()}
    root = Path(tempfile.mkdtemp(prefix="pgs-soak-"))
    env = {
        "PGS_WORKERS": str(args.workers),
        "PGS_MAX_JOB_SECONDS": str(args.max_job_seconds),
        "PGS_LOG_LEVEL": "warning",
    }
    server = ApiServer(root / "var", root / "api.log", **env).start(timeout=600)
    try:
        with server.client() as c:
            ds = c.post("/v1/datasets", files={"file": ("t.svm", tiny_svmlight(2000, 20))}).json()
            wide = c.post("/v1/datasets", files={"file": ("wide4.svm", files["wide4.svm"])}).json()
            first = poll_job(
                c,
                c.post("/v1/jobs", json={"dataset_id": ds["id"], "params": {"n_iter": 5000}}).json()["id"],
                timeout=600,
            )
            assert first["status"] == "succeeded", first
            soak = Soak(server, ds["id"], wide["id"])
            model = (first["model_id"], ds["n_features"])
            quiet = _predict(soak, *model, args.clients, args.quiet_seconds)
            print("quiet", json.dumps(quiet), flush=True)
            rss_start = _rss(soak.pid)
            loops = [
                *(
                    threading.Thread(target=_upload_loop, args=(soak, name, content))
                    for name, content in files.items()
                ),
                threading.Thread(target=_job_loop, args=(soak, args.job_interval)),
                threading.Thread(target=_kill_loop, args=(soak, args.kill_every, root / "var" / "pgs.db")),
                threading.Thread(target=_rss_loop, args=(soak,)),
            ]
            for t in loops:
                t.start()
            try:
                loaded = _predict(soak, *model, args.clients, args.seconds)
            finally:
                soak.stop.set()
                for t in loops:
                    t.join()
            print("soak", json.dumps(loaded), flush=True)
            jobs = _outcomes(c, soak, args.drain_seconds, max_attempts=2)
            rss_end = _rss(soak.pid)
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
    return {
        "clients": args.clients,
        "quiet_seconds": args.quiet_seconds,
        "seconds": args.seconds,
        "workers": args.workers,
        "kill_every_s": args.kill_every,
        "job_interval_s": args.job_interval,
        "max_job_seconds": args.max_job_seconds,
        "quiet": quiet,
        "soak": loaded,
        "p99_ratio": round(loaded["p99_ms"] / quiet["p99_ms"], 2),
        "uploads": {name: dict(c) for name, c in soak.uploads.items()},
        "slowest_answer_s": {k: round(v, 1) for k, v in soak.slowest.items()},
        "jobs": jobs,
        "workers_killed": len(soak.kills) + soak.idle_kills,
        "idle_workers_killed": soak.idle_kills,
        "api_rss_mb": {
            "start": round(rss_start / MIB, 1),
            "peak": round(max(soak.rss, default=rss_start) / MIB, 1),
            "end": round(rss_end / MIB, 1),
        },
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--quiet-seconds", type=float, default=20.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--kill-every", type=float, default=10.0)
    parser.add_argument("--job-interval", type=float, default=3.0)
    parser.add_argument("--max-job-seconds", type=float, default=15.0)
    parser.add_argument("--drain-seconds", type=float, default=600.0)
    parser.add_argument(
        "--cache",
        default=str(REPO / "var" / "bench-hostile"),
        help="where the generated files are kept between runs",
    )
    add_results_dir(parser)
    args = parser.parse_args(argv)
    recording = record("soak", argv)
    results = run(args)
    path = recording.save(results, args.results_dir)
    print(tables.soak(results))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
