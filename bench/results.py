"""The record every benchmark writes: its figures as JSON, with the command, commit and machine.

Each ``python -m bench.NAME`` run writes ``docs/results/<name>.json`` (``--results-dir`` elsewhere,
e.g. for a smoke run that should not replace the published figures)::

    {"benchmark": "throughput", "command": "python -m bench.throughput --repeats 7",
     "commit": "6c0ad3d", "dirty": false, "started_at": "2026-...Z", "wall_seconds": 95.2,
     "load_average": {"start": [..], "end": [..]}, "machine": {...}, "results": ...}

The results live in docs/ beside the page rendered from them (``python -m bench.report`` writes
docs/benchmarks.md), so a change of a figure and of its record is one diff; bench/ stays code.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RESULTS_DIR = REPO / "docs" / "results"
# The libraries whose versions decide the figures.
LIBRARIES = ("numpy", "scipy", "numba", "scikit-learn")


def load_average() -> list[float] | None:
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None


def machine() -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "memory_gib": _memory_gib(),
        "python": platform.python_version(),
        **{lib: metadata.version(lib) for lib in LIBRARIES},
    }


def _git(*args: str) -> str | None:
    try:
        return subprocess.run(
            ["git", *args], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


@dataclass
class Recording:
    """Started before a benchmark measures anything; ``save`` writes its results."""

    benchmark: str
    command: str
    started_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    load_at_start: list[float] | None = field(default_factory=load_average)
    _clock: float = field(default_factory=time.perf_counter)

    def save(self, results: Any, directory: Path = RESULTS_DIR, name: str | None = None) -> Path:
        """Write ``<directory>/<name or benchmark>.json`` and return its path."""
        record = {
            "benchmark": self.benchmark,
            "command": self.command,
            "commit": _git("rev-parse", "--short", "HEAD"),
            # Uncommitted changes to the measured code make the commit an approximation.
            "dirty": bool(_git("status", "--porcelain", "--", "solver", "app", "bench/*.py")),
            "started_at": self.started_at,
            "wall_seconds": round(time.perf_counter() - self._clock, 1),
            "load_average": {"start": self.load_at_start, "end": load_average()},
            "machine": machine(),
            "results": results,
        }
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{name or self.benchmark}.json"
        path.write_text(json.dumps(record, indent=1, default=float) + "\n")
        return path


def record(benchmark: str, argv: list[str] | None) -> Recording:
    """Start the record of ``python -m bench.<benchmark> <argv>`` (argv None: this process's)."""
    args = sys.argv[1:] if argv is None else argv
    return Recording(benchmark, " ".join(["python -m bench." + benchmark, *args]))


def add_results_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--results-dir",
        type=Path,
        default=RESULTS_DIR,
        help="where the JSON record goes (default: docs/results)",
    )
