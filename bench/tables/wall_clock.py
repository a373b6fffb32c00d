"""Wall-clock fit() to a target: PGS against the fastest peers (bench.peers), and threads within
one fit (bench.threads)."""

from __future__ import annotations

import math
from typing import Any

from .figures import Figure, case_names, count, ratio_span, select
from .format import md_table, sig3, span
from .goals import Goal, ratio_goal

# -- peers: wall-clock fit() to the target -----------------------------------------------------------

# Goals of the peers benchmark: PGS p=2 at most 0.5x the fastest peer's wall time; p=1.8 within
# 1.5x of p=2.
GOAL_PEERS, GOAL_PEERS_P18 = 0.5, 1.5


# The project's own solvers in bench.peers' rows: PGS, SDCA and solver="auto" (its row named
# "auto (the chosen solver's row)"); every other row is a peer.
OURS = ("PGS", "SDCA", "auto")
SDCA, SNAP_ONE_THREAD, AUTO = "SDCA (ours)", "Snap ML 1 thread", "auto"
# Goals: solver="auto" at most 0.5x the fastest peer in every case; SDCA within 1.2x of Snap ML on
# one thread (the same method) on the small-m text sets.
GOAL_AUTO, GOAL_SDCA = 0.5, 1.2
SDCA_GOAL_SETS = ("rt_polarity", "reuters_moneyfx")


def _fastest_peer(case: dict) -> tuple[str | None, float | None]:
    """The fastest peer's name and seconds (None, None when no peer reached the target)."""
    seconds = {row["solver"]: row["seconds"] for row in case["rows"]}
    peers = {k: v for k, v in seconds.items() if not k.startswith(OURS) and v is not None}
    fastest = min(peers, key=peers.__getitem__) if peers else None
    return fastest, (peers[fastest] if fastest is not None else None)


def _peer_ratios(case: dict) -> tuple[float | None, float | None, str | None]:
    """(PGS p=2 / the fastest peer, p=1.8 / p=2, the fastest peer's name)."""
    seconds = {row["solver"]: row["seconds"] for row in case["rows"]}
    fastest, peer_seconds = _fastest_peer(case)
    p2, p18 = seconds.get("PGS p=2"), seconds.get("PGS p=1.8")
    to_peer = p2 / peer_seconds if p2 is not None and peer_seconds else None
    return to_peer, (p18 / p2 if p18 is not None and p2 else None), fastest


def _auto_row(case: dict) -> dict | None:
    return next((row for row in case["rows"] if row["solver"].startswith(AUTO)), None)


def _auto_ratio(case: dict) -> float | None:
    """solver="auto"'s fit() (the choice and the chosen solver's fit) over the fastest peer's;
    None in records without an auto row or where no peer reached the target."""
    row, (_, peer_seconds) = _auto_row(case), _fastest_peer(case)
    if row is None or row["seconds"] is None or not peer_seconds:
        return None
    return row["seconds"] / peer_seconds


def _sdca_to_snap(case: dict) -> float | None:
    seconds = {row["solver"]: row["seconds"] for row in case["rows"]}
    ours, snap = seconds.get(SDCA), seconds.get(SNAP_ONE_THREAD)
    return None if ours is None or not snap else ours / snap


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
            "not reached" if row["seconds"] is None else sig3(row["seconds"]),
            "-" if not row["runs"] else f"{sig3(min(row['runs']))}-{sig3(max(row['runs']))}",
        ]
        for row in case["rows"]
    ]
    table = md_table(["solver", "budget", "epochs", "test accuracy", "fit() s (median)", "min-max"], rows)
    ratio = (
        f"PGS p=2 / fastest peer ({fastest}): {sig3(to_peer)} (goal <= {GOAL_PEERS}); "
        f"p=1.8 / p=2: {sig3(p18)} (goal <= {GOAL_PEERS_P18}). PGS set-up (fit() of one "
        f"iteration): {sig3(case['setup']['fit_one_iteration'])} s, one pass over the values "
        f"{sig3(case['setup']['one_pass'])} s." + _own_ratios(case)
    )
    return "\n\n".join([head, table, ratio])


def _own_ratios(case: dict) -> str:
    """SDCA against Snap ML on one thread (the same method), and solver="auto" against the
    fastest peer, in records that have those rows."""
    text = ""
    if any(row["solver"] == SDCA for row in case["rows"]):
        text += f" SDCA / Snap ML 1 thread: {sig3(_sdca_to_snap(case))}."
    row = _auto_row(case)
    if row is not None:
        text += f" {row['solver']} / fastest peer: {sig3(_auto_ratio(case))} (goal <= {GOAL_AUTO})."
    return text


def peers(r: dict) -> str:
    return "\n\n".join(peers_case(case) for case in r["cases"])


def peers_goals(r: dict) -> list[Goal]:
    ratios = [_peer_ratios(case) for case in r["cases"]]
    goals = []
    if any(_auto_row(case) for case in r["cases"]):
        goals.append(
            ratio_goal(
                'Wall-clock fit() to the target accuracy: solver="auto" (the choice and the chosen '
                "solver's fit) against the fastest peer (each set and sigma)",
                [_goal_ratio(case, "auto") for case in r["cases"]],
                GOAL_AUTO,
            )
        )
    if any(row["solver"] == SDCA for case in r["cases"] for row in case["rows"]):
        goals.append(
            ratio_goal(
                "Wall-clock fit() to the target accuracy: SDCA against Snap ML on 1 thread, "
                + " and ".join(SDCA_GOAL_SETS),
                [_goal_ratio(case, "sdca") for case in r["cases"]],
                GOAL_SDCA,
            )
        )
    return goals + [
        ratio_goal(
            "Wall-clock fit() to the target accuracy: PGS p=2 against the fastest peer (each set and sigma)",
            [to_peer for to_peer, _, _ in ratios],
            GOAL_PEERS,
        ),
        ratio_goal(
            "Wall-clock fit() to the target accuracy: PGS p=1.8 against p=2 (each set and sigma)",
            [p18 for _, p18, _ in ratios],
            GOAL_PEERS_P18,
        ),
    ]


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
            sig3(run["fit_seconds"]),
            sig3(run["solver_seconds"]),
            kernel,
            "-" if same_k is None else _speedup(same_k["solver_seconds"], run["solver_seconds"]),
            _speedup(base["solver_seconds"], run["solver_seconds"]),
            _speedup(base["fit_seconds"], run["fit_seconds"]),
        ]

    rows = [cells(base, "-", None)]
    checks = []
    for row in case["rows"]:
        kernel = row["kernel_us_per_iteration"]
        rows.append(cells(row["serial"], sig3(kernel["serial"]), None))
        rows.append(
            cells(
                row["threaded"],
                f"{sig3(kernel['1 thread'])} (1 thread), {sig3(kernel[f'{threads} threads'])}",
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
    table = md_table(
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


def _threads_speedups(case: dict) -> tuple[float, float] | None:
    """The fastest threaded fit() to the target against serial k=1's and the fastest serial k's."""
    serial = _fastest([case["baseline"], *(row["serial"] for row in case["rows"])])
    threaded = _fastest([row["threaded"] for row in case["rows"]])
    if serial is None or threaded is None:
        return None
    return case["baseline"]["fit_seconds"] / threaded["fit_seconds"], serial["fit_seconds"] / threaded[
        "fit_seconds"
    ]


def threads_goals(r: dict) -> list[Goal]:
    speedups = [s for s in map(_threads_speedups, r["cases"]) if s is not None]
    return [
        ratio_goal(
            f"{r['threads']} threads in one fit(): the fastest fit() to the target against the "
            "fastest serial one (each set)",
            [to_serial for _, to_serial in speedups],
            GOAL_THREADS,
            at_least=True,
            note=f"against serial k=1: {span([to_default for to_default, _ in speedups], '.2f')}x",
        )
    ]


# -- figures for the prose ---------------------------------------------------------------------------

# The solvers of bench.peers by the short names the template uses; 'fastest' is each case's
# fastest peer. The goals by the same names: 'p2' (against the fastest peer), 'p18' (against p=2).
SOLVERS = {
    "p2": "PGS p=2",
    "p18": "PGS p=1.8",
    "sgd": "SGDClassifier",
    "sgd_average": "SGDClassifier average=True",
    "liblinear": "LIBLINEAR",
    "snap1": "Snap ML 1 thread",
    "snap2": "Snap ML 2 threads",
    "vw": "Vowpal Wabbit",
    "sdca": SDCA,
}
# 'auto': solver="auto" against the fastest peer; 'sdca': SDCA against Snap ML on 1 thread, on the
# SDCA goal's sets only.
PEER_GOALS = {"p2": GOAL_PEERS, "p18": GOAL_PEERS_P18, "auto": GOAL_AUTO, "sdca": GOAL_SDCA}


def _solver_row(case: dict, solver: str) -> dict:
    name = _peer_ratios(case)[2] if solver == "fastest" else SOLVERS[solver]
    return next(row for row in case["rows"] if row["solver"] == name)


def _goal_ratio(case: dict, goal: str) -> float | None:
    if goal == "auto":
        return _auto_ratio(case)
    if goal == "sdca":
        return _sdca_to_snap(case) if case["set"] in SDCA_GOAL_SETS else None
    to_peer, p18, _ = _peer_ratios(case)
    return to_peer if goal == "p2" else p18


def _judged(r: dict, goal: str, met: bool) -> list[dict]:
    """The cases that meet the goal (or miss it, met=False); cases without a ratio are neither."""
    return [
        c for c in r["cases"] if (q := _goal_ratio(c, goal)) is not None and (q <= PEER_GOALS[goal]) == met
    ]


def _peers_goal(r: dict, goal: str) -> str:
    return f"{PEER_GOALS[goal]:g}x"


def _peers_ratio(r: dict, goal: str, *cases: str) -> str:
    return ratio_span([q for c in select(r["cases"], cases) if (q := _goal_ratio(c, goal)) is not None])


def _peers_met(r: dict, goal: str) -> str:
    met, missed = _judged(r, goal, True), _judged(r, goal, False)
    return count(len(met), len(met) + len(missed))


def _faster(r: dict) -> str:
    """In how many cases PGS p=2 is faster than the fastest peer."""
    ratios = [q for c in r["cases"] if (q := _goal_ratio(c, "p2")) is not None]
    return count(sum(q < 1 for q in ratios), len(ratios))


def _cases_met(r: dict, goal: str) -> str:
    return case_names(_judged(r, goal, True), r["cases"])


def _cases_missed(r: dict, goal: str) -> str:
    return case_names(_judged(r, goal, False), r["cases"])


def _misses(r: dict, goal: str) -> str:
    """The cases that miss the goal, each with its ratio: 'agaricus (0.85, 0.75)'."""
    return case_names(_judged(r, goal, False), r["cases"], note=lambda c: f"{_goal_ratio(c, goal):.2f}")


def _missed_ratio(r: dict, goal: str) -> str:
    """The range of the ratios of the cases that miss the goal."""
    return ratio_span([_goal_ratio(c, goal) or 0.0 for c in _judged(r, goal, False)])


def _auto_choices(r: dict) -> str:
    """The solvers solver="auto" chose, with the number of cases each: 'PGS p=2 (16)'."""
    chosen: dict[str, int] = {}
    for case in r["cases"]:
        row = _auto_row(case)
        if row is not None:
            label = row["solver"][len(AUTO) :].strip(" ()")
            chosen[label] = chosen.get(label, 0) + 1
    return ", ".join(f"{label} ({n})" for label, n in chosen.items())


def _fastest_count(r: dict, prefix: str) -> str:
    """In how many cases the fastest peer's name starts with the prefix."""
    return str(sum((_peer_ratios(c)[2] or "").startswith(prefix) for c in r["cases"]))


def _reached_rows(r: dict, solver: str, cases: tuple[str, ...]) -> list[dict]:
    """The solver's rows in the cases, where it reached the target."""
    rows = [_solver_row(c, solver) for c in select(r["cases"], cases)]
    return [row for row in rows if row["seconds"] is not None]


def _ms(r: dict, solver: str, *cases: str) -> str:
    return span([1e3 * row["seconds"] for row in _reached_rows(r, solver, cases)]) + " ms"


def _seconds_per_epoch(r: dict, solver: str, *cases: str) -> str:
    return span([row["seconds"] / row["epochs"] for row in _reached_rows(r, solver, cases)], ".2f") + " s"


def _budget(r: dict, solver: str, *cases: str) -> str:
    """The smallest budget that reached the target: epochs, Newton iterations or PGS iterations."""
    return span([row["budget"] for row in _reached_rows(r, solver, cases)], ",d")


def _epochs(r: dict, solver: str, *cases: str) -> str:
    return span([row["epochs"] for row in _reached_rows(r, solver, cases)])


def _reached(r: dict, solver: str) -> str:
    return count(len(_reached_rows(r, solver, ())), len(r["cases"]))


def _same_budget_misses(r: dict) -> str:
    """The cases that miss the p=1.8 goal although p=1.8 and p=2 stop at the same iteration."""
    chosen = [
        c
        for c in _judged(r, "p18", False)
        if _solver_row(c, "p18")["budget"] == _solver_row(c, "p2")["budget"]
    ]
    return case_names(chosen, r["cases"])


def _setup_ms(r: dict, *cases: str) -> str:
    """PGS's fit() of one iteration: validation, preparation, the engine."""
    return span([1e3 * c["setup"]["fit_one_iteration"] for c in select(r["cases"], cases)]) + " ms"


def _setup_passes(r: dict, *cases: str) -> str:
    """PGS's fit() of one iteration in passes over the stored values."""
    return span([c["setup"]["fit_one_iteration"] / c["setup"]["one_pass"] for c in select(r["cases"], cases)])


def _threads_run(case: dict, k: str, threaded: bool = False) -> dict:
    """The fit at minibatch size k: serial k=1 is the baseline; at k > 1 serial or threaded."""
    if int(k) == 1:
        return case["baseline"]
    row = next(row for row in case["rows"] if row["k"] == int(k))
    return row["threaded" if threaded else "serial"]


def _threads_goal(r: dict) -> str:
    return f"{GOAL_THREADS:g}x"


def _to_default(r: dict, *sets: str) -> str:
    """The fastest threaded fit() to the target against serial k = 1's."""
    return ratio_span([s[0] for c in select(r["cases"], sets) if (s := _threads_speedups(c)) is not None])


def _same_k(r: dict, k: str, *sets: str) -> str:
    """At minibatch size k, the threaded solver's speed-up over the serial one."""
    runs = [(_threads_run(c, k), _threads_run(c, k, threaded=True)) for c in select(r["cases"], sets)]
    return ratio_span([serial["solver_seconds"] / threaded["solver_seconds"] for serial, threaded in runs])


def _kernel_us(r: dict, k: str, *sets: str) -> str:
    """The serial kernel's microseconds per iteration at minibatch size k."""
    rows = [next(row for row in c["rows"] if row["k"] == int(k)) for c in select(r["cases"], sets)]
    return span([row["kernel_us_per_iteration"]["serial"] for row in rows], ",.0f") + " us"


def _threads_epochs(r: dict, k: str, *sets: str) -> str:
    return span([_threads_run(c, k)["epochs"] for c in select(r["cases"], sets)])


def _slowdown(r: dict, k: str, *sets: str) -> str:
    """How many times slower serial fit() to the target is at minibatch size k than at k = 1."""
    cases = select(r["cases"], sets)
    return span([_threads_run(c, k)["fit_seconds"] / c["baseline"]["fit_seconds"] for c in cases]) + "x"


FIGURES: dict[tuple[str, str], Figure] = {
    ("peers", "goal"): _peers_goal,
    ("peers", "ratio"): _peers_ratio,
    ("peers", "met"): _peers_met,
    ("peers", "faster"): _faster,
    ("peers", "cases_met"): _cases_met,
    ("peers", "cases_missed"): _cases_missed,
    ("peers", "misses"): _misses,
    ("peers", "missed_ratio"): _missed_ratio,
    ("peers", "fastest_count"): _fastest_count,
    ("peers", "auto_choices"): _auto_choices,
    ("peers", "ms"): _ms,
    ("peers", "seconds_per_epoch"): _seconds_per_epoch,
    ("peers", "budget"): _budget,
    ("peers", "epochs"): _epochs,
    ("peers", "reached"): _reached,
    ("peers", "same_budget_misses"): _same_budget_misses,
    ("peers", "setup_ms"): _setup_ms,
    ("peers", "setup_passes"): _setup_passes,
    ("threads", "goal"): _threads_goal,
    ("threads", "to_default"): _to_default,
    ("threads", "same_k"): _same_k,
    ("threads", "kernel_us"): _kernel_us,
    ("threads", "epochs"): _threads_epochs,
    ("threads", "slowdown"): _slowdown,
}
