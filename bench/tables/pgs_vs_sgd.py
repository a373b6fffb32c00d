"""PGS against SGDClassifier and LIBLINEAR: updates per second (bench.throughput), time to a
target accuracy (bench.time_to_accuracy) and the defaults one change at a time (bench.pgs_ablation)."""

from __future__ import annotations

import math
import statistics

from .format import md_table, median_of, sig3
from .goals import Goal, ratio_goal

# Goals of the time-to-accuracy benchmark: PGS p=2 in at most 1/2 of SGDClassifier's time and
# 1/10 of LIBLINEAR's; PGS p=1.8 within 2x of PGS p=2. Throughput: at least 1/2 of a bare loop's.
GOAL_SGD, GOAL_LIBLINEAR, GOAL_P18, GOAL_THROUGHPUT = 0.5, 0.1, 2.0, 0.5


# -- throughput --------------------------------------------------------------------------------------


def throughput(r: dict) -> str:
    med = {name: median_of(ts) for name, ts in r["ns_per_update"].items()}
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
            md_table(["loop", "ns per update", "updates/s", "non-zeros/s", "throughput vs bare"], rows),
            "",
            f"- {_throughput_line(r)}",
        ]
    )


def _vs_bare(r: dict) -> dict[str, float]:
    """Each loop's throughput over the bare loop's (median ns per update)."""
    med = {name: median_of(ts) for name, ts in r["ns_per_update"].items()}
    return {name: med["bare dot+axpy loop"] / ns for name, ns in med.items()}


def _throughput_line(r: dict) -> str:
    pgs = [v for name, v in _vs_bare(r).items() if name.startswith("PGS")]
    met = sum(v >= GOAL_THROUGHPUT for v in pgs)
    return (
        f"PGS updates at least {GOAL_THROUGHPUT:g}x the bare loop's throughput: met by {met} of "
        f"{len(pgs)} variants ({min(pgs):.3f}-{max(pgs):.3f})"
    )


def throughput_goals(r: dict) -> list[Goal]:
    pgs = [v for name, v in _vs_bare(r).items() if name.startswith("PGS")]
    return [
        ratio_goal(
            "PGS updates per second, each variant, against a bare dot+axpy loop's",
            pgs,
            GOAL_THROUGHPUT,
            at_least=True,
        )
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


def _judged(value: float | None, goal: float) -> str:
    """A ratio and whether it is within its goal (at most ``goal``); 'unreachable' for None."""
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
                f"{sig3(q['p2_seconds'])} ({epochs})",
                _judged(q["sgd"], GOAL_SGD),
                _judged(q["sgd_untraced"], GOAL_SGD),
                _judged(q["sgd_whole_epochs"], GOAL_SGD),
                _judged(q["liblinear"], GOAL_LIBLINEAR),
                _judged(q["p18_common"], GOAL_P18),
                _judged(q["p18_own"], GOAL_P18),
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
            md_table(header, rows),
            "",
            *(f"- {line}" for line in _goal_lines(r)),
        ]
    )


def _goal_lines(r: dict) -> list[str]:
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


def time_to_accuracy_goals(r: dict) -> list[Goal]:
    ratios = [_ratios(case) for case in r["cases"]]
    unreachable = sum(q["p18_common"] is None for q in ratios)
    return [
        ratio_goal(
            "PGS p=2's time to the target accuracy against the fastest SGDClassifier row's",
            [q["sgd"] for q in ratios],
            GOAL_SGD,
            note=f"PGS untraced: met in {_count([q['sgd_untraced'] for q in ratios], GOAL_SGD)}; "
            f"against the whole-epoch rows: {_count([q['sgd_whole_epochs'] for q in ratios], GOAL_SGD)}",
        ),
        ratio_goal(
            "PGS p=2's time to the target accuracy against LIBLINEAR's",
            [q["liblinear"] for q in ratios],
            GOAL_LIBLINEAR,
        ),
        ratio_goal(
            "PGS p=1.8's (k=1) time to the target accuracy against p=2's",
            [q["p18_common"] for q in ratios],
            GOAL_P18,
            note=f"the target is beyond p=1.8's optimum in {unreachable} cases; to its own "
            f"optimum's target: met in {_count([q['p18_own'] for q in ratios], GOAL_P18)}",
        ),
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
    spread = "-" if s["lo"] is None else f"{sig3(s['lo'])}-{sig3(s['hi'])}"
    epochs = "-" if s["epochs"] is None else f"{s['epochs']:.2f}"
    return [
        label,
        cell or sig3(s["median"]),
        spread,
        f"{s['reached']}/{s['total']}",
        epochs,
        sig3(s["untraced"]),
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
        f"PGS fit() set-up outside solver_seconds_: {sig3(case['pgs_setup'])} s.",
        "",
        md_table(
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
        "epochs; (k/n) where only k of n seeds reached it.\n\n" + md_table(header, rows)
    )
