"""The PGS paper's inverse time dependency: its Figures 5-8 and Table II (bench.paper_figures),
the Gaussian toy of its Figure 9 (bench.inverse_time) and millions of rows through the service
(bench.inverse_time_scale)."""

from __future__ import annotations

from typing import Any

from .format import md_table, sig3

# -- the PGS paper's Figures 5-9 and Table II ------------------------------------------------------------


def _by_m(values: dict) -> dict[str, Any]:
    """A dict keyed by m as strings: a record's keys after JSON, integers in the run that prints it."""
    return {str(k): v for k, v in values.items()}


def paper_figures(r: dict) -> str:
    sizes = r["sizes"]
    cells = {(row["method"], row["m"], row["target"]): row for row in r["rows"]}
    methods = list(dict.fromkeys(row["method"] for row in r["rows"]))

    def cell(row: dict) -> str:
        text = sig3(row["median_seconds"])
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
            md_table(["method", "target"] + [f"m={m:,}" for m in sizes], rows + sigmas),
            "",
            f"Table II, {r['set']} (m = {sizes[-1]:,}, sigma chosen on validation data; PGS "
            f"{r['table_ii'][0]['runs']} seeds, 5 epochs):",
            "",
            md_table(
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
        f"`{r['figure']}`.\n\n" + md_table(["m"] + [f"{n} features" for n, _ in columns], rows)
    )


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
            else f"{sig3(row['median_seconds'])} ({_count_of(row['median_iterations'])})"
        )
        return text if row["reached"] == row["repeats"] else (f"{text} ({row['reached']}/{row['repeats']})")

    gib = 1024**3
    times = md_table(
        ["method", "target"] + [f"m={m:,}" for m in sizes],
        [
            [method, f"{target:g}"] + [cell(method, m, target) for m in sizes]
            for target in r["targets"]
            for method in methods
        ],
    )
    costs = md_table(
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
