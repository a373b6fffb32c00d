"""The L1 paper's solvers (bench.l1_paths): objective and density against data accesses, why
SMIDAS's iterates are dense, and its speed."""

from __future__ import annotations

import statistics

from .format import md_table


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
    return md_table(
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
    return md_table(
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
    return md_table(
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
