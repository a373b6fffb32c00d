"""The L1 paper's solvers (bench.l1_paths): objective and density against data accesses, why
SMIDAS's iterates are dense, and its speed."""

from __future__ import annotations

import statistics

from .figures import Figure, case_names, count, select, sigma_text
from .format import approx, md_table, span


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


# -- figures for the prose ---------------------------------------------------------------------------

# The methods of bench.l1_paths by the short names the template uses; a panel is 'duke:1e-06'
# (data set and lambda), or a data set for both lambdas.
METHODS = {
    "scd": "SCD",
    "scd_paper": "SCD, paper beta",
    "gcd": "GCD",
    "smidas": "SMIDAS",
    "truncgrad": "TRUNCGRAD",
}
TUNED = ("smidas", "truncgrad")


def _panels(r: dict, selectors: tuple[str, ...]) -> list[dict]:
    return select(r["panels"], selectors, key="dataset", by="lambda")


def _method_row(panel: dict, method: str) -> dict:
    return next(row for row in panel["rows"] if row["method"] == METHODS[method])


def _median(panel: dict, method: str, key: str) -> float:
    """The median over seeds of one of the method's end values (gap, nnz, nnz_above_1e-3_max)."""
    return statistics.median(_method_row(panel, method)[key])


def _gap(r: dict, method: str, *panels: str) -> str:
    return span([_median(p, method, "gap") for p in _panels(r, panels)], ".2g")


def _gap_ratio(r: dict, method: str, other: str, *panels: str) -> str:
    """How many times the method's gap is the other's."""
    ratios = [_median(p, method, "gap") / _median(p, other, "gap") for p in _panels(r, panels)]
    return span(ratios) + "x"


def _nnz(r: dict, method: str, key: str, *panels: str) -> str:
    return span([_median(p, method, key) for p in _panels(r, panels)], ",.0f")


def _nnz_seeds(r: dict, method: str, *panels: str) -> str:
    """The exact non-zeros of every seed of the method, fewest to most."""
    return span([n for p in _panels(r, panels) for n in _method_row(p, method)["nnz"]], ",.0f")


def _ahead_panels(r: dict, method: str) -> list[dict]:
    """The panels where the method ends below both tuned methods' gaps."""
    return [
        p for p in r["panels"] if all(_median(p, method, "gap") < _median(p, tuned, "gap") for tuned in TUNED)
    ]


def _kept_off(r: dict, panel: str) -> str:
    """Of the features with w*_j = 0, how many duals the truncation at w* keeps non-zero."""
    [p] = _panels(r, (panel,))
    survival = p["zero_survival"]
    return f"{survival['stationary_nonzero']:,.0f} of {survival['irrelevant_features']:,}"


def _speed_ratio(r: dict, method: str, other: str, panel: str) -> str:
    [p] = _panels(r, (panel,))
    return (
        f"{approx(_method_row(p, method)['iterations_per_s'] / _method_row(p, other)['iterations_per_s'])}x"
    )


def _speed_row(r: dict, method: str) -> dict:
    """The row of the speed table (rt_polarity with the defaults) for the method."""
    return next(row for row in r["speed"] if row["method"] == METHODS[method])


def _visits(r: dict) -> str:
    """SMIDAS's non-zero duals at the end over a row's non-zeros: what an iteration visits."""
    row = _speed_row(r, "smidas")
    return f"{approx(row['nnz_weights'][-1][1] / row['row_nnz'])}x"


def _nnz_exact(r: dict, method: str, *panels: str) -> str:
    """The median over seeds of the weights that are not 0.0 at the end."""
    return _nnz(r, method, "nnz", *panels)


def _nnz_large(r: dict, method: str, *panels: str) -> str:
    """The median over seeds of the weights above 1e-3 of the largest at the end."""
    return _nnz(r, method, "nnz_above_1e-3_max", *panels)


def _nnz_star(r: dict, *panels: str) -> str:
    return span([p["nnz_star"] for p in _panels(r, panels)], ",d")


def _p_star(r: dict, *panels: str) -> str:
    return span([p["p_star"] for p in _panels(r, panels)], sigma_text, sep=" to ")


def _ahead(r: dict, method: str) -> str:
    return count(len(_ahead_panels(r, method)), len(r["panels"]))


def _ahead_names(r: dict, method: str) -> str:
    return case_names(_ahead_panels(r, method), r["panels"], key="dataset", by="lambda")


def _predicted(r: dict, panel: str) -> str:
    """The duals the truncation keeps non-zero at w*, which predicts SMIDAS's exact density."""
    [p] = _panels(r, (panel,))
    return f"{p['zero_survival']['stationary_nonzero']:,.0f}"


def _smidas_nnz(r: dict) -> str:
    """SMIDAS's non-zero duals at the speed run's last checkpoint."""
    return f"{_speed_row(r, 'smidas')['nnz_weights'][-1][1]:,}"


def _row_nnz(r: dict) -> str:
    return approx(_speed_row(r, "smidas")["row_nnz"])


def _speed(r: dict, method: str) -> str:
    return f"{_speed_row(r, method)['iterations_per_s']:,.0f}"


def _accuracy(r: dict, method: str) -> str:
    return f"{_speed_row(r, method)['test_accuracy']:.3f}"


FIGURES: dict[tuple[str, str], Figure] = {
    ("l1_paths", "gap"): _gap,
    ("l1_paths", "gap_ratio"): _gap_ratio,
    ("l1_paths", "nnz"): _nnz_exact,
    ("l1_paths", "nnz_large"): _nnz_large,
    ("l1_paths", "nnz_seeds"): _nnz_seeds,
    ("l1_paths", "nnz_star"): _nnz_star,
    ("l1_paths", "p_star"): _p_star,
    ("l1_paths", "ahead"): _ahead,
    ("l1_paths", "ahead_panels"): _ahead_names,
    ("l1_paths", "kept_off"): _kept_off,
    ("l1_paths", "predicted"): _predicted,
    ("l1_paths", "speed_ratio"): _speed_ratio,
    ("l1_paths", "smidas_nnz"): _smidas_nnz,
    ("l1_paths", "visits"): _visits,
    ("l1_paths", "row_nnz"): _row_nnz,
    ("l1_paths", "speed"): _speed,
    ("l1_paths", "accuracy"): _accuracy,
}
