"""sigma="auto" against LogisticRegressionCV: accuracy and wall time per data set (bench.sigma_auto)."""

from __future__ import annotations

from typing import Any

from .figures import Figure, listing
from .format import md_table, sig3, span
from .goals import Goal

# The issue's goal: sigma="auto" with default options within half an accuracy point of
# LogisticRegressionCV (same splits and grid, its fastest solver that converges) in at most a
# quarter of its wall time.
GOAL_RATIO = 0.25
GOAL_POINTS = 0.5
# A LogisticRegressionCV solver is a candidate reference when its test accuracy is within this
# many points of the best solver's: "the fastest that converges", judged by what it reaches.
SOLVER_TOLERANCE = 0.1
AUTO = "sigma_auto"


def reference(case: dict[str, Any]) -> str:
    """The LogisticRegressionCV solver the goal compares with: the fastest (median wall time) of
    those within SOLVER_TOLERANCE points of the best solver's test accuracy."""
    solvers = {k: v for k, v in case["methods"].items() if k != AUTO and v["wall"] is not None}
    best = max(v["accuracy"] for v in solvers.values())
    close = [k for k, v in solvers.items() if 100 * (best - v["accuracy"]) <= SOLVER_TOLERANCE]
    return min(close, key=lambda k: solvers[k]["wall"])


def _ratio(case: dict[str, Any]) -> float:
    return case["methods"][AUTO]["wall"] / case["methods"][reference(case)]["wall"]


def _gap(case: dict[str, Any]) -> float:
    """sigma="auto"'s test accuracy minus the reference's, in points (negative: below it)."""
    return 100 * (case["methods"][AUTO]["accuracy"] - case["methods"][reference(case)]["accuracy"])


def _met(case: dict[str, Any]) -> bool:
    return _ratio(case) <= GOAL_RATIO and _gap(case) >= -GOAL_POINTS


def _seed_span(case: dict[str, Any]) -> str:
    accuracies = [case["methods"][AUTO]["accuracy"], *case["seed_accuracies"]]
    return f"{span([100 * a for a in accuracies], '.2f')}% ({len(accuracies)} seeds)"


def sigma_auto(results: list[dict[str, Any]]) -> str:
    """Per data set: the splits and grid, each method's median wall time, test accuracy and
    chosen sigma (sigma="auto": and the points its path fitted), the reference solver, and
    sigma="auto"'s wall time and accuracy against it."""
    solvers = list(dict.fromkeys(k for case in results for k in case["methods"] if k != AUTO))
    rows = []
    for case in results:
        auto = case["methods"][AUTO]

        def cell(key: str, case: dict[str, Any] = case) -> str:
            method = case["methods"].get(key)
            if method is None:
                return "-"
            if method["wall"] is None:
                return f"over {method['timed_out']:g} s (killed)"
            runs = len(method["walls"])
            notes = [f"{runs} run{'s' if runs != 1 else ''}"] if runs != case["repeats"] else []
            notes += ["not converged"] if method.get("convergence_warnings") else []
            note = f" ({', '.join(notes)})" if notes else ""
            return f"{sig3(method['wall'])} s, {100 * method['accuracy']:.2f}%, {method['sigma']:.2g}{note}"

        rows.append(
            [
                case["set"],
                f"{case['rows']:,} x {case['features']:,}",
                case["splits"],
                f"{auto['points']} of {case['grid'][2]} ({auto['stop_reason']})",
                cell(AUTO),
                _seed_span(case),
                *(cell(s) for s in solvers),
                reference(case),
                f"{_ratio(case):.2f}x",
                f"{_gap(case):+.2f}",
                "met" if _met(case) else "missed",
            ]
        )
    return md_table(
        [
            "set",
            "train rows x features",
            "splits",
            'sigma="auto" points fitted',
            'sigma="auto": wall, test accuracy, sigma',
            'sigma="auto" test accuracy, seeds 0-N',
            *(f"LogisticRegressionCV({s})" for s in solvers),
            "reference",
            "wall / reference",
            "accuracy - reference (points)",
            "goal",
        ],
        rows,
    )


def sigma_auto_goals(results: list[dict[str, Any]]) -> list[Goal]:
    ratios, gaps = [_ratio(c) for c in results], [_gap(c) for c in results]
    return [
        Goal(
            f'sigma="auto" (defaults) against LogisticRegressionCV, same splits and grid, its '
            f"fastest solver that converges ({listing([c['set'] for c in results])})",
            f"at most {GOAL_RATIO:g}x its wall time, at most {GOAL_POINTS:g} point below its test accuracy",
            f"{span(ratios, '.2f')}x its wall time; {span(gaps, '+.2f', sep=' to ')} points",
            sum(_met(c) for c in results),
            len(results),
        )
    ]


def _case(results: list[dict[str, Any]], name: str) -> dict[str, Any]:
    for case in results:
        if case["set"] == name:
            return case
    raise KeyError(f"no set {name!r} in the record")


def _ratio_figure(results: list[dict[str, Any]], name: str) -> str:
    return f"{_ratio(_case(results, name)):.2f}x"


def _gap_figure(results: list[dict[str, Any]], name: str) -> str:
    return f"{_gap(_case(results, name)):+.2f} points"


def _reference_figure(results: list[dict[str, Any]], name: str) -> str:
    return reference(_case(results, name))


def _met_figure(results: list[dict[str, Any]]) -> str:
    return f"{sum(_met(c) for c in results)} of {len(results)}"


def _sets_figure(results: list[dict[str, Any]], verdict: str) -> str:
    """The sets that 'met' or 'missed' the goal."""
    return listing([c["set"] for c in results if _met(c) == (verdict == "met")])


def _goal_figure(results: list[dict[str, Any]]) -> str:
    accuracy = f"{GOAL_POINTS:g} point of LogisticRegressionCV's test accuracy"
    return f"{accuracy} in at most {GOAL_RATIO:g}x its wall time"


def _points_figure(results: list[dict[str, Any]], name: str) -> str:
    case = _case(results, name)
    return f"{case['methods'][AUTO]['points']} of {case['grid'][2]}"


def _path_share_figure(results: list[dict[str, Any]], name: str) -> str:
    """The share of sigma="auto"'s wall time in its path's fits (the rest: grid, splits, refit)."""
    auto = _case(results, name)["methods"][AUTO]
    return f"{100 * auto['path_seconds'] / auto['wall']:.0f}%"


def _budget_figure(results: list[dict[str, Any]], name: str) -> str:
    """The wall time the goal allows sigma="auto": GOAL_RATIO times the reference's."""
    case = _case(results, name)
    return f"{sig3(GOAL_RATIO * case['methods'][reference(case)]['wall'])} s"


def _rest_figure(results: list[dict[str, Any]], name: str) -> str:
    """sigma="auto"'s wall time outside its path's fits: the grid, the splits and the refit."""
    auto = _case(results, name)["methods"][AUTO]
    return f"{sig3(auto['wall'] - auto['path_seconds'])} s"


def _seeds_figure(results: list[dict[str, Any]], name: str) -> str:
    return _seed_span(_case(results, name))


def _solver_ratio_figure(results: list[dict[str, Any]], name: str, solver: str) -> str:
    """A LogisticRegressionCV solver's wall time over the reference's ("over N s" if killed)."""
    case = _case(results, name)
    method = case["methods"][solver]
    if method["wall"] is None:
        return f"over {method['timed_out']:g} s (killed)"
    return f"{method['wall'] / case['methods'][reference(case)]['wall']:.0f}x"


FIGURES: dict[tuple[str, str], Figure] = {
    ("sigma_auto", "ratio"): _ratio_figure,
    ("sigma_auto", "gap"): _gap_figure,
    ("sigma_auto", "reference"): _reference_figure,
    ("sigma_auto", "met"): _met_figure,
    ("sigma_auto", "sets"): _sets_figure,
    ("sigma_auto", "goal"): _goal_figure,
    ("sigma_auto", "points"): _points_figure,
    ("sigma_auto", "path_share"): _path_share_figure,
    ("sigma_auto", "seeds"): _seeds_figure,
    ("sigma_auto", "budget"): _budget_figure,
    ("sigma_auto", "rest"): _rest_figure,
    ("sigma_auto", "solver_ratio"): _solver_ratio_figure,
}
