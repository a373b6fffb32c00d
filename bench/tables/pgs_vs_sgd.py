"""PGS against SGDClassifier and LIBLINEAR: updates per second (bench.throughput), time to a
target accuracy (bench.time_to_accuracy) and the defaults one change at a time (bench.pgs_ablation)."""

from __future__ import annotations

import math
import statistics

from .figures import Figure, case_names, count, ratio_span, select
from .format import md_table, median_of, sig3, span
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


# The rows of a time-to-accuracy case by the short names the template uses.
METHODS = {
    "p2": _is_default_p2,
    "p18": lambda m: m["kind"] == "pgs" and m["params"] == {"p": 1.8, "batch_size": 1},
    "p18_k8": lambda m: m["kind"] == "pgs" and m["params"] == {"p": 1.8, "batch_size": 8},
    "figure1": lambda m: m["params"].get("output") == "random",
    "sgd": lambda m: m["kind"] == "sgd",
    "sgd_fine": lambda m: m["kind"] == "sgd" and "slices" in m["params"],
    "liblinear": lambda m: m["kind"] == "liblinear",
}


def _ratios(case: dict) -> dict[str, float | None]:
    """The goal ratios of one (data set, sigma); None where the p=1.8 target is unreachable."""
    methods = case["methods"]
    p2 = _summary(next(m for m in methods if _is_default_p2(m))["runs"])
    sgd = [
        (m["params"].get("slices", 1), _summary(m["runs"])["median"]) for m in methods if m["kind"] == "sgd"
    ]
    lib = _summary(next(m for m in methods if m["kind"] == "liblinear")["runs"])["median"]
    p18 = next(m for m in methods if METHODS["p18"](m))
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


def _defined(values: list[float | None]) -> list[float]:
    return [v for v in values if v is not None and not math.isnan(v)]


def _count(values: list[float | None], goal: float) -> str:
    defined = _defined(values)
    return count(sum(v <= goal for v in defined), len(defined))


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


def _median_epochs(epochs: list[float | None]) -> float:
    """The seeds' median epochs to the target; seeds that never reached it count as infinite."""
    return statistics.median([math.inf if e is None else e for e in epochs])


def pgs_ablation(r: dict) -> str:
    def cell(epochs: list[float | None]) -> str:
        reached = [e for e in epochs if e is not None]
        median = _median_epochs(epochs)
        text = "never" if math.isinf(median) else f"{median:.2f}"
        return text if len(reached) == len(epochs) else f"{text} ({len(reached)}/{len(epochs)})"

    header = ["PGS: epochs to target"] + [f"{c['set']} {c['sigma']:g}" for c in r["cases"]]
    rows = [[label] + [cell(c["epochs"][label]) for c in r["cases"]] for label in r["variants"]]
    return (
        f"Median over {r['seeds']} seeds of the epochs to the target; cap {r['epoch_cap']} "
        "epochs; (k/n) where only k of n seeds reached it.\n\n" + md_table(header, rows)
    )


def _default_label(r: dict) -> str:
    """The row of the defaults as they were when the record was made."""
    return next(label for label in r["variants"] if "(the default)" in label or label.startswith("default ("))


def _fewest(r: dict, case: dict) -> str:
    """The variant with the fewest median epochs in the case (the first of equals, the default
    first of all)."""
    return min(r["variants"], key=lambda label: _ablation_epochs(case, label))


def _median_seconds(case: dict, label: str) -> float:
    return statistics.median(case["seconds"][label])


def _snapml_cell(peers: dict | None) -> str:
    if not peers:
        return "-"
    epochs = peers["snapml_epochs"]
    return f"{epochs:g}" if epochs is not None else f"never ({peers['max_epochs']} epochs)"


def _seconds_vs_snapml(peers: dict | None) -> str:
    if not peers or peers["snapml_seconds"] is None:
        return "-"
    return f"{peers['pgs_seconds'] / peers['snapml_seconds']:.2f}"


def pgs_ablation_snapml(r: dict) -> str:
    """Per case: the default's epochs, the fewest any variant needed, and the peers record's Snap ML
    (1 thread) epochs and its fit() seconds against PGS p=2's."""
    rows = []
    for case in r["cases"]:
        default, best = _default_label(r), _fewest(r, case)
        peers = case.get("peers")
        seconds = _median_seconds(case, best) / _median_seconds(case, default)
        rows.append(
            [
                f"{case['set']} {case['sigma']:g}",
                f"{case['sigma'] * case['m']:.2g}",
                f"{_ablation_epochs(case, default):.2f}",
                f"{best}: {_ablation_epochs(case, best):.2f}",
                f"{seconds:.2f}",
                _snapml_cell(peers),
                _seconds_vs_snapml(peers),
            ]
        )
    header = [
        "case",
        "sigma m",
        "default: epochs",
        "fewest epochs: variant",
        "its solver s / default's (this run)",
        "Snap ML 1 thread: epochs (peers)",
        "PGS p=2 fit() s / Snap ML's (peers)",
    ]
    sources = sorted({c["peers"]["record"] for c in r["cases"] if "peers" in c})
    return "\n".join(
        [
            "Epochs are medians over the seeds (never: the median run missed the target within the cap); "
            "Snap ML's are whole epochs, the smallest budget that reaches the same target. The seconds "
            "ratio is of the traced runs' solver clocks in this run (a loaded machine: indicative only). "
            "The peers columns are from " + (", ".join(f"`{s}`" for s in sources) or "no peers record") + ".",
            "",
            md_table(header, rows),
        ]
    )


# -- figures for the prose ---------------------------------------------------------------------------

# The loops of bench.throughput by the short names the template uses.
LOOPS = {
    "sgd": "sklearn SGDClassifier (fit, whole epochs)",
    "p2_average": "PGS p=2, average",
    "p18_average": "PGS p=1.8, average",
}
TTA_GOALS = {"sgd": GOAL_SGD, "liblinear": GOAL_LIBLINEAR, "p18": GOAL_P18}


def _throughput_vs_bare(r: dict, loop: str) -> str:
    return f"{_vs_bare(r)[LOOPS[loop]]:.2f}x"


def _throughput_goal(r: dict) -> str:
    return f"{GOAL_THROUGHPUT:g}x"


def _goal_text(r: dict, goal: str) -> str:
    return f"{TTA_GOALS[goal]:g}x"


def _case_ratios(r: dict, key: str, *cases: str) -> list[float]:
    return _defined([_ratios(case)[key] for case in select(r["cases"], cases)])


def _ratio(r: dict, key: str, *cases: str) -> str:
    return ratio_span(_case_ratios(r, key, *cases))


def _goal_of(key: str) -> float:
    return TTA_GOALS["p18" if key.startswith("p18") else key.split("_")[0]]


def _met(r: dict, key: str) -> str:
    ratios = _case_ratios(r, key)
    return count(sum(v <= _goal_of(key) for v in ratios), len(ratios))


def _cases_where(r: dict, key: str, met: bool) -> str:
    chosen = [c for c in r["cases"] if (q := _ratios(c)[key]) is not None and (q <= _goal_of(key)) == met]
    return case_names(chosen, r["cases"])


def _cases_met(r: dict, key: str) -> str:
    return _cases_where(r, key, True)


def _cases_missed(r: dict, key: str) -> str:
    return _cases_where(r, key, False)


def _runs(case: dict, method: str, own: bool = False) -> list[list[dict]]:
    """The runs of the case's rows of a method; 'sgd_best' is the fastest SGD row, the goal's."""
    if method == "sgd_best":
        return [min(_runs(case, "sgd"), key=lambda runs: _summary(runs)["median"])]
    return [m["own_runs" if own else "runs"] for m in case["methods"] if METHODS[method](m)]


def _epochs(r: dict, method: str, *cases: str) -> str:
    """The median epochs of a method's rows (every SGD row for 'sgd') in the cases, as a range."""
    epochs = [_summary(runs)["epochs"] for c in select(r["cases"], cases) for runs in _runs(c, method)]
    return span(_defined(epochs), ".2f")


def _ms(r: dict, method: str, *cases: str) -> str:
    seconds = [_summary(runs)["median"] for c in select(r["cases"], cases) for runs in _runs(c, method)]
    return span([1e3 * s for s in seconds], ".2g") + " ms"


def _liblinear_iterations(r: dict, *cases: str) -> str:
    """LIBLINEAR's max_iter of the first fit that reached the target."""
    its = [runs[0]["extra"]["max_iter"] for c in select(r["cases"], cases) for runs in _runs(c, "liblinear")]
    return span(its, "d")


def _unreachable(r: dict) -> str:
    return case_names([c for c in r["cases"] if not c["common18_reachable"]], r["cases"])


def _never(r: dict, method: str) -> str:
    """The cases in which no run of the method reached the target."""
    chosen = [c for c in r["cases"] if all(_summary(runs)["reached"] == 0 for runs in _runs(c, method))]
    return case_names(chosen, r["cases"])


def _k8_epochs(r: dict) -> str:
    """p=1.8's epochs at k=8 over those at k=1, both to its own optimum's target."""
    ratios = []
    for case in r["cases"]:
        [k8], [k1] = _runs(case, "p18_k8", own=True), _runs(case, "p18", own=True)
        ratios.append(_summary(k8)["epochs"] / _summary(k1)["epochs"])
    return ratio_span(ratios, ".2g")


def _intercept_scaling(r: dict, *cases: str) -> str:
    return span([c["intercept_scaling"] for c in select(r["cases"], cases)], ".2f")


# The variants of bench.pgs_ablation by the short names the template uses; each one's effect is
# read against the row above it (``change``) or against the default.
VARIANTS = {
    "figure1": "paper's Figure 1",
    "permutation": "sampling=permutation",
    "scaling": "intercept_scaling=auto",
    "average": "average_power=1",
    "step4": "first step 4x",
    "step16": "first step 16x",
    # The small-m family's rows, each by its whole label.
    "step_quarter": "first step 1/4x t0=auto's",
    "step2": "first step 2x t0=auto's",
    "avg0": "average_power=0 (plain mean)",
    "avg1": "average_power=1",
    "avg3": "average_power=3",
    "k4": "k=4",
    "k16": "k=16",
    "k64": "k=64",
    "k16_step16": "k=16, first step 16x t0=auto's (k=1's step per sample)",
    "p18": "p=1.8, k=1",
    "p18_k4": "p=1.8, k=4",
    "p18_k16": "p=1.8, k=16",
    "p18_k64": "p=1.8, k=64",
    "replacement": "sampling=replacement",
    "cont10": "continuation 10 sigma (1 epoch) -> sigma",
    "cont10_quarter": "continuation 10 sigma (1/4 epoch) -> sigma",
    "cont100": "continuation 100, 10 sigma (1/4 epoch each) -> sigma",
}


def _variant(r: dict, key: str) -> str:
    """The record's row a short name stands for ("default": the defaults' row): the row of that
    whole label, else the first row whose label contains it (the defaults family's rows carry a
    prefix)."""
    if key == "default":
        return _default_label(r)
    wanted = VARIANTS[key]
    if wanted in r["variants"]:
        return wanted
    return next(label for label in r["variants"] if wanted in label)


def _ablation_epochs(case: dict, label: str) -> float:
    return _median_epochs(case["epochs"][label])


def _change(r: dict, key: str, *cases: str) -> str:
    """Each case's median epochs before and after the variant's one change: 'rcv1_like 11.58 -> 4.91'."""
    after = _variant(r, key)
    before = r["variants"][r["variants"].index(after) - 1]
    chosen = select(r["cases"], cases)
    parts = []
    for name in dict.fromkeys(c["set"] for c in chosen):
        moves = [
            f"{_ablation_epochs(c, before):.2f} -> {_ablation_epochs(c, after):.2f}"
            for c in chosen
            if c["set"] == name
        ]
        parts.append(f"{name} " + " and ".join(moves))
    return ", ".join(parts)


def _ablation_ratio(r: dict, key: str, *cases: str) -> str:
    """The variant's median epochs over the default's."""
    variant, default = _variant(r, key), _default_label(r)
    chosen = select(r["cases"], cases)
    return ratio_span([_ablation_epochs(c, variant) / _ablation_epochs(c, default) for c in chosen], ".2g")


def _helped(r: dict, *keys: str) -> str:
    """The cases in which every one of the variants needs fewer epochs than the default."""
    default = _default_label(r)
    chosen = [
        c
        for c in r["cases"]
        if all(_ablation_epochs(c, _variant(r, k)) < _ablation_epochs(c, default) for k in keys)
    ]
    return case_names(chosen, r["cases"])


def _reached(r: dict, key: str, *cases: str) -> str:
    epochs = [e for c in select(r["cases"], cases) for e in c["epochs"][_variant(r, key)]]
    return count(sum(e is not None for e in epochs), len(epochs))


def _fewer(r: dict, key: str, *cases: str) -> str:
    """In how many of the cases the variant needs fewer median epochs than the default."""
    chosen = select(r["cases"], cases)
    label, default = _variant(r, key), _default_label(r)
    return count(sum(_ablation_epochs(c, label) < _ablation_epochs(c, default) for c in chosen), len(chosen))


def _epochs_of(r: dict, key: str, *cases: str) -> str:
    """The variant's median epochs over the cases, as a range ('never' for a case that missed)."""
    values = [_ablation_epochs(c, _variant(r, key)) for c in select(r["cases"], cases)]
    return span(values, lambda e: "never" if math.isinf(e) else f"{e:.2f}")


def _snapml_reached(r: dict, *cases: str) -> list[dict]:
    return [c for c in select(r["cases"], cases) if c.get("peers", {}).get("snapml_epochs") is not None]


def _snapml_epochs(r: dict, *cases: str) -> str:
    """Snap ML's (1 thread) epochs to the target in the peers record, over the cases it reached."""
    return span([c["peers"]["snapml_epochs"] for c in _snapml_reached(r, *cases)], "g")


def _snapml_never(r: dict) -> str:
    """The cases where the peers record's Snap ML (1 thread) never reached the target."""
    chosen = [c for c in r["cases"] if "peers" in c and c["peers"]["snapml_epochs"] is None]
    return case_names(chosen, r["cases"])


def _vs_snapml(r: dict, key: str, *cases: str) -> str:
    """The variant's median epochs over Snap ML's (peers record), per case Snap ML reached."""
    label = _variant(r, key)
    chosen = _snapml_reached(r, *cases)
    return ratio_span([_ablation_epochs(c, label) / c["peers"]["snapml_epochs"] for c in chosen], ".2g")


def _seconds_ratio(r: dict, key: str, *cases: str) -> str:
    """The variant's median solver seconds over the default's in the same run, per case."""
    label, default = _variant(r, key), _default_label(r)
    chosen = select(r["cases"], cases)
    return ratio_span([_median_seconds(c, label) / _median_seconds(c, default) for c in chosen], ".2g")


def _epoch_cap(r: dict) -> str:
    return f"{r['epoch_cap']}"


def _ablation_never(r: dict, key: str) -> str:
    label = _variant(r, key)
    return case_names([c for c in r["cases"] if all(e is None for e in c["epochs"][label])], r["cases"])


FIGURES: dict[tuple[str, str], Figure] = {
    ("throughput", "vs_bare"): _throughput_vs_bare,
    ("throughput", "goal"): _throughput_goal,
    ("time_to_accuracy", "goal"): _goal_text,
    ("time_to_accuracy", "ratio"): _ratio,
    ("time_to_accuracy", "met"): _met,
    ("time_to_accuracy", "cases_met"): _cases_met,
    ("time_to_accuracy", "cases_missed"): _cases_missed,
    ("time_to_accuracy", "epochs"): _epochs,
    ("time_to_accuracy", "ms"): _ms,
    ("time_to_accuracy", "liblinear_iterations"): _liblinear_iterations,
    ("time_to_accuracy", "unreachable"): _unreachable,
    ("time_to_accuracy", "never"): _never,
    ("time_to_accuracy", "k8_epochs"): _k8_epochs,
    ("time_to_accuracy", "intercept_scaling"): _intercept_scaling,
    ("pgs_ablation", "change"): _change,
    ("pgs_ablation", "ratio"): _ablation_ratio,
    ("pgs_ablation", "helped"): _helped,
    ("pgs_ablation", "reached"): _reached,
    ("pgs_ablation", "never"): _ablation_never,
    ("pgs_ablation", "epoch_cap"): _epoch_cap,
    ("pgs_ablation", "fewer"): _fewer,
    ("pgs_ablation", "epochs"): _epochs_of,
    ("pgs_ablation", "snapml_epochs"): _snapml_epochs,
    ("pgs_ablation", "vs_snapml"): _vs_snapml,
    ("pgs_ablation", "snapml_never"): _snapml_never,
    ("pgs_ablation", "seconds_ratio"): _seconds_ratio,
}
