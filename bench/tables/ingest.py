"""svmlight parse speed: the service's parser against scikit-learn's and xgboost's (bench.ingest)."""

from __future__ import annotations

from typing import Any

from .format import md_table
from .goals import Goal, ratio_goal

PARSERS = (("pgs", 1), ("pgs", 2), ("xgboost", 1), ("xgboost", 2), ("sklearn", 1))


def _by_file(results: list[dict[str, Any]]) -> dict[str, dict[tuple[str, int], dict[str, Any]]]:
    files: dict[str, dict[tuple[str, int], dict[str, Any]]] = {}
    for row in results:
        files.setdefault(row["file"], {})[row["parser"], row["threads"]] = row
    return files


def ingest(results: list[dict[str, Any]]) -> str:
    """Per file: MB/s of each parser (threads), the service's parser over xgboost's and
    scikit-learn's on one thread, its second thread's gain, and the peak memory of the parse."""

    def mb_s(rows: dict, key: tuple[str, int]) -> str:
        return f"{rows[key]['mb_s']:.0f}" if key in rows else "-"

    def ratio(rows: dict, a: tuple[str, int], b: tuple[str, int]) -> str:
        return f"{rows[a]['mb_s'] / rows[b]['mb_s']:.2f}" if a in rows and b in rows else "-"

    def peak(rows: dict, key: tuple[str, int]) -> str:
        return f"{rows[key]['peak_mib']:.0f}" if key in rows else "-"

    table = [
        [
            name,
            f"{next(iter(rows.values()))['mb']:.1f}",
            *(mb_s(rows, key) for key in PARSERS),
            ratio(rows, ("pgs", 1), ("xgboost", 1)),
            ratio(rows, ("pgs", 1), ("sklearn", 1)),
            ratio(rows, ("pgs", 2), ("pgs", 1)),
            " / ".join(peak(rows, key) for key in (("pgs", 1), ("pgs", 2), ("xgboost", 1), ("sklearn", 1))),
        ]
        for name, rows in _by_file(results).items()
    ]
    return md_table(
        [
            "file",
            "MB",
            "service 1 thread (MB/s)",
            "service 2 threads",
            "xgboost 1 thread",
            "xgboost 2 threads",
            "scikit-learn",
            "service / xgboost (1 thread)",
            "service / scikit-learn",
            "service 2 threads / 1",
            "peak MiB: service 1t / 2t / xgboost 1t / scikit-learn",
        ],
        table,
    )


# The goals: the service's svmlight parser at least as fast as xgboost's on one core, and
# at least 8 times scikit-learn's load_svmlight_file (what xgboost's parser reached on one thread).
GOAL_OVER_XGBOOST = 1.0
GOAL_OVER_SKLEARN = 8.0


def ingest_goals(results: list[dict[str, Any]]) -> list[Goal]:
    files = _by_file(results).values()

    def ratios(other: tuple[str, int]) -> list[float | None]:
        return [
            rows[("pgs", 1)]["mb_s"] / rows[other]["mb_s"] if ("pgs", 1) in rows and other in rows else None
            for rows in files
        ]

    where = "every svmlight file of ../shared/data and the generated 1 GiB file, one core each"
    return [
        ratio_goal(
            f"svmlight parse: the service's parser over xgboost's ({where})",
            ratios(("xgboost", 1)),
            GOAL_OVER_XGBOOST,
            at_least=True,
        ),
        ratio_goal(
            f"svmlight parse: the service's parser over scikit-learn's load_svmlight_file ({where})",
            ratios(("sklearn", 1)),
            GOAL_OVER_SKLEARN,
            at_least=True,
        ),
    ]
