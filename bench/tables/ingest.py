"""svmlight parse speed: the service's parser against scikit-learn's and xgboost's (bench.ingest)."""

from __future__ import annotations

from typing import Any

from .format import md_table

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
