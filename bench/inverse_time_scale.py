"""The PGS paper's inverse time dependency at scale, through the service: seconds to a fixed test
accuracy against m for RCV1-like sets of millions of rows that the workers stream from shards.

    NUMBA_CACHE_DIR=var/numba-cache .venv/bin/python -m bench.inverse_time_scale \
        [--sizes 1M,4M,16M,64M,100M] [--repeats 3] [--targets 0.85,0.87,0.88]
        [--worker-memory 2GiB] [--workdir var/inverse-time-scale] [--out docs/figures]
        [--resume] [--results-dir DIR]

For each m, in turn: an RCV1-like training set of m rows (``bench.datasets.RCV1LikeStream``, seed
0, drawn and written by blocks of 100,000 rows: never whole in memory; the first m rows of a
larger set are the set of m rows) and the common test set (its own 20,000 rows) are written as svmlight text
under an import root, imported by a fresh server (``python -m app`` on 127.0.0.1, its own data
directory, one worker, PGS_WORKER_MEMORY_BYTES = ``--worker-memory``) through
``POST /v1/datasets/import`` (the text is deleted once parsed), and two studies run on them: PGS
p=2 and p=1.8 (logistic, ``--repeats`` seeds, ``--iterations`` iterations) and L-BFGS on the
p=2 logistic objective (deterministic: one run). A set larger than the worker's memory budget is
streamed from its shards by PGS, and L-BFGS, which needs every row in memory, is refused with
422: the record keeps the refusal's detail. Afterwards the server stops and its data directory is
deleted.

sigma(m) follows the validated choice of the paper figures' RCV1-like runs (bench.paper_figures,
sigma chosen on a validation fifth of the rows): 3e-8 at m = 800,000, where the validated sigma
fell at least as fast as 1/m from 400,000 rows (1e-7) on. Validation on millions of rows is
beyond this machine, so sigma(m) = 3e-8 x 800,000 / m: that fall, extrapolated. Every run of one
m uses it.

Recorded per m: generation (drawing and writing the text) and import (the service's parse into
shards) seconds and the parse throughput, the stored set's bytes on disk, each (run, target)'s
median solver seconds to the target over the repeats (the studies' table), the worker's peak
resident memory (VmHWM from /proc, the largest over the server's child processes, sampled while
the studies run) and the parse process's.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path
from typing import Any

import httpx

from tests.cluster.harness import ApiServer

from . import procs, tables
from .datasets import RCV1LikeStream, svmlight_text
from .results import REPO, add_results_dir, record

GIB = 1024**3
SIGMA_AT_800K = 3e-8
TEST_ROWS = 20_000
UNITS = {"K": 10**3, "M": 10**6, "G": 10**9}


def parse_size(text: str) -> int:
    """'1M' -> 1,000,000; '2GiB' -> 2**31; plain integers as they are."""
    text = text.strip()
    if text.endswith("GiB"):
        return int(float(text[:-3]) * GIB)
    if text[-1:].upper() in UNITS:
        return int(float(text[:-1]) * UNITS[text[-1:].upper()])
    return int(text)


def sigma_for(m: int) -> float:
    """sigma(m): the validated 3e-8 at m = 800,000, scaled as 1/m (the module's docstring)."""
    return SIGMA_AT_800K * 800_000 / m


def directory_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def write_svmlight(path: Path, stream: RCV1LikeStream, n_rows: int, part: str) -> int:
    """``n_rows`` rows of ``stream``'s ``part`` as svmlight text at ``path``, a block at a time;
    returns the bytes written."""
    with path.open("wb") as fh:
        for X, y in stream.blocks(n_rows, part):
            fh.write(svmlight_text(X, y))
        return fh.tell()


# -- the server's processes ----------------------------------------------------------------------


class PeakMemory:
    """The largest VmHWM seen among the server's child processes (its pool's workers, a parse
    process), sampled by :meth:`sample` while a phase runs."""

    def __init__(self, server_pid: int) -> None:
        self.server_pid, self.peak = server_pid, 0

    def sample(self) -> None:
        for pid in procs.descendants(self.server_pid):
            self.peak = max(self.peak, procs.status_bytes(pid, "VmHWM"))


def wait(check: Any, memory: PeakMemory, timeout: float, what: str, interval: float = 1.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        memory.sample()
        result = check()
        if result is not None:
            return result
        time.sleep(interval)
    raise TimeoutError(f"{what} did not finish within {timeout:.0f} s")


# -- one size ------------------------------------------------------------------------------------


def import_file(client: httpx.Client, path: Path, memory: PeakMemory, timeout: float) -> int:
    """Import ``path`` through the service; returns the data set's id."""
    answer = client.post("/v1/datasets/import", json={"source": str(path), "name": path.stem})
    answer.raise_for_status()
    location = answer.headers["location"]

    def done() -> Any:
        upload = client.get(location).json()
        if upload["state"] == "failed":
            raise RuntimeError(f"the import of {path} failed: {upload['error']}")
        return upload["dataset_id"] if upload["state"] == "done" else None

    return int(wait(done, memory, timeout, f"the import of {path}"))


def pgs_runs(sigma: float, iterations: int) -> list[dict[str, Any]]:
    return [
        {
            "solver": "pgs",
            "label": f"PGS p={p:g}",
            "params": {"loss": "logistic", "p": p, "sigma": sigma, "n_iter": iterations},
        }
        for p in (2.0, 1.8)
    ]


def lbfgs_run(sigma: float) -> dict[str, Any]:
    return {
        "solver": "lbfgs",
        "label": "L-BFGS",
        "params": {"loss": "logistic", "sigma": sigma, "n_iter": 500, "tol": 1e-10},
    }


def run_study(
    client: httpx.Client, body: dict[str, Any], memory: PeakMemory, timeout: float
) -> dict[str, Any]:
    """The finished study's table rows, or {"refused": detail} when the service refuses it."""
    answer = client.post("/v1/studies", json=body)
    if answer.status_code == 422:
        return {"refused": answer.json()["detail"]}
    answer.raise_for_status()
    study_id = answer.json()["id"]

    def done() -> Any:
        study = client.get(f"/v1/studies/{study_id}").json()
        return study if study["progress"]["done"] == study["progress"]["total"] else None

    study = wait(done, memory, timeout, f"study {study_id}", interval=2.0)
    return {"status": study["status"], "table": study["table"]}


def measure_size(m: int, args: argparse.Namespace, stream: RCV1LikeStream) -> dict[str, Any]:
    root = args.workdir / f"m{m}"
    shutil.rmtree(root, ignore_errors=True)
    (root / "import").mkdir(parents=True)
    result: dict[str, Any] = {"m": m, "sigma": sigma_for(m)}
    files = {}
    for part, rows in (("train", m), ("test", TEST_ROWS)):
        clock = time.perf_counter()
        path = root / "import" / f"rcv1_like_{part}_{rows}.svm"
        size = write_svmlight(path, stream, rows, part)
        files[part] = path
        result[f"{part}_text_bytes"] = size
        result[f"{part}_generate_seconds"] = time.perf_counter() - clock
        print(
            f"m={m:,}: {part} text {size / GIB:.2f} GiB in {result[f'{part}_generate_seconds']:.0f} s",
            flush=True,
        )
    server = ApiServer(
        root / "data",
        root / "server.log",
        PGS_WORKERS="1",
        PGS_WORKER_MEMORY_BYTES=str(args.worker_memory),
        PGS_IMPORT_ROOTS=str(root / "import"),
        PGS_MAX_JOB_SECONDS="3600",
        # A plain text file counts as decompressed bytes, and its parse takes
        # about 3 minutes per million rows: the defaults (2 GiB, 300 s) would
        # refuse every set above about 1.7 million rows.
        PGS_MAX_DECOMPRESSED_BYTES=str(2**50),
        PGS_PARSE_TIMEOUT_S="86400",
    )
    server.start()
    try:
        assert server.proc is not None
        with server.client() as client:
            memory = PeakMemory(server.proc.pid)
            ids = {}
            for part, path in files.items():
                before, clock = directory_bytes(root / "data"), time.perf_counter()
                ids[part] = import_file(client, path, memory, timeout=6 * 3600)
                result[f"{part}_import_seconds"] = time.perf_counter() - clock
                result[f"{part}_stored_bytes"] = directory_bytes(root / "data") - before
                path.unlink()
            result["import_peak_rss_bytes"] = memory.peak
            result["parse_mb_per_s"] = result["train_text_bytes"] / 1e6 / result["train_import_seconds"]
            result["disk_bytes"] = directory_bytes(root / "data")
            print(
                f"m={m:,}: imported in {result['train_import_seconds']:.0f} s "
                f"({result['parse_mb_per_s']:.1f} MB/s), {result['disk_bytes'] / GIB:.2f} GiB "
                "on disk",
                flush=True,
            )
            memory = PeakMemory(server.proc.pid)
            common = {
                "dataset_id": ids["train"],
                "test_dataset_id": ids["test"],
                "sizes": [m],
                "targets": args.targets,
                "seed": 0,
                "time_budget_s": args.time_budget,
            }
            sigma = result["sigma"]
            result["pgs"] = run_study(
                client,
                {
                    **common,
                    "name": f"PGS m={m}",
                    "runs": pgs_runs(sigma, args.iterations),
                    "repeats": args.repeats,
                },
                memory,
                timeout=24 * 3600,
            )
            result["lbfgs"] = run_study(
                client,
                {**common, "name": f"L-BFGS m={m}", "runs": [lbfgs_run(sigma)], "repeats": 1},
                memory,
                timeout=24 * 3600,
            )
            result["worker_peak_rss_bytes"] = memory.peak
        server.assert_clean_log()
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
    return result


def plot(results: list[dict[str, Any]], targets: list[float], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    all_rows = [row for result in results for row in tables.scale_rows(result)]
    methods = list(dict.fromkeys(row["method"] for row in all_rows))
    styles = ["-", "--", ":"]
    for color, method in zip(plt.rcParams["axes.prop_cycle"].by_key()["color"], methods, strict=False):
        for style, target in zip(styles, targets, strict=False):
            pts = [
                (r["m"], r["median_seconds"])
                for r in all_rows
                if r["method"] == method and r["target"] == target and r["median_seconds"]
            ]
            if pts:
                ax.plot(
                    *zip(*pts, strict=True),
                    style,
                    color=color,
                    marker="o",
                    label=f"{method}, accuracy {target:g}",
                )
    refused = [f"{r['m']:,}" for r in results if "refused" in r["lbfgs"]]
    if refused:
        ax.annotate(
            f"L-BFGS refused (422, data over the worker memory budget) at m = {', '.join(refused)}",
            (0.01, 0.01),
            xycoords="axes fraction",
            fontsize=7,
        )
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="training set size m",
        ylabel="median solver seconds to the target",
        title="RCV1-like, through the service: time to a fixed accuracy",
    )
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", default="1M,4M,16M,64M,100M", type=lambda s: [parse_size(v) for v in s.split(",")]
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--targets", default="0.85,0.87,0.88", type=lambda s: [float(v) for v in s.split(",")]
    )
    parser.add_argument(
        "--iterations",
        type=parse_size,
        default=5_000_000,
        help="PGS iterations per run (default 5M: 5 epochs of 1M rows)",
    )
    parser.add_argument("--time-budget", type=float, default=300.0, help="each job's time_budget_s")
    parser.add_argument(
        "--worker-memory", type=parse_size, default=2 * GIB, help="PGS_WORKER_MEMORY_BYTES (default 2GiB)"
    )
    parser.add_argument("--workdir", type=Path, default=REPO / "var" / "inverse-time-scale")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "figures")
    parser.add_argument(
        "--resume", action="store_true", help="keep the sizes the record already has, run the others"
    )
    add_results_dir(parser)
    args = parser.parse_args(argv)
    recording = record("inverse_time_scale", argv)
    stream = RCV1LikeStream(seed=0)
    results = []
    previous = args.results_dir / "inverse_time_scale.json"
    if args.resume and previous.exists():
        results = json.loads(previous.read_text())["results"]["results"]
    for m in args.sizes:
        if any(r["m"] == m for r in results):
            continue
        results.append(measure_size(m, args, stream))
        summary = {
            "sizes": [r["m"] for r in results],
            "targets": args.targets,
            "worker_memory_bytes": args.worker_memory,
            "test_rows": TEST_ROWS,
            "results": results,
        }
        # After every size: a long run keeps its part (and --resume goes on from there).
        recording.save(summary, args.results_dir)
        plot(results, args.targets, args.out / "rcv1_like_inverse_time_scale.svg")
        print(tables.inverse_time_scale(summary), flush=True)


if __name__ == "__main__":
    main()
