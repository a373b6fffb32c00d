"""A fresh install's first job: from ``make serve`` answering /readyz to the job training.

Goal: the first job after a fresh install starts training within 10 s of /readyz.

The procedure is a new user's: ``git clone`` of the repository (``--source``, default this one) at
a commit (``--ref``, default this checkout's HEAD: committed work only) into a temporary directory,
then
``make serve`` there with a free port on 127.0.0.1 and the clone's own data dir and Numba cache
(nothing inherited from this environment: NUMBA_CACHE_DIR and every PGS_* variable are removed).
``make serve`` creates the virtual environment, installs the service and fills the Numba cache
(``python -m solver.warmup``) before it starts the server. As soon as /readyz answers 200 a small
data set is uploaded and a PGS job posted; recorded are the seconds from /readyz to

* ``uploaded`` and ``posted``: the data set stored (201) and the job accepted (202);
* ``running``: the job's ``started_at`` (the worker's claim; its own timestamp, on the same host's
  clock as the readiness seen here) and as the client first saw it (polled every 10 ms);
* ``training``: ``started_at`` plus the job's ``compile_seconds`` (kernels loaded from the cache or
  compiled, the last step before the solver's clock starts);
* ``succeeded``.

The server is stopped (its process group) and the clone removed afterwards.

Run: ``.venv/bin/python -m bench.cold_start`` (about 5 minutes, most of it ``make install``)
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from tests.cluster.harness import FINAL, free_port, stop_process, tiny_svmlight

from . import tables
from .results import REPO, add_results_dir, record

JOB = {"params": {"loss": "logistic", "sigma": 1e-3, "n_iter": 2000, "random_state": 0}}


def clean_env(port: int, data_dir: Path) -> dict[str, str]:
    """The environment ``make serve`` gets: this one without what would reuse this checkout's
    state (its Numba cache, PGS_* settings, a virtual environment), plus the port and data dir."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PGS_", "NUMBA_")) and k not in ("VIRTUAL_ENV", "PYTHONPATH")
    }
    return {
        **env,
        "PGS_HOST": "127.0.0.1",
        "PGS_PORT": str(port),
        "PGS_DATA_DIR": str(data_dir),
        "PGS_LOG_LEVEL": "info",
    }


def since(moment: datetime, timestamp: str | None) -> float | None:
    """Seconds from ``moment`` (aware, UTC) to a job's ISO ``timestamp`` (None stays None)."""
    if timestamp is None:
        return None
    at = datetime.fromisoformat(timestamp)
    if at.tzinfo is None:  # the API writes UTC
        at = at.replace(tzinfo=UTC)
    return (at - moment).total_seconds()


def wait_ready(base: str, proc: subprocess.Popen[bytes], timeout: float, log: Path) -> datetime:
    """Poll /readyz every 50 ms until it answers 200; the moment it did (UTC)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"make serve exited ({proc.returncode}); see {log}")
        try:
            if httpx.get(f"{base}/readyz", timeout=2).status_code == 200:
                return datetime.now(UTC)
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"/readyz not 200 within {timeout} s; see {log}")


def first_job(base: str, ready_at: datetime) -> dict[str, Any]:
    with httpx.Client(base_url=base, timeout=60) as c:
        ds = c.post("/v1/datasets", files={"file": ("first.svm", tiny_svmlight(2000, 30))})
        ds.raise_for_status()
        uploaded_s = (datetime.now(UTC) - ready_at).total_seconds()
        job_id = (
            c.post("/v1/jobs", json={"dataset_id": ds.json()["id"], **JOB}).raise_for_status().json()["id"]
        )
        posted_s = (datetime.now(UTC) - ready_at).total_seconds()
        seen_running = None
        while True:
            job = c.get(f"/v1/jobs/{job_id}").json()
            if seen_running is None and job["started_at"] is not None:
                seen_running = (datetime.now(UTC) - ready_at).total_seconds()
            if job["status"] in FINAL:
                break
            time.sleep(0.01)
    if job["status"] != "succeeded":
        raise RuntimeError(f"the first job ended {job['status']}: {job.get('error')}")
    running = since(ready_at, job["started_at"])
    assert running is not None
    compile_s = float(job["metrics"].get("compile_seconds") or 0.0)
    return {
        "uploaded_s": uploaded_s,
        "posted_s": posted_s,
        "running_s": running,
        "running_seen_s": seen_running,
        "compile_s": compile_s,
        "training_s": running + compile_s,
        "succeeded_s": since(ready_at, job["finished_at"]),
        "solver_s": job["metrics"]["solver_seconds"],
    }


def git(*args: str, cwd: Path = REPO) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def run(source: str, ref: str, timeout: float) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="pgs-cold-"))
    clone, log = root / "pgs-service", root / "serve.log"
    try:
        git("clone", "--quiet", "--no-checkout", source, str(clone))
        git("checkout", "--quiet", ref, cwd=clone)
        commit = git("rev-parse", "--short", "HEAD", cwd=clone)
        port = free_port()
        started = time.monotonic()
        with log.open("wb") as out:
            proc = subprocess.Popen(
                ["make", "serve"],
                cwd=clone,
                env=clean_env(port, clone / "var"),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        try:
            ready_at = wait_ready(f"http://127.0.0.1:{port}", proc, timeout, log)
            serve_to_ready = time.monotonic() - started
            job = first_job(f"http://127.0.0.1:{port}", ready_at)
        finally:
            stop_process(proc)
        return {"commit": commit, "make_serve_to_ready_s": serve_to_ready, **job}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", default=str(REPO), help="the repository to clone")
    ap.add_argument("--ref", default=None, help="the commit to check out (default: HEAD here)")
    ap.add_argument(
        "--timeout",
        type=float,
        default=1800,
        help="seconds make serve may take to answer /readyz (install included)",
    )
    add_results_dir(ap)
    args = ap.parse_args(argv)
    recording = record("cold_start", argv)
    results = run(args.source, args.ref or git("rev-parse", "HEAD"), args.timeout)
    path = recording.save(results, args.results_dir)
    print(tables.cold_start(results))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
