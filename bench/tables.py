"""Markdown tables from the benchmarks' JSON records (bench/results.py): one function per benchmark.

The benchmarks print these tables at the end of a run, and ``python -m bench.report`` puts them
into docs/benchmarks.md, so what a run shows and what the page shows are the same text. Every
function takes the ``results`` part of a record; ``provenance`` renders the rest (command, commit,
machine, load).
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Callable, Iterable
from typing import Any

# Goals of the time-to-accuracy benchmark: PGS p=2 in at most 1/2 of SGDClassifier's time and
# 1/10 of LIBLINEAR's; PGS p=1.8 within 2x of PGS p=2. Throughput: at least 1/2 of a bare loop's.
GOAL_SGD, GOAL_LIBLINEAR, GOAL_P18, GOAL_THROUGHPUT = 0.5, 0.1, 2.0, 0.5


def _row(cells: Iterable[Any]) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _table(header: list[str], rows: Iterable[Iterable[Any]]) -> str:
    return "\n".join([_row(header), "|" + "---|" * len(header), *(_row(r) for r in rows)])


def _s(x: float | None) -> str:
    """Seconds (or any positive figure) with 3 significant digits; '-' for none."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return "not reached" if math.isinf(x) else (f"{x:.3g}" if x < 100 else f"{x:.0f}")


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else math.nan


# -- provenance ------------------------------------------------------------------------------------


def provenance(record: dict) -> str:
    """Command, commit, date, machine, load and duration of one record, as one paragraph."""
    m = record["machine"]
    versions = ", ".join(
        f"{lib} {m[lib]}" for lib in ("numpy", "scipy", "numba", "scikit-learn") if m.get(lib)
    )
    commit = f"commit `{record['commit']}`" + (" with uncommitted changes" if record.get("dirty") else "")
    load = record.get("load_average") or {}
    loads = [f"{load[k][0]:.1f} at the {k}" for k in ("start", "end") if load.get(k)]
    parts = [
        f"`{record['command']}`",
        f"{commit}, {record['started_at'][:10]}",
        f"{m['cpus']} CPUs ({m['cpu_model']}), {m['memory_gib']} GiB, Python {m['python']}, {versions}",
    ]
    if loads:
        parts.append("load average " + " and ".join(loads))
    if record.get("wall_seconds"):
        parts.append(f"{record['wall_seconds'] / 60:.1f} min")
    text = "Command: " + "; ".join(parts) + "."
    if record.get("note"):
        text += " " + record["note"]
    return text


# -- throughput --------------------------------------------------------------------------------------


def throughput(r: dict) -> str:
    med = {name: _median(ts) for name, ts in r["ns_per_update"].items()}
    floor = med["bare dot+axpy loop"]
    nnz = r["nnz_per_update"]
    rows = [
        [name, f"{ns:.0f}", f"{1e3 / ns:.2f} M", f"{nnz * 1e3 / ns:.0f} M", f"{floor / ns:.2f}"]
        for name, ns in med.items()
    ]
    return "\n".join(
        [
            f"{r['data']}: {r['m']:,} x {r['n']:,}, {nnz:.1f} non-zeros per visited row, "
            f"{r['updates_per_run']:,} updates per run, median of {r['repeats']} interleaved repeats.",
            "",
            _table(["loop", "ns per update", "updates/s", "non-zeros/s", "throughput vs bare"], rows),
            "",
            *(f"- {line}" for line in throughput_goals(r)),
        ]
    )


def throughput_goals(r: dict) -> list[str]:
    med = {name: _median(ts) for name, ts in r["ns_per_update"].items()}
    floor = med["bare dot+axpy loop"]
    pgs = {name: floor / ns for name, ns in med.items() if name.startswith("PGS")}
    met = sum(v >= GOAL_THROUGHPUT for v in pgs.values())
    return [
        f"PGS updates at least {GOAL_THROUGHPUT:g}x the bare loop's throughput: met by {met} of "
        f"{len(pgs)} variants ({min(pgs.values()):.3f}-{max(pgs.values()):.3f})"
    ]


# -- time to accuracy --------------------------------------------------------------------------------


def _summary(runs: list[dict]) -> dict:
    """Median seconds (runs that missed count as infinitely slow), spread, epochs, untraced time."""
    times = [r["seconds"] if r["seconds"] is not None else math.inf for r in runs]
    ok = [r for r in runs if r["seconds"] is not None]
    untraced = None
    if ok and all("untraced_seconds" in r["extra"] for r in ok):
        untraced = statistics.median(
            r["extra"]["untraced_seconds"] if r["seconds"] is not None else math.inf for r in runs
        )
    epochs = [r["epochs"] for r in ok if r["epochs"] is not None]
    return {
        "median": statistics.median(times) if times else math.inf,
        "lo": min((r["seconds"] for r in ok), default=None),
        "hi": max((r["seconds"] for r in ok), default=None),
        "reached": len(ok),
        "total": len(runs),
        "epochs": statistics.median(epochs) if epochs else None,
        "untraced": untraced,
    }


def _is_default_p2(method: dict) -> bool:
    return method["kind"] == "pgs" and method["params"] == {"p": 2.0}


def _ratios(case: dict) -> dict[str, float | None]:
    """The goal ratios of one (data set, sigma); None where the p=1.8 target is unreachable."""
    methods = case["methods"]
    p2 = _summary(next(m for m in methods if _is_default_p2(m))["runs"])
    sgd = [
        (m["params"].get("slices", 1), _summary(m["runs"])["median"]) for m in methods if m["kind"] == "sgd"
    ]
    lib = _summary(next(m for m in methods if m["kind"] == "liblinear")["runs"])["median"]
    p18 = next(m for m in methods if m["kind"] == "pgs" and m["params"] == {"p": 1.8, "batch_size": 1})
    best_sgd = min(s for _, s in sgd)
    untraced = p2["untraced"] if p2["untraced"] is not None else math.nan
    return {
        "p2_seconds": p2["median"],
        "p2_epochs": p2["epochs"],
        "sgd": p2["median"] / best_sgd,
        "sgd_untraced": untraced / best_sgd,
        "sgd_whole_epochs": p2["median"] / min(s for slices, s in sgd if slices == 1),
        "liblinear": p2["median"] / lib,
        "p18_common": (
            _summary(p18["runs"])["median"] / p2["median"] if case["common18_reachable"] else None
        ),
        "p18_own": _summary(p18["own_runs"])["median"] / p2["median"],
    }


def _goal(value: float | None, goal: float) -> str:
    if value is None:
        return "unreachable"
    if math.isnan(value):
        return "-"
    return f"{value:.2f} " + ("met" if value <= goal else "miss")


def _count(values: list[float | None], goal: float) -> str:
    defined = [v for v in values if v is not None and not math.isnan(v)]
    return f"{sum(v <= goal for v in defined)} of {len(defined)}"


def time_to_accuracy(r: dict) -> str:
    """One row per (data set, sigma): the goal ratios, then how many cases meet each goal."""
    rows = []
    for case in r["cases"]:
        q = _ratios(case)
        epochs = "-" if q["p2_epochs"] is None else f"{q['p2_epochs']:.2f}"
        rows.append(
            [
                case["set"],
                f"{case['sigma']:g}",
                f"{_s(q['p2_seconds'])} ({epochs})",
                _goal(q["sgd"], GOAL_SGD),
                _goal(q["sgd_untraced"], GOAL_SGD),
                _goal(q["sgd_whole_epochs"], GOAL_SGD),
                _goal(q["liblinear"], GOAL_LIBLINEAR),
                _goal(q["p18_common"], GOAL_P18),
                _goal(q["p18_own"], GOAL_P18),
            ]
        )
    header = [
        "set",
        "sigma",
        "PGS p=2 s (epochs)",
        f"/ best SGD (<= {GOAL_SGD:g})",
        "same, PGS untraced",
        "/ SGD, whole epochs",
        f"/ LIBLINEAR (<= {GOAL_LIBLINEAR:g})",
        f"p=1.8 / p=2, common target (<= {GOAL_P18:g})",
        "p=1.8 / p=2, own target",
    ]
    return "\n".join(
        [
            f"PGS and SGD: {r['repeats']} seeds, LIBLINEAR {r['liblinear_repeats']} repeats; medians; "
            f"cap {r['epoch_cap']} epochs; target = the exact optimum's test accuracy - "
            f"{100 * r['target_drop']:g} points.",
            "",
            _table(header, rows),
            "",
            *(f"- {line}" for line in time_to_accuracy_goals(r)),
        ]
    )


def time_to_accuracy_goals(r: dict) -> list[str]:
    ratios = [_ratios(case) for case in r["cases"]]
    return [
        f"PGS p=2 in <= {GOAL_SGD:g}x the fastest SGD row's time: "
        f"{_count([q['sgd'] for q in ratios], GOAL_SGD)} cases "
        f"(untraced: {_count([q['sgd_untraced'] for q in ratios], GOAL_SGD)}; against the "
        f"whole-epoch rows: {_count([q['sgd_whole_epochs'] for q in ratios], GOAL_SGD)})",
        f"PGS p=2 in <= {GOAL_LIBLINEAR:g}x LIBLINEAR's time: "
        f"{_count([q['liblinear'] for q in ratios], GOAL_LIBLINEAR)} cases",
        f"PGS p=1.8 (k=1) within {GOAL_P18:g}x of p=2: {_count([q['p18_common'] for q in ratios], GOAL_P18)}"
        f" reachable cases at the common target, {_count([q['p18_own'] for q in ratios], GOAL_P18)}"
        " at its own optimum's target",
    ]


def _method_rows(case: dict) -> list[list[str]]:
    rows = []
    for meth in case["methods"]:
        s = _summary(meth["runs"])
        unreachable = meth["kind"] == "pgs" and meth["params"]["p"] != 2.0 and not case["common18_reachable"]
        note = "unreachable: the p=1.8 optimum is below the target" if unreachable else ""
        if meth["kind"] == "liblinear" and meth["runs"] and meth["runs"][0]["extra"].get("max_iter"):
            note = f"max_iter={meth['runs'][0]['extra']['max_iter']}"
        if meth["kind"] == "sgd" and s["epochs"] == 1.0:
            note = "after the 1st epoch (time quantised to epochs)"
        finals = [
            run["extra"]["final_accuracy"]
            for run in meth["runs"]
            if run["seconds"] is None and run["extra"].get("final_accuracy") is not None
        ]
        if finals and not unreachable:
            note = (note + "; " if note else "") + f"misses end at acc {min(finals):.4f}-{max(finals):.4f}"
        rows.append(_summary_row(meth["label"], s, "-" if unreachable else None, note))
        if meth["own_runs"]:
            rows.append(
                _summary_row(
                    f"... to its own target {case['target18']:.4f}",
                    _summary(meth["own_runs"]),
                    None,
                    "p=1.8 optimum acc - 0.5 pt",
                )
            )
    return rows


def _summary_row(label: str, s: dict, cell: str | None, note: str) -> list[str]:
    spread = "-" if s["lo"] is None else f"{_s(s['lo'])}-{_s(s['hi'])}"
    epochs = "-" if s["epochs"] is None else f"{s['epochs']:.2f}"
    return [
        label,
        cell or _s(s["median"]),
        spread,
        f"{s['reached']}/{s['total']}",
        epochs,
        _s(s["untraced"]),
        note,
    ]


def time_to_accuracy_case(case: dict) -> str:
    """The full table of one (data set, sigma): every method, spread, epochs, untraced time."""
    o2, o18 = case["opt2"], case["opt18"]
    lines = [
        f"#### {case['set']}, sigma = {case['sigma']:g}",
        "",
        f"{case['m']:,} x {case['n']:,} ({case['nnz_per_row']:.1f} non-zeros per row), "
        f"{case['m_test']:,} test rows; intercept feature s = {case['intercept_scaling']:.3g}. "
        f"Exact p=2 optimum ({o2['solver']}, {o2['seconds']:.1f} s): test accuracy "
        f"{o2['accuracy']:.4f}, |grad| {o2['grad_norm']:.1e}, so the target is {case['target']:.4f}. "
        f"Exact p=1.8 optimum ({o18['solver']}): test accuracy {o18['accuracy']:.4f}. "
        f"PGS fit() set-up outside solver_seconds_: {_s(case['pgs_setup'])} s.",
        "",
        _table(
            ["method", "median s to target", "min-max", "reached", "epochs", "untraced s", "note"],
            _method_rows(case),
        ),
    ]
    return "\n".join(lines)


def time_to_accuracy_details(r: dict) -> str:
    return "\n\n".join(time_to_accuracy_case(case) for case in r["cases"])


# -- the PGS defaults, one change at a time ------------------------------------------------------------


def pgs_ablation(r: dict) -> str:
    def cell(epochs: list[float | None]) -> str:
        reached = [e for e in epochs if e is not None]
        median = statistics.median([math.inf if e is None else e for e in epochs])
        text = "never" if math.isinf(median) else f"{median:.2f}"
        return text if len(reached) == len(epochs) else f"{text} ({len(reached)}/{len(epochs)})"

    header = ["PGS p=2: epochs to target"] + [f"{c['set']} {c['sigma']:g}" for c in r["cases"]]
    rows = [[label] + [cell(c["epochs"][label]) for c in r["cases"]] for label in r["variants"]]
    return (
        f"Median over {r['seeds']} seeds of the epochs to the target; cap {r['epoch_cap']} "
        "epochs; (k/n) where only k of n seeds reached it.\n\n" + _table(header, rows)
    )


# -- the PGS paper's Figures 5-9 and Table II ------------------------------------------------------------


def _by_m(values: dict) -> dict[str, Any]:
    """A dict keyed by m as strings: a record's keys after JSON, integers in the run that prints it."""
    return {str(k): v for k, v in values.items()}


def paper_figures(r: dict) -> str:
    sizes = r["sizes"]
    cells = {(row["method"], row["m"], row["target"]): row for row in r["rows"]}
    methods = list(dict.fromkeys(row["method"] for row in r["rows"]))

    def cell(row: dict) -> str:
        text = _s(row["median_seconds"])
        return text if row["reached"] == row["runs"] else f"{text} ({row['reached']}/{row['runs']})"

    rows = [
        [method, f"{target:g}"] + [cell(cells[method, m, target]) for m in sizes]
        for target in r["targets"]
        for method in methods
    ]
    sigmas = [
        [f"sigma(m), {objective}", ""] + [f"{_by_m(sig)[str(m)]:.0e}" for m in sizes]
        for objective, sig in r["sigmas"].items()
    ]
    table_ii = [_table_ii_row(row) for row in r["table_ii"]]
    runs = max(row["runs"] for row in r["rows"])
    return "\n".join(
        [
            f"#### {r['set']}: median solver seconds to each test accuracy (PGS: {runs} seeds; "
            "L-BFGS: one deterministic run)",
            "",
            _table(["method", "target"] + [f"m={m:,}" for m in sizes], rows + sigmas),
            "",
            f"Table II, {r['set']} (m = {sizes[-1]:,}, sigma chosen on validation data; PGS "
            f"{r['table_ii'][0]['runs']} seeds, 5 epochs):",
            "",
            _table(
                [
                    "objective",
                    "sigma",
                    "L-BFGS accuracy (iterations, stop)",
                    "PGS accuracy median +- std",
                    "PGS - L-BFGS (points)",
                    "training objective L-BFGS / PGS median",
                    "PGS seconds (median)",
                ],
                table_ii,
            ),
        ]
    )


def _table_ii_row(row: dict) -> list[str]:
    return [
        row["objective"],
        f"{row['sigma']:.0e}",
        f"{row['lbfgs_accuracy']:.4f} ({row['lbfgs_iterations']}, {row['lbfgs_stop_reason']})",
        f"{row['pgs_accuracy_median']:.4f} +- {row['pgs_accuracy_std']:.4f}",
        _within_a_tenth(row["pgs_accuracy_median"] - row["lbfgs_accuracy"]),
        f"{row['lbfgs_objective']:.6g} / {row['pgs_objective_median']:.6g}",
        f"{row['pgs_seconds_median']:.3f}",
    ]


def _within_a_tenth(gap: float) -> str:
    """Table II's claim: PGS within 0.1 points of the exact optimum's accuracy."""
    return f"{100 * gap:+.2f} ({'within' if abs(gap) <= 0.001 else 'not within'} 0.1)"


def inverse_time(r: dict) -> str:
    features = r["features"]
    columns = [(n, {row["m"]: row for row in rows}) for n, rows in features.items()]
    sizes = [row["m"] for row in next(iter(features.values()))]

    def cell(row: dict) -> str:
        its = "-" if row["median_iterations"] is None else f"{row['median_iterations']:,.0f}"
        floor = "" if row.get("optimum_error") is None else f", exact optimum {row['optimum_error']:.3f}"
        return f"{its} ({row['reached']}/{row['runs']}, sigma {row['sigma']:.0e}{floor})"

    rows = [[f"{m:,}"] + [cell(by_m[m]) for _, by_m in columns] for m in sizes]
    setting = (
        "PGS defaults"
        if r.get("setting", "defaults") == "defaults"
        else f"Figure 1 as printed, output {r['output']}"
    )
    return (
        f"Median iterations to ||w/||w|| - w*|| < {r['target']:g} over {r['runs']} seeds "
        f"(reached/runs, sigma(m) by {r['sigma_rule']}; {setting}); figure "
        f"`{r['figure']}`.\n\n" + _table(["m"] + [f"{n} features" for n, _ in columns], rows)
    )


# -- L1 solvers --------------------------------------------------------------------------------------


def scale_rows(size: dict) -> list[dict]:
    """One size's (method, m, target, median seconds, reached, repeats) from its studies' tables."""
    return [
        {
            "method": row["label"],
            "m": size["m"],
            "target": row["target"],
            "median_seconds": row["median_seconds"],
            "median_iterations": row["median_iterations"],
            "reached": row["reached"],
            "repeats": row["repeats"],
        }
        for study in ("pgs", "lbfgs")
        for row in size[study].get("table", [])
    ]


def _count_of(n: float) -> str:
    """An iteration count in 2-3 significant digits: 2.6M, 740K, 69."""
    for unit, scale in (("M", 1e6), ("K", 1e3)):
        if n >= scale:
            return f"{n / scale:.2g}{unit}" if n < 10 * scale else f"{n / scale:.0f}{unit}"
    return f"{n:.0f}"


def inverse_time_scale(r: dict) -> str:
    """Median seconds to each target per (method, m); then what each m cost to make and hold."""
    sizes = [size["m"] for size in r["results"]]
    cells = {
        (row["method"], row["m"], row["target"]): row for size in r["results"] for row in scale_rows(size)
    }
    methods = list(dict.fromkeys(method for method, _, _ in cells))
    refused = {size["m"] for size in r["results"] if "refused" in size["lbfgs"]}
    if refused and "L-BFGS" not in methods:
        methods.append("L-BFGS")

    def cell(method: str, m: int, target: float) -> str:
        if method == "L-BFGS" and m in refused:
            return "refused (422)"
        row = cells.get((method, m, target))
        if row is None:
            return "-"
        text = (
            "not reached"
            if row["median_seconds"] is None
            else f"{_s(row['median_seconds'])} ({_count_of(row['median_iterations'])})"
        )
        return text if row["reached"] == row["repeats"] else (f"{text} ({row['reached']}/{row['repeats']})")

    gib = 1024**3
    times = _table(
        ["method", "target"] + [f"m={m:,}" for m in sizes],
        [
            [method, f"{target:g}"] + [cell(method, m, target) for m in sizes]
            for target in r["targets"]
            for method in methods
        ],
    )
    costs = _table(
        [
            "m",
            "sigma(m)",
            "svmlight text (GiB)",
            "generation (s)",
            "import (s)",
            "parse (MB/s)",
            "training shards (GiB)",
            "data directory (GiB)",
            "parse peak RSS (GiB)",
            "worker peak RSS (GiB)",
        ],
        [
            [
                f"{size['m']:,}",
                f"{size['sigma']:.1e}",
                f"{size['train_text_bytes'] / gib:.2f}",
                f"{size['train_generate_seconds']:.0f}",
                f"{size['train_import_seconds']:.0f}",
                f"{size['parse_mb_per_s']:.1f}",
                f"{size['train_stored_bytes'] / gib:.2f}",
                f"{size['disk_bytes'] / gib:.2f}",
                f"{size['import_peak_rss_bytes'] / gib:.2f}",
                f"{size['worker_peak_rss_bytes'] / gib:.2f}",
            ]
            for size in r["results"]
        ],
    )
    return "\n".join(
        [
            f"#### Median solver seconds (and iterations) to each test accuracy ({r['test_rows']:,} "
            "test rows; PGS: the studies' repeats; L-BFGS: one deterministic run)",
            "",
            times,
            "",
            f"#### What each m took (worker memory budget {r['worker_memory_bytes'] / gib:g} GiB)",
            "",
            costs,
        ]
    )


def l1_paths(r: dict) -> str:
    def spread(values, fmt):
        low, mid, high = min(values), statistics.median(values), max(values)
        return format(mid, fmt) if low == high else f"{mid:{fmt}} [{low:{fmt}}, {high:{fmt}}]"

    rows = []
    for panel in r["panels"]:
        for row in panel["rows"]:
            head = [
                f"{panel['dataset']} (Fig. {panel['figure']})",
                f"{panel['lambda']:g}",
                row["method"],
                "" if row["eta"] is None else f"{row['eta']:.3g}",
            ]
            if "diverged" in row:
                rows.append(head + ["diverged", "", "", "", "", ""])
                continue
            rows.append(
                head
                + [
                    f"{row['accesses'] / panel['budget']:.2f}",
                    spread(row["gap"], ".2e"),
                    f"{spread(row['nnz'], '.0f')} ({panel['nnz_star']})",
                    spread(row["nnz_above_1e-3_max"], ".0f"),
                    f"{row['iterations_per_s']:,.0f}",
                    f"{row['seconds']:.0f}",
                ]
            )
    return _table(
        [
            "data set",
            "lambda",
            "method",
            "eta",
            "accesses / budget",
            "(P - P*)/P*",
            "exact nnz (optimum)",
            "nnz > 1e-3 max",
            "iterations/s",
            "s",
        ],
        rows,
    )


def l1_paths_survival(r: dict) -> str:
    def value(panel, key, fmt):
        v = panel["zero_survival"][key]
        return "-" if v is None else format(v, fmt)

    rows = [
        [
            panel["dataset"],
            f"{panel['lambda']:g}",
            f"{panel['d']:,}",
            panel["nnz_star"],
            panel["zero_survival"]["irrelevant_features"],
            value(panel, "fraction", ".3f"),
            value(panel, "median_ratio", ".3g"),
            value(panel, "stationary_nonzero", ",.0f"),
        ]
        for panel in r["panels"]
    ]
    return _table(
        [
            "data set",
            "lambda",
            "features",
            "nnz of w*",
            "features with w*_j = 0",
            "share of their x_ij != 0 with abs(l'(z*_i) x_ij) <= lambda",
            "median abs(l'(z*_i) x_ij) / lambda",
            "their duals non-zero under Algorithm 3's truncation at w*",
        ],
        rows,
    )


def l1_paths_speed(r: dict) -> str:
    rows = [
        [
            row["dataset"],
            f"{row['m']:,} x {row['d']:,}",
            f"{row['row_nnz']:.0f}",
            row["method"],
            row["dual_exponent"],
            f"{row['eta']:.3g}",
            f"{row['iterations']:,}",
            f"{row['iterations_per_s']:,.0f}",
            ", ".join(f"{n:,}" for _, n in row["nnz_weights"][-3:]),
            f"{row['test_accuracy']:.3f}",
        ]
        for row in r["speed"]
    ]
    return _table(
        [
            "data set",
            "m x d",
            "nnz per row",
            "method",
            "p",
            "eta (auto)",
            "iterations",
            "iterations/s",
            "nnz(w) at the last 3 checkpoints",
            "test accuracy",
        ],
        rows,
    )


# -- the service -------------------------------------------------------------------------------------


def predict_bench(r: dict) -> str:
    svc, triv = r["service"], r["trivial"]
    rows = [
        [name, f"{x['single_p50_ms']:.2f}", f"{x['single_p99_ms']:.2f}", f"{x['batch_rows_per_s']:,.0f}"]
        for name, x in (("service", svc), ("trivial", triv))
    ]
    return "\n".join(
        [
            f"a9a model; {r['singles']:,} single-row requests per server, alternating request by "
            f"request; {r['batches']} batches of {r['batch_rows']:,} rows; loopback, keep-alive.",
            "",
            _table(
                [
                    "endpoint",
                    "single row p50 ms",
                    "single row p99 ms",
                    f"rows/s in {r['batch_rows']:,}-row batches",
                ],
                rows,
            ),
            "",
            *(f"- {line}" for line in predict_bench_goals(r)),
        ]
    )


def predict_bench_goals(r: dict) -> list[str]:
    ratio = r["service"]["single_p99_ms"] / r["trivial"]["single_p99_ms"]
    return [
        f"Single-row prediction p99 within 2x of a trivial endpoint's: {ratio:.2f}x, "
        + ("met" if ratio <= 2 else "missed")
    ]


def load_bench(results: list[dict]) -> str:
    rows = []
    for r in results:
        p, t = r["predictions"], r["training"]
        wall = "-" if t["job_wall_s_median"] is None else f"{t['job_wall_s_median']:.1f} s"
        rows.append(
            [
                r["setup"],
                f"{p['requests']:,}",
                f"{p['requests_per_s']:.0f}",
                f"{p['p50_ms']:.0f} ms",
                f"{p['p99_ms']:.0f} ms",
                f"{p['max_ms']:.0f} ms",
                p["errors"],
                f"{t['jobs_completed']} of {t['jobs_submitted']} ({wall})",
            ]
        )
    first = results[0]
    return (
        f"{first['clients']} prediction clients for {first['duration_s']:.0f} s, with training "
        "jobs in flight.\n\n"
        + _table(
            [
                "setup",
                "requests",
                "requests/s",
                "p50",
                "p99",
                "max",
                "errors",
                "jobs completed (median wall time)",
            ],
            rows,
        )
    )


def dispatch_bench(results: list[dict]) -> str:
    def ms(case: dict | None) -> str:
        if case is None:
            return "n/a"
        v = case["server_ms"]
        return f"{v:.0f} ms" if v < 1000 else f"{v / 1000:.1f} s"

    rows = [
        [
            r["setup"],
            f"{r['warm']['server_p50_ms']:.1f} ms ({r['warm']['server_max_ms']:.1f} ms)",
            f"{r['warm']['client_p50_ms']:.1f} ms",
            ms(r.get("cold_prestarted")),
            ms(r.get("cold_cache_warm")),
            ms(r.get("cold_cache_empty")),
        ]
        for r in results
    ]
    n = results[0]["warm"]["n"]
    return "\n".join(
        [
            _table(
                [
                    "setup",
                    f"warm, idle worker: p50 (max) of {n}",
                    "client-side p50",
                    "first job after start (defaults: prestarted)",
                    "first job, no prestart, cache warm",
                    "no prestart, empty Numba cache",
                ],
                rows,
            ),
            "",
            *(f"- {line}" for line in dispatch_bench_goals(results)),
        ]
    )


def dispatch_bench_goals(results: list[dict]) -> list[str]:
    lines = []
    for r in results:
        warm = r["warm"]["server_p50_ms"]
        cold = r["cold_prestarted"]["server_ms"] - warm
        lines.append(
            f"Dispatch ({r['setup']}): warm {warm:.1f} ms, goal < 100 ms, "
            f"{'met' if warm < 100 else 'missed'}; first job after a start {cold:.0f} ms more, "
            f"goal < 1 s, {'met' if cold < 1000 else 'missed'}"
        )
    return lines


# -- the service end to end ----------------------------------------------------------------------------

# The job's wall time (POST to succeeded) at most this multiple of the in-process fit plus one read.
GOAL_END_TO_END = 1.3
# The worker's steps of a job in the order it runs them (bench.end_to_end's replay).
WORKER_STEPS = ("load_job", "load_data", "fit_traced", "package", "metrics", "store_model")


def end_to_end_ratio(sample: dict, clock: str = "client_s") -> float:
    """One repeat's job time (the client's, or the job's own ``server_s``) over the same work in
    one process: one read, the job's preprocessing (if any) and the fit."""
    return sample[clock] / (sample["read_s"] + sample.get("prep_s", 0.0) + sample["fit_s"])


def _e2e_case(case: dict) -> str:
    prep = "raw features" if case["preprocessing"] == "none" else "default preprocessing"
    return f"PGS p={case['p']:g}, {prep}"


def end_to_end(r: dict) -> str:
    def ms(x: float) -> str:
        return f"{x * 1000:.0f}"

    rows = []
    for case in r["cases"]:
        med, first = case["median"], case["first_job"]
        rows.append(
            [
                _e2e_case(case),
                ms(med["client_s"]),
                ms(med["server_s"]),
                ms(med["dispatch_s"]),
                ms(med["run_s"]),
                ms(med["solver_s"]),
                ms(med["read_s"]),
                ms(med["prep_s"]),
                ms(med["fit_s"]),
                f"{_median([end_to_end_ratio(s) for s in case['samples']]):.2f}",
                f"{_median([end_to_end_ratio(s, 'server_s') for s in case['samples']]):.2f}",
                ms(first["client_s"]),
            ]
        )
    lines = [
        f"{r['set']}: {r['m']:,} x {r['n']} ({r['nnz']:,} non-zeros) stored by one upload "
        f"({r['upload_s']:.0f} s); sigma {r['sigma']:g}, {r['n_iter']:,} iterations, every row "
        f"trained on; medians of {r['repeats']} interleaved repeats, in milliseconds. The ratio "
        "is the job's time over read + preprocessing + fit (median of the repeats' ratios).",
        "",
        _table(
            [
                "case",
                "POST to succeeded (client)",
                "created to finished (job)",
                "dispatch",
                "worker run",
                "solver",
                "one read",
                "preprocessing",
                "fit()",
                "ratio (client)",
                "ratio (job)",
                "first job (client)",
            ],
            rows,
        ),
    ]
    profiled = [c for c in r["cases"] if c.get("worker_steps")]
    if profiled:

        def step_row(case: dict) -> list[str]:
            steps = case["worker_steps"]
            rest = case["median"]["run_s"] - sum(steps[k] for k in WORKER_STEPS)
            return [
                _e2e_case(case),
                *(ms(steps[k]) for k in WORKER_STEPS),
                ms(steps["fit_traced"] - steps["fit"]),
                ms(rest),
            ]

        lines += [
            "",
            f"The worker's steps replayed in the benchmark's process with the server "
            f"stopped (median of {r['profile_repeats']}), in milliseconds; the last "
            "columns are the trace's share of the traced fit, and the job's median worker "
            "run minus the replayed steps (its database writes, progress and heartbeats, "
            "and the load the server's other processes add):",
            "",
            _table(
                [
                    "case",
                    "load job",
                    "load data (read + preprocessing)",
                    "fit, traced (as the worker)",
                    "export",
                    "metrics",
                    "model files",
                    "of which the trace",
                    "worker run not in the replay",
                ],
                [step_row(c) for c in profiled],
            ),
        ]
    return "\n".join([*lines, "", *(f"- {line}" for line in end_to_end_goals(r))])


def end_to_end_goals(r: dict) -> list[str]:
    lines = []
    for case in r["cases"]:
        ratio = _median([end_to_end_ratio(s) for s in case["samples"]])
        lines.append(
            f"End to end ({_e2e_case(case)}, {r['m']:,} rows): POST to succeeded "
            f"{ratio:.2f}x the in-process fit() plus one read, goal at most "
            f"{GOAL_END_TO_END}x, {'met' if ratio <= GOAL_END_TO_END else 'missed'}"
        )
    return lines


# The first job after a fresh install starts training within this many seconds of /readyz.
GOAL_COLD_START_S = 10.0


def cold_start(r: dict) -> str:
    seen = "-" if r["running_seen_s"] is None else f"{r['running_seen_s']:.2f}"
    uploaded = "-" if r.get("uploaded_s") is None else f"{r['uploaded_s']:.2f}"
    row = [
        f"{r['make_serve_to_ready_s']:.0f}",
        uploaded,
        f"{r['posted_s']:.2f}",
        f"{r['running_s']:.2f}",
        seen,
        f"{r['compile_s']:.2f}",
        f"{r['training_s']:.2f}",
        f"{r['succeeded_s']:.2f}",
    ]
    return "\n".join(
        [
            f"A fresh clone (commit `{r['commit']}`); seconds from /readyz = 200 unless said otherwise.",
            "",
            _table(
                [
                    "make serve to /readyz (install included)",
                    "data set uploaded",
                    "job posted",
                    "running (job's clock)",
                    "running (seen by the client)",
                    "kernels loaded (job's compile_seconds)",
                    "training starts",
                    "succeeded",
                ],
                [row],
            ),
            "",
            *(f"- {line}" for line in cold_start_goals(r)),
        ]
    )


def cold_start_goals(r: dict) -> list[str]:
    t = r["training_s"]
    return [
        f"First job after a fresh install: training starts {t:.1f} s after /readyz, goal at "
        f"most {GOAL_COLD_START_S:.0f} s, {'met' if t <= GOAL_COLD_START_S else 'missed'}"
    ]


def _answer(outcome: dict) -> str:
    """The status, and the setting the problem's detail names as the limit that was hit."""
    limit = re.search(r"\b(PGS_[A-Z_]+)\b", outcome.get("detail") or "")
    return f"{outcome['status']}" + (f" (`{limit.group(1)}`)" if limit else "")


def hostile_bench(r: dict) -> str:
    inputs = {
        "bomb": "gzip bomb: a small gzip of ~150 MB of one-feature rows",
        "newlines": "a 3 MB gzip of ~3 GB of newlines after two rows",
        "cr_rows": "36 MB `\\r`-separated text prediction (9.4M rows)",
        "json_rows": "64 MB JSON prediction of 16.8M one-number rows",
    }
    rows = [
        [
            text,
            _answer(r[case]),
            f"{r[case]['seconds']:.2f} s",
            f"+{r[case]['api_peak_rss_growth_mb']:.1f} MB",
            f"{r[case]['healthz_worst_ms']:.0f} ms",
        ]
        for case, text in inputs.items()
        if case in r
    ]
    for case, what in (("upload", "svmlight upload"), ("upload_gz", "gzip svmlight upload")):
        if case in r:
            up = r[case]["upload"]
            rows.append(
                [
                    f"{r[case]['file_mb']:.0f} MB {what} (a9a rows repeated)",
                    _answer(up),
                    f"{up['seconds']:.1f} s",
                    f"+{up['api_peak_rss_growth_mb']:.1f} MB",
                    "",
                ]
            )
    lines = [
        _table(["input", "answer", "time to it", "API peak RSS growth", "worst /healthz meanwhile"], rows)
    ]
    quiet, loaded = r.get("quiet"), r.get("upload", {}).get("predict")
    if quiet and loaded and "p50_ms" in quiet and "p50_ms" in loaded:
        lines += [
            "",
            f"Single-row predictions from one client: p50 {quiet['p50_ms']:.1f} ms, p99 "
            f"{quiet['p99_ms']:.1f} ms quiet; p50 {loaded['p50_ms']:.1f} ms, p99 "
            f"{loaded['p99_ms']:.1f} ms while the {r['upload']['file_mb']:.0f} MB file was "
            "uploaded and parsed.",
        ]
    return "\n".join(lines)


def soak(r: dict) -> str:
    quiet, loaded, jobs, rss = r["quiet"], r["soak"], r["jobs"], r["api_rss_mb"]
    rows = [
        [
            what,
            f"{p['requests']:,}",
            f"{p['requests_per_s']:.0f}",
            f"{p['p50_ms']:.0f} ms",
            f"{p['p99_ms']:.0f} ms",
            f"{p['max_ms']:.0f} ms",
            p["errors"],
        ]
        for what, p in (("quiet", quiet), ("soak", loaded))
    ]
    lines = [
        f"{r['clients']} prediction clients, {r['quiet_seconds']:.0f} s alone, then "
        f"{r['seconds']:.0f} s with hostile uploads, a job every {r['job_interval_s']:.0f} s "
        f"and a worker killed every {r['kill_every_s']:.0f} s ({r['workers_killed']} killed, "
        f"{r['idle_workers_killed']} of them idle; "
        f"{r['workers']} workers, `PGS_MAX_JOB_SECONDS={r['max_job_seconds']:.0f}`).",
        "",
        _table(["run", "predictions", "per s", "p50", "p99", "max", "failed"], rows),
        "",
        _table(["job kind: final state (reason)", "jobs"], jobs["outcomes"].items()),
        "",
    ]
    slowest = r["slowest_answer_s"]
    uploads = [
        [
            f"`{name}`",
            ", ".join(f"{status} x{n}" for status, n in sorted(answers.items())),
            f"{slowest[name]:.1f} s",
        ]
        for name, answers in sorted(r["uploads"].items())
    ]
    lines += [_table(["hostile upload", "answers", "slowest answer"], uploads), ""]
    refused = ", ".join(f"{k} x{n}" for k, n in jobs["refused"].items()) or "none"
    lines.append(
        f"Jobs submitted: {jobs['submitted']} (refused before queueing: {refused}); "
        f"not final after the drain: {len(jobs['not_final'])}; with a reason other than "
        f"the true one: {len(jobs['untrue_reasons'])}. API resident memory: "
        f"{rss['start']:.0f} MB at the start of the soak, peak {rss['peak']:.0f} MB, "
        f"{rss['end']:.0f} MB after the drain. The slowest answer to a job submission "
        f"took {slowest.get('POST /v1/jobs', 0):.1f} s."
    )
    return "\n".join(lines)


def soak_goals(r: dict) -> list[str]:
    failed, ratio, jobs = r["soak"]["errors"], r["p99_ratio"], r["jobs"]
    wrong = len(jobs["not_final"]) + len(jobs["untrue_reasons"])
    return [
        f"Soak: failed predictions {failed}, goal 0, {'met' if failed == 0 else 'missed'}; "
        f"p99 {ratio:.1f}x the quiet run's, goal within 3x, "
        f"{'met' if ratio <= 3 else 'missed'}; jobs not final or with an untrue reason "
        f"{wrong}, goal 0, {'met' if wrong == 0 else 'missed'}"
    ]


# -- peers: wall-clock fit() to the target -----------------------------------------------------------

# Goals of the peers benchmark: PGS p=2 at most 0.5x the fastest peer's wall time; p=1.8 within
# 1.5x of p=2.
GOAL_PEERS, GOAL_PEERS_P18 = 0.5, 1.5


def _peer_ratios(case: dict) -> tuple[float | None, float | None, str | None]:
    """(PGS p=2 / the fastest peer, p=1.8 / p=2, the fastest peer's name)."""
    seconds = {row["solver"]: row["seconds"] for row in case["rows"]}
    peers = {k: v for k, v in seconds.items() if not k.startswith("PGS") and v is not None}
    fastest = min(peers, key=peers.__getitem__) if peers else None
    p2, p18 = seconds.get("PGS p=2"), seconds.get("PGS p=1.8")
    to_peer = p2 / peers[fastest] if p2 is not None and fastest is not None else None
    return to_peer, (p18 / p2 if p18 is not None and p2 else None), fastest


def peers_case(case: dict) -> str:
    """One set and sigma: every solver's wall time to the target, and PGS's ratios."""
    to_peer, p18, fastest = _peer_ratios(case)
    head = (
        f"**{case['set']}** ({case['m']:,} x {case['n']:,}, {case['nnz'] / case['m']:.0f} "
        f"non-zeros per row), sigma {case['sigma']:g}: optimum test accuracy "
        f"{case['optimum_accuracy']:.4f}, target {case['target']:.4f}"
        + (
            f" (PGS p=1.8 never reaches it: timed to its own optimum's "
            f"{case['optimum18_accuracy']:.4f} minus 0.5 points)"
            if case["optimum18_accuracy"] is not None
            else ""
        )
    )
    rows = [
        [
            row["solver"],
            "-" if row["budget"] is None else row["budget"],
            "-" if row["epochs"] is None or math.isnan(row["epochs"]) else f"{row['epochs']:.3g}",
            "-" if row["accuracy"] is None else f"{row['accuracy']:.4f}",
            "not reached" if row["seconds"] is None else _s(row["seconds"]),
            "-" if not row["runs"] else f"{_s(min(row['runs']))}-{_s(max(row['runs']))}",
        ]
        for row in case["rows"]
    ]
    table = _table(["solver", "budget", "epochs", "test accuracy", "fit() s (median)", "min-max"], rows)
    ratio = (
        f"PGS p=2 / fastest peer ({fastest}): {_s(to_peer)} (goal <= {GOAL_PEERS}); "
        f"p=1.8 / p=2: {_s(p18)} (goal <= {GOAL_PEERS_P18}). PGS set-up (fit() of one "
        f"iteration): {_s(case['setup']['fit_one_iteration'])} s, one pass over the values "
        f"{_s(case['setup']['one_pass'])} s."
    )
    return "\n\n".join([head, table, ratio])


def peers(r: dict) -> str:
    return "\n\n".join(peers_case(case) for case in r["cases"])


def peers_goals(r: dict) -> list[str]:
    lines = []
    for case in r["cases"]:
        to_peer, p18, fastest = _peer_ratios(case)
        lines.append(
            f"peers, {case['set']} sigma {case['sigma']:g}: PGS p=2 / fastest peer "
            f"({fastest}) {_goal(to_peer, GOAL_PEERS)}; p=1.8 / p=2 "
            f"{_goal(p18, GOAL_PEERS_P18)}"
        )
    return lines


# -- threads within one job (bench/threads.py) -----------------------------------------------------


def _speedup(before: float | None, after: float | None) -> str:
    return "-" if before is None or after is None else f"{before / after:.2f}x"


def threads_case(case: dict, threads: int) -> str:
    """One set: serial k = 1 and, at each k, serial against threaded: time to the target, kernel
    microseconds per iteration, speed-ups, and whether the weights reproduce."""
    base = case["baseline"]
    head = (
        f"**{case['set']}** ({case['m']:,} x {case['n']:,}, {case['nnz'] / case['m']:.0f} "
        f"non-zeros per row), sigma {case['sigma']:g}: optimum test accuracy "
        f"{case['optimum_accuracy']:.4f}, target {case['target']:.4f}; t0 at k = 1 "
        f"{case['t0_auto']:.3g}, at k > 1 that over k."
    )

    def cells(run: dict, kernel: str, same_k: dict | None) -> list[Any]:
        reached = run["budget"] is not None
        return [
            run["k"],
            run["threads"],
            run["budget"] if reached else "not reached",
            f"{run['epochs']:.3g}" if reached else "-",
            _s(run["fit_seconds"]),
            _s(run["solver_seconds"]),
            kernel,
            "-" if same_k is None else _speedup(same_k["solver_seconds"], run["solver_seconds"]),
            _speedup(base["solver_seconds"], run["solver_seconds"]),
            _speedup(base["fit_seconds"], run["fit_seconds"]),
        ]

    rows = [cells(base, "-", None)]
    checks = []
    for row in case["rows"]:
        kernel = row["kernel_us_per_iteration"]
        rows.append(cells(row["serial"], _s(kernel["serial"]), None))
        rows.append(
            cells(
                row["threaded"],
                f"{_s(kernel['1 thread'])} (1 thread), {_s(kernel[f'{threads} threads'])}",
                row["serial"],
            )
        )
        rep = row["reproducibility"]
        checks.append(
            f"k={row['k']}: {'same' if rep['same_weights_twice'] else 'DIFFERENT'} "
            f"weights in two {threads}-thread fits, one part "
            f"{'equal to' if rep['one_part_equals_serial'] else 'DIFFERENT from'} the "
            f"serial kernel, max |w - w_serial| {rep['max_difference_to_serial']:.1e} "
            f"({rep['iterations']} iterations)"
        )
    table = _table(
        [
            "k",
            "threads",
            "iterations to target",
            "epochs",
            "fit() s",
            "solver s",
            "kernel us/iteration",
            "solver speed-up, same k",
            "solver speed-up vs k=1 serial",
            "fit() speed-up vs k=1 serial",
        ],
        rows,
    )
    return "\n\n".join([head, table, "Reproducibility: " + "; ".join(checks) + "."])


def threads(r: dict) -> str:
    return "\n\n".join(threads_case(case, r["threads"]) for case in r["cases"])


# Threads within one job are kept only if they make fit() to the target at least this much faster.
GOAL_THREADS = 1.3


def _fastest(runs: list[dict]) -> dict | None:
    timed = [run for run in runs if run["fit_seconds"] is not None]
    return min(timed, key=lambda run: run["fit_seconds"]) if timed else None


def threads_goals(r: dict) -> list[str]:
    lines = []
    for case in r["cases"]:
        serial = _fastest([case["baseline"], *(row["serial"] for row in case["rows"])])
        threaded = _fastest([row["threaded"] for row in case["rows"]])
        if serial is None or threaded is None:
            lines.append(f"threads, {case['set']}: the target was not reached")
            continue
        to_default = case["baseline"]["fit_seconds"] / threaded["fit_seconds"]
        to_serial = serial["fit_seconds"] / threaded["fit_seconds"]
        verdict = "met" if to_serial >= GOAL_THREADS else "missed"
        lines.append(
            f"threads, {case['set']}: {r['threads']} threads' fastest fit() to the "
            f"target (k={threaded['k']}) {to_default:.2f}x as fast as serial k=1 and "
            f"{to_serial:.2f}x as fast as the fastest serial k ({serial['k']}), goal at "
            f"least {GOAL_THREADS}x: {verdict}"
        )
    return lines


# The goals, by the record they are read from (docs/results/<name>.json), in the page's order.
GOALS: dict[str, Callable[[Any], list[str]]] = {
    "throughput": throughput_goals,
    "time_to_accuracy": time_to_accuracy_goals,
    "predict_bench": predict_bench_goals,
    "dispatch_bench": dispatch_bench_goals,
    "soak": soak_goals,
    "peers": peers_goals,
    "end_to_end": end_to_end_goals,
    "cold_start": cold_start_goals,
    "threads": threads_goals,
}

# Which function renders which benchmark's record; ``view`` names a second table of the same one.
RENDERERS: dict[tuple[str, str], Callable[[Any], str]] = {
    ("throughput", "table"): throughput,
    ("time_to_accuracy", "table"): time_to_accuracy,
    ("time_to_accuracy", "details"): time_to_accuracy_details,
    ("pgs_ablation", "table"): pgs_ablation,
    ("paper_figures", "table"): paper_figures,
    ("inverse_time", "table"): inverse_time,
    ("inverse_time_scale", "table"): inverse_time_scale,
    ("l1_paths", "table"): l1_paths,
    ("l1_paths", "survival"): l1_paths_survival,
    ("l1_paths", "speed"): l1_paths_speed,
    ("predict_bench", "table"): predict_bench,
    ("load_bench", "table"): load_bench,
    ("dispatch_bench", "table"): dispatch_bench,
    ("hostile_bench", "table"): hostile_bench,
    ("soak", "table"): soak,
    ("peers", "table"): peers,
    ("end_to_end", "table"): end_to_end,
    ("cold_start", "table"): cold_start,
    ("threads", "table"): threads,
}
