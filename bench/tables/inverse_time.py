"""The PGS paper's inverse time dependency: its Figures 5-8 and Table II (bench.paper_figures),
and the Gaussian toy of its Figure 9 (bench.inverse_time)."""

from __future__ import annotations

from typing import Any

from .figures import Figure, count, listing, sigma_text, thousands
from .format import approx, md_table, sig3, span

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


# Table II's claim: PGS within 0.1 points (0.001) of the exact optimum's test accuracy.
TABLE_II_WITHIN = 0.001


def _within_a_tenth(gap: float) -> str:
    return f"{100 * gap:+.2f} ({'within' if abs(gap) <= TABLE_II_WITHIN else 'not within'} 0.1)"


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


# -- figures for the prose: Figures 5-8 and Table II -------------------------------------------------

# The methods of bench.paper_figures, and the objectives of its sigma(m) and Table II, by the short
# names the template uses. Its figures are read at the hardest target (the last), as Figure 5 is.
METHODS = {
    "p2": "PGS p=2 logistic",
    "p18": "PGS p=1.8 logistic",
    "ls": "PGS p=2 least squares",
    "lbfgs": "L-BFGS p=2 logistic",
}
OBJECTIVES = {"p2": "p=2 logistic", "p18": "p=1.8 logistic", "ls": "p=2 least squares"}


def _hardest(r: dict, method: str, sizes: tuple[str, ...] = ()) -> list[dict]:
    """The method's rows at the hardest target, for the sizes m given (all without), by m."""
    wanted = {int(m) for m in sizes} or set(r["sizes"])
    rows = [
        row
        for row in r["rows"]
        if row["method"] == METHODS[method] and row["target"] == r["targets"][-1] and row["m"] in wanted
    ]
    return sorted(rows, key=lambda row: row["m"])


def _updates(r: dict, method: str, *sizes: str) -> str:
    return span([row["median_iterations"] for row in _hardest(r, method, sizes)], thousands)


def _epochs(r: dict, method: str, m: str) -> str:
    [row] = _hardest(r, method, (m,))
    return approx(row["median_iterations"] / row["m"])


def _ms(r: dict, method: str, *sizes: str) -> str:
    return span([1e3 * row["median_seconds"] for row in _hardest(r, method, sizes)]) + " ms"


def _seconds(r: dict, method: str, *sizes: str) -> str:
    """Each size's median seconds, in the order of m: '0.384, 0.268 and 0.164 s'."""
    return listing([sig3(row["median_seconds"]) for row in _hardest(r, method, sizes)]) + " s"


def _seconds_range(r: dict, method: str, *sizes: str) -> str:
    return span([row["median_seconds"] for row in _hardest(r, method, sizes)], ".2f") + " s"


def _growth(r: dict, method: str) -> str:
    """The median seconds at the largest m over those at the smallest."""
    rows = _hardest(r, method)
    return f"{approx(rows[-1]['median_seconds'] / rows[0]['median_seconds'])}x"


def _speedup(r: dict, *sizes: str) -> str:
    """L-BFGS's seconds over PGS p=2 logistic's, at each size."""
    pairs = zip(_hardest(r, "lbfgs", sizes), _hardest(r, "p2", sizes), strict=True)
    return span([lbfgs["median_seconds"] / pgs["median_seconds"] for lbfgs, pgs in pairs]) + "x"


def _sigmas(r: dict, objective: str) -> str:
    """sigma(m) of an objective at each m, in the order of m."""
    return listing([sigma_text(_by_m(r["sigmas"][OBJECTIVES[objective]])[str(m)]) for m in r["sizes"]])


def _sigma(r: dict, objective: str, m: str) -> str:
    return sigma_text(_by_m(r["sigmas"][OBJECTIVES[objective]])[m])


def _reached(r: dict, method: str, m: str) -> str:
    [row] = _hardest(r, method, (m,))
    return count(row["reached"], row["runs"])


def _table_ii(r: dict, objectives: tuple[str, ...]) -> list[dict]:
    names = [OBJECTIVES[o] for o in objectives] or list(OBJECTIVES.values())
    return [row for row in r["table_ii"] if row["objective"] in names]


def _gap(r: dict, *objectives: str) -> str:
    """PGS's accuracy minus L-BFGS's in Table II, in points: '+0.07', or '-0.02 to +0.01'."""
    gaps = [100 * (row["pgs_accuracy_median"] - row["lbfgs_accuracy"]) for row in _table_ii(r, objectives)]
    return span(gaps, "+.2f", sep=" to ")


def _miss(r: dict, objective: str) -> str:
    """By how many points PGS's accuracy differs from L-BFGS's in Table II, either way."""
    [row] = _table_ii(r, (objective,))
    return f"{100 * abs(row['pgs_accuracy_median'] - row['lbfgs_accuracy']):.2f}"


def _within(r: dict) -> str:
    """In how many of Table II's objectives PGS is within 0.1 points of L-BFGS's accuracy."""
    gaps = [abs(row["pgs_accuracy_median"] - row["lbfgs_accuracy"]) for row in r["table_ii"]]
    return count(sum(gap <= TABLE_II_WITHIN for gap in gaps), len(gaps))


def _objective_excess(r: dict, objective: str) -> str:
    """How far above L-BFGS's training objective PGS's median ends, in percent."""
    [row] = _table_ii(r, (objective,))
    return f"{approx(100 * (row['pgs_objective_median'] / row['lbfgs_objective'] - 1))} %"


def _objective(r: dict, objective: str, solver: str) -> str:
    [row] = _table_ii(r, (objective,))
    return f"{row[f'{solver}_objective_median' if solver == 'pgs' else 'lbfgs_objective']:.3f}"


def _std_points(r: dict, objective: str) -> str:
    [row] = _table_ii(r, (objective,))
    return f"{100 * row['pgs_accuracy_std']:.2f}"


def _lbfgs_iterations_ii(r: dict, objective: str) -> str:
    [row] = _table_ii(r, (objective,))
    return str(row["lbfgs_iterations"])


def _accuracies(r: dict) -> str:
    """The range of Table II's accuracies, L-BFGS's and PGS's."""
    rows = r["table_ii"]
    return span([row["lbfgs_accuracy"] for row in rows] + [row["pgs_accuracy_median"] for row in rows], ".2f")


# -- figures for the prose: the Gaussian toy of Figure 9 ---------------------------------------------


def _toy_rows(r: dict, features: str = "10") -> list[dict]:
    return r["features"][features]


def _in(m: int, selectors: tuple[str, ...]) -> bool:
    """Whether m is one the selectors name: '2000', or a range '20000-200000' (inclusive)."""
    for selector in selectors:
        low, _, high = selector.partition("-")
        if int(low) <= m <= int(high or low):
            return True
    return not selectors


def _toy_reached(r: dict, *sizes: str) -> list[dict]:
    return [row for row in _toy_rows(r) if _in(row["m"], sizes) and row["reached"]]


def _spread(r: dict, sizes: str, *features: str) -> str:
    """The most the median iterations vary across the sizes, for any of the feature counts."""
    ratios = []
    for n in features:
        its = [row["median_iterations"] for row in _toy_rows(r, n) if _in(row["m"], (sizes,))]
        ratios.append(max(its) / min(its))
    return f"{approx(max(ratios))}x"


def _first_reached(r: dict, features: str) -> str:
    """The smallest m at which some run reaches the target."""
    return f"{min(row['m'] for row in _toy_rows(r, features) if row['reached']):,}"


def _toy_epochs(r: dict, *sizes: str) -> str:
    """Median iterations over m, the epochs, for every feature count, at the sizes given."""
    epochs = [
        row["median_iterations"] / row["m"]
        for rows in r["features"].values()
        for row in rows
        if _in(row["m"], sizes) and row["reached"]
    ]
    return span(epochs)


def _toy_sigma(r: dict, m: str) -> str:
    return next(sigma_text(row["sigma"]) for row in _toy_rows(r) if row["m"] == int(m))


def _toy_iterations(r: dict, *sizes: str) -> str:
    return span([row["median_iterations"] for row in _toy_reached(r, *sizes)], thousands)


def _toy_runs_reached(r: dict, m: str) -> str:
    row = next(row for row in _toy_rows(r) if row["m"] == int(m))
    return count(row["reached"], row["runs"])


def _optimum(r: dict, *sizes: str) -> str:
    """The exact optimum's distance to w* (the floor of any run at that sigma) at the sizes given."""
    return span([row["optimum_error"] for row in _toy_rows(r) if _in(row["m"], sizes)], ".3f")


def _median_epochs(r: dict, *sizes: str) -> str:
    return span([row["median_epochs"] for row in _toy_reached(r, *sizes)])


FIGURES: dict[tuple[str, str], Figure] = {
    ("paper_figures", "updates"): _updates,
    ("paper_figures", "epochs"): _epochs,
    ("paper_figures", "ms"): _ms,
    ("paper_figures", "seconds"): _seconds,
    ("paper_figures", "seconds_range"): _seconds_range,
    ("paper_figures", "growth"): _growth,
    ("paper_figures", "speedup"): _speedup,
    ("paper_figures", "sigmas"): _sigmas,
    ("paper_figures", "sigma"): _sigma,
    ("paper_figures", "reached"): _reached,
    ("paper_figures", "gap"): _gap,
    ("paper_figures", "within"): _within,
    ("paper_figures", "miss"): _miss,
    ("paper_figures", "objective_excess"): _objective_excess,
    ("paper_figures", "objective"): _objective,
    ("paper_figures", "std_points"): _std_points,
    ("paper_figures", "lbfgs_iterations_ii"): _lbfgs_iterations_ii,
    ("paper_figures", "accuracies"): _accuracies,
    ("inverse_time", "spread"): _spread,
    ("inverse_time", "first_reached"): _first_reached,
    ("inverse_time", "epochs"): _toy_epochs,
    ("inverse_time", "sigma"): _toy_sigma,
    ("inverse_time", "iterations"): _toy_iterations,
    ("inverse_time", "reached"): _toy_runs_reached,
    ("inverse_time", "optimum"): _optimum,
    ("inverse_time", "median_epochs"): _median_epochs,
}
