"""Wall-clock fit() to a target: PGS against the fastest peers (bench.peers), and threads within
one fit (bench.threads)."""

from __future__ import annotations

import math
from typing import Any

from .format import md_table, sig3, span
from .goals import Goal, ratio_goal

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
        f"{sig3(case['setup']['one_pass'])} s."
    )
    return "\n\n".join([head, table, ratio])


def peers(r: dict) -> str:
    return "\n\n".join(peers_case(case) for case in r["cases"])


def peers_goals(r: dict) -> list[Goal]:
    ratios = [_peer_ratios(case) for case in r["cases"]]
    return [
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
