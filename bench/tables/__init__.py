"""docs/benchmarks.md's tables, goals and figures from the benchmarks' JSON records (bench/results.py).

The benchmarks print these tables at the end of a run, and ``python -m bench.report`` puts them
into docs/benchmarks.md, so what a run shows and what the page shows are the same text. Every
renderer takes the ``results`` part of a record; ``provenance`` renders the rest (command, commit,
machine, load). One module per family of benchmarks holds its renderers, its goals and the figures
the prose draws from its records; format, figures and goals hold what the families share; this
module names what each record gets.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .auto_calibration import auto_calibration, auto_calibration_hinge, auto_calibration_small
from .early_stopping import early_stopping, early_stopping_goals
from .end_to_end import FIGURES as END_TO_END_FIGURES
from .end_to_end import (
    end_to_end,
    end_to_end_files,
    end_to_end_files_goals,
    end_to_end_goals,
    end_to_end_ratio,
)
from .figures import RECORD_FIGURES, Figure
from .goals import Goal, goals_table
from .ingest import ingest, ingest_goals
from .inverse_time import FIGURES as INVERSE_TIME_FIGURES
from .inverse_time import inverse_time, paper_figures
from .inverse_time_scale import FIGURES as SCALE_FIGURES
from .inverse_time_scale import inverse_time_scale, inverse_time_scale_goals, scale_rows
from .l1 import FIGURES as L1_FIGURES
from .l1 import l1_paths, l1_paths_speed, l1_paths_survival
from .pgs_vs_sgd import FIGURES as PGS_VS_SGD_FIGURES
from .pgs_vs_sgd import (
    pgs_ablation,
    pgs_ablation_snapml,
    throughput,
    throughput_goals,
    time_to_accuracy,
    time_to_accuracy_case,
    time_to_accuracy_details,
    time_to_accuracy_goals,
)
from .provenance import provenance
from .service import FIGURES as SERVICE_FIGURES
from .service import (
    cold_start,
    cold_start_goals,
    dispatch_bench,
    dispatch_bench_goals,
    hostile_bench,
    load_bench,
    long_poll_bench,
    predict_bench,
    predict_bench_goals,
    soak,
    soak_goals,
)
from .setup_pass import FIGURES as SETUP_PASS_FIGURES
from .setup_pass import setup_pass, setup_pass_goals
from .sigma_auto import FIGURES as SIGMA_AUTO_FIGURES
from .sigma_auto import sigma_auto, sigma_auto_goals
from .wall_clock import FIGURES as WALL_CLOCK_FIGURES
from .wall_clock import peers, peers_case, peers_goals, threads, threads_case, threads_goals
from .warm_start import warm_start, warm_start_goals

# The goals, by the record they are read from (docs/results/<name>.json), in the page's order.
GOALS: dict[str, Callable[[Any], list[Goal]]] = {
    "throughput": throughput_goals,
    "time_to_accuracy": time_to_accuracy_goals,
    "predict_bench": predict_bench_goals,
    "dispatch_bench": dispatch_bench_goals,
    "soak": soak_goals,
    "peers": peers_goals,
    "setup_pass": setup_pass_goals,
    "end_to_end": end_to_end_goals,
    "end_to_end_files": end_to_end_files_goals,
    "cold_start": cold_start_goals,
    "threads": threads_goals,
    "inverse_time_scale": inverse_time_scale_goals,
    "ingest": ingest_goals,
    "early_stopping": early_stopping_goals,
    "warm_start": warm_start_goals,
    "sigma_auto": sigma_auto_goals,
}

# Which function renders which benchmark's record; ``view`` names a second table of the same one.
RENDERERS: dict[tuple[str, str], Callable[[Any], str]] = {
    ("throughput", "table"): throughput,
    ("time_to_accuracy", "table"): time_to_accuracy,
    ("time_to_accuracy", "details"): time_to_accuracy_details,
    ("pgs_ablation", "table"): pgs_ablation,
    ("pgs_ablation", "snapml"): pgs_ablation_snapml,
    ("paper_figures", "table"): paper_figures,
    ("inverse_time", "table"): inverse_time,
    ("inverse_time_scale", "table"): inverse_time_scale,
    ("l1_paths", "table"): l1_paths,
    ("l1_paths", "survival"): l1_paths_survival,
    ("l1_paths", "speed"): l1_paths_speed,
    ("predict_bench", "table"): predict_bench,
    ("load_bench", "table"): load_bench,
    ("long_poll_bench", "table"): long_poll_bench,
    ("dispatch_bench", "table"): dispatch_bench,
    ("hostile_bench", "table"): hostile_bench,
    ("soak", "table"): soak,
    ("peers", "table"): peers,
    ("end_to_end", "table"): end_to_end,
    ("end_to_end", "files"): end_to_end_files,
    ("cold_start", "table"): cold_start,
    ("threads", "table"): threads,
    ("ingest", "table"): ingest,
    ("early_stopping", "table"): early_stopping,
    ("warm_start", "table"): warm_start,
    ("sigma_auto", "table"): sigma_auto,
    ("setup_pass", "table"): setup_pass,
    ("auto_calibration", "table"): auto_calibration,
    ("auto_calibration", "hinge"): auto_calibration_hinge,
    ("auto_calibration", "small"): auto_calibration_small,
}

# The figures the template's prose draws from each benchmark's record, by (benchmark, name).
FIGURES: dict[tuple[str, str], Figure] = {
    **PGS_VS_SGD_FIGURES,
    **WALL_CLOCK_FIGURES,
    **INVERSE_TIME_FIGURES,
    **SCALE_FIGURES,
    **L1_FIGURES,
    **SERVICE_FIGURES,
    **END_TO_END_FIGURES,
    **SIGMA_AUTO_FIGURES,
    **SETUP_PASS_FIGURES,
}

__all__ = [
    "FIGURES",
    "GOALS",
    "Goal",
    "RECORD_FIGURES",
    "RENDERERS",
    "cold_start",
    "dispatch_bench",
    "early_stopping",
    "end_to_end",
    "end_to_end_files",
    "end_to_end_ratio",
    "goals_table",
    "hostile_bench",
    "ingest",
    "inverse_time",
    "inverse_time_scale",
    "l1_paths",
    "load_bench",
    "paper_figures",
    "peers",
    "peers_case",
    "pgs_ablation",
    "predict_bench",
    "provenance",
    "scale_rows",
    "setup_pass",
    "sigma_auto",
    "soak",
    "threads",
    "warm_start",
    "threads_case",
    "throughput",
    "time_to_accuracy",
    "time_to_accuracy_case",
]
