"""svmlight parse speed: the service's parser with 1 and 2 threads against scikit-learn's
``load_svmlight_file`` and xgboost's LIBSVM text parser (1 and 2 threads), in one run.

    python -m bench.ingest [--gib 1.0] [--repeats 3] [--files NAME ...] [--no-results]

Each parser runs in a fresh process (spawned: nothing is shared between parsers): it imports
its parser, warms it up on a tiny file (the Numba kernel is loaded from the cache, not timed),
then parses each file, timed. A run of ``t`` threads is pinned to ``t`` cores
(``sched_setaffinity``): xgboost's parser with ``nthread=1`` still reads ahead on a thread of its
own (1.33 CPU seconds in 0.78 s of a 248 MB file), so unpinned its "one thread" keeps 1.7 cores
busy. The figures are medians of ``--repeats`` runs: MB/s of the file's size, MB/s per core (the
wall-clock speed divided by the cores), the CPU seconds over the wall seconds (the cores the
parser kept busy), and the process's peak resident memory above what it held before the parse
(VmHWM, reset after the warm-up). The service's parser runs its full upload path (format
sniffing, blocks of lines, NaN checks, index base, labels) into a sink that drops the rows, so the
figure is the parse, not the store's disk. The data: every svmlight file of ../shared/data and a
generated file of ``--gib`` GiB (in a temporary directory, deleted after; scikit-learn parses it
once, not ``--repeats`` times: at its speed one run is minutes).
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from .procs import reset_peak, status_bytes
from .results import add_results_dir, record
from .tables import ingest

DATA_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data"
MB = 1e6


class _DroppedRows:
    """A sink that keeps nothing: the parse alone is measured."""

    def add(self, X: Any, y: Any, text: Any = None) -> None:
        pass

    def shift_indices(self, delta: int) -> None:
        pass

    def abort(self) -> None:
        pass


def _parse_files(
    parser: str, threads: int, runs: list[tuple[str, int]]
) -> list[list[tuple[float, float, int]]]:
    """For each (path, repeats): the (seconds, CPU seconds, peak bytes above the start) of each
    parse of the file, in this process, pinned to ``threads`` cores."""
    import os
    import resource

    os.sched_setaffinity(0, set(sorted(os.sched_getaffinity(0))[:threads]))

    def cpu_seconds() -> float:
        usage = resource.getrusage(resource.RUSAGE_SELF)  # every thread of the process
        return usage.ru_utime + usage.ru_stime

    warm = Path(tempfile.mkdtemp()) / "warm.svm"
    warm.write_bytes(b"1 1:0.5 3:1\n-1 2:1.5\n")
    parse = _runner(parser, threads)
    parse(str(warm))
    pid = os.getpid()
    measured = []
    for path, repeats in runs:
        times = []
        for _ in range(repeats):
            reset_peak(pid)
            before = status_bytes(pid, "VmRSS")
            started, cpu_started = time.perf_counter(), cpu_seconds()
            parse(path)
            seconds, cpu = time.perf_counter() - started, cpu_seconds() - cpu_started
            times.append((seconds, cpu, max(status_bytes(pid, "VmHWM") - before, 0)))
        measured.append(times)
    return measured


def _runner(parser: str, threads: int) -> Any:
    if parser == "pgs":
        from app.services.datasets.parse_base import ParseOptions
        from app.services.datasets.parsing import parse_upload

        options = ParseOptions(format="svmlight", threads=threads, max_decompressed_bytes=2**40)
        return lambda p: parse_upload(Path(p), options, _DroppedRows())
    if parser == "sklearn":
        from sklearn.datasets import load_svmlight_file

        return load_svmlight_file
    import warnings

    import xgboost

    # Text input is deprecated in xgboost 3.1 (still its fastest LIBSVM reader): not a finding here.
    warnings.filterwarnings("ignore", message=".*Text file input has been deprecated")
    return lambda p: xgboost.DMatrix(f"{p}?format=libsvm", nthread=threads, silent=True)


def _measure(parser: str, threads: int, runs: list[tuple[Path, int]]) -> list[dict[str, Any]]:
    """One fresh process per parser: its figures on each file."""
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        measured = pool.apply(_parse_files, (parser, threads, [(str(p), n) for p, n in runs]))
    rows = []
    for (path, repeats), times in zip(runs, measured, strict=True):
        seconds = statistics.median(s for s, _, _ in times)
        mb_s = path.stat().st_size / MB / seconds
        rows.append(
            {
                "file": path.name,
                "mb": path.stat().st_size / MB,
                "parser": parser,
                "threads": threads,
                "seconds": seconds,
                "mb_s": mb_s,
                "mb_s_per_core": mb_s / threads,
                "cores_busy": statistics.median(cpu / s for s, cpu, _ in times),
                "peak_mib": statistics.median(m for _, _, m in times) / 2**20,
                "repeats": repeats,
            }
        )
        print(_line(rows[-1]), flush=True)
    return rows


def generate(path: Path, gib: float, seed: int = 0) -> None:
    """A file of ``gib`` GiB of rows like a scaled LIBSVM data set: labels +-1, 40 non-zeros of
    100,000 features, values written with 6 significant digits. Four distinct pieces of about
    16 MB, written in turn."""
    rng = np.random.default_rng(seed)
    pieces = []
    for _ in range(4):
        lines = []
        for _ in range(40_000):
            cols = np.sort(rng.choice(100_000, 40, replace=False)) + 1
            vals = rng.normal(size=40)
            lines.append(
                ("+1 " if rng.random() < 0.5 else "-1 ")
                + " ".join(f"{c}:{v:.6g}" for c, v in zip(cols, vals, strict=True))
            )
        pieces.append(("\n".join(lines) + "\n").encode())
    target = int(gib * 2**30)
    written = 0
    with path.open("wb") as fh:
        while written < target:
            piece = pieces[(written // len(pieces[0])) % len(pieces)]
            fh.write(piece)
            written += len(piece)


def _parsers(have_xgboost: bool) -> list[tuple[str, int]]:
    found = [("pgs", 1), ("pgs", 2), ("sklearn", 1)]
    return found + ([("xgboost", 1), ("xgboost", 2)] if have_xgboost else [])


def run(files: list[Path], gib: float, repeats: int) -> list[dict[str, Any]]:
    try:
        import xgboost  # noqa: F401

        have_xgboost = True
    except ImportError:
        have_xgboost = False
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        todo = list(files)
        if gib > 0:
            big = Path(tmp) / f"generated-{gib:g}gib.svm"
            generate(big, gib)
            todo.append(big)
        for parser, threads in _parsers(have_xgboost):
            # scikit-learn parses the generated file once: at its speed one run is minutes.
            runs = [
                (p, 1 if parser == "sklearn" and p.name.startswith("generated") else repeats) for p in todo
            ]
            results += _measure(parser, threads, runs)
    return results


def _line(row: dict[str, Any]) -> str:
    return (
        f"{row['file']:32s} {row['mb']:8.1f} MB  {row['parser']:8s} {row['threads']}t "
        f"{row['mb_s']:8.1f} MB/s {row['mb_s_per_core']:8.1f} MB/s/core  "
        f"{row['cores_busy']:4.2f} cores busy  peak {row['peak_mib']:7.1f} MiB"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gib", type=float, default=1.0, help="size of the generated file (0: none)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--files", nargs="*", help="names in ../shared/data (default: every .svm)")
    parser.add_argument("--no-results", action="store_true", help="print only, write no record")
    add_results_dir(parser)
    args = parser.parse_args(argv)
    recording = record("ingest", argv)
    names = args.files if args.files is not None else sorted(p.name for p in DATA_DIR.glob("*.svm"))
    results = run([DATA_DIR / n for n in names], args.gib, args.repeats)
    print(ingest(results))
    if not args.no_results:
        print(recording.save(results, args.results_dir))


if __name__ == "__main__":
    main()
