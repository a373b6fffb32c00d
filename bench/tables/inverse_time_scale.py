"""The inverse time dependency at millions of rows through the service (bench.inverse_time_scale)."""

from __future__ import annotations

from .figures import Figure, listing
from .format import approx, md_table, sig3, span
from .goals import Goal, ratio_goal

GIB = 1024**3


def scale_rows(size: dict) -> list[dict]:
    """One size's (method, m, target, seconds and iterations, reached, repeats) from its
    studies' tables."""
    return [
        {
            "method": row["label"],
            "m": size["m"],
            "target": row["target"],
            "median_seconds": row["median_seconds"],
            "min_seconds": row.get("min_seconds"),
            "max_seconds": row.get("max_seconds"),
            "median_iterations": row["median_iterations"],
            "min_iterations": row.get("min_iterations"),
            "max_iterations": row.get("max_iterations"),
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
            "non-zeros",
            "generation (s)",
            "training shards (GiB)",
            "data directory (GiB)",
            "least free disk (GiB)",
            "worker peak RSS (GiB)",
        ],
        [
            [
                f"{size['m']:,}",
                f"{size['sigma']:.1e}",
                f"{size['train_nnz']:,}",
                f"{size['train_generate_seconds']:.0f}",
                f"{size['train_stored_bytes'] / GIB:.2f}",
                f"{size['disk_bytes'] / GIB:.2f}",
                f"{size['least_free_disk_bytes'] / GIB:.1f}",
                f"{size['worker_peak_rss_bytes'] / GIB:.2f}",
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
            f"#### What each m took (worker memory budget {r['worker_memory_bytes'] / GIB:g} GiB)",
            "",
            costs,
        ]
    )


# -- figures for the prose ---------------------------------------------------------------------------
# The methods of the studies by the short names the template uses.
METHODS = {"p2": "PGS p=2", "p18": "PGS p=1.8", "lbfgs": "L-BFGS"}


def _size(r: dict, m: str) -> dict:
    return next(size for size in r["results"] if size["m"] == int(m))


def _row(size: dict, method: str, target: str) -> dict:
    return next(
        row for row in scale_rows(size) if row["method"] == METHODS[method] and row["target"] == float(target)
    )


def _seconds(r: dict, method: str, target: str) -> str:
    """The method's median seconds to the target at each m, in the order of m."""
    return listing([sig3(_row(size, method, target)["median_seconds"]) for size in r["results"]]) + " s"


def _iterations(r: dict, method: str, target: str, m: str) -> str:
    """The iterations of the studies' checkpoints at the target, fewest to most, at one m."""
    row = _row(_size(r, m), method, target)
    low, high = _count_of(row["min_iterations"]), _count_of(row["max_iterations"])
    return low if low == high else f"{low}-{high}"


def _spread(r: dict, method: str, target: str, m: str) -> str:
    """The fastest and the slowest of the repeats' seconds to the target at one m."""
    row = _row(_size(r, m), method, target)
    return span([row["min_seconds"], row["max_seconds"]], sig3) + " s"


def _pgs_rows(r: dict, target: str) -> list[dict]:
    return [_row(size, method, target) for size in r["results"] for method in ("p2", "p18")]


def _checkpoint(r: dict, target: str) -> str:
    """The median iterations of PGS's checkpoint at the target, over both p and every m."""
    return span([row["median_iterations"] for row in _pgs_rows(r, target)], _count_of)


def _pgs_seconds(r: dict, target: str) -> str:
    return span([row["median_seconds"] for row in _pgs_rows(r, target)], sig3) + " s"


def _lbfgs(r: dict, target: str, m: str, key: str) -> str:
    return sig3(_row(_size(r, m), "lbfgs", target)[key])


def _lbfgs_over_pgs(r: dict, target: str, m: str) -> str:
    lbfgs, pgs = (_row(_size(r, m), method, target)["median_seconds"] for method in ("lbfgs", "p2"))
    return f"{approx(lbfgs / pgs)}x"


def _gib(r: dict, key: str, m: str) -> str:
    return f"{sig3(_size(r, m)[key] / GIB)} GiB"


def _shards(r: dict, m: str) -> str:
    """The training set's shards: its CSR on disk."""
    return _gib(r, "train_stored_bytes", m)


def _data_directory(r: dict, m: str) -> str:
    """The server's whole data directory: both sets' shards, the database, the models."""
    return _gib(r, "disk_bytes", m)


def _least_free(r: dict, m: str) -> str:
    """The disk's least free space while the size ran."""
    return _gib(r, "least_free_disk_bytes", m)


def _worker_rss(r: dict, m: str) -> str:
    return _gib(r, "worker_peak_rss_bytes", m)


def _budget(r: dict) -> str:
    """The worker's memory budget (PGS_WORKER_MEMORY_BYTES)."""
    return f"{approx(r['worker_memory_bytes'] / GIB)} GiB"


def _largest(r: dict) -> dict:
    return max(r["results"], key=lambda size: size["m"])


def _per_million(r: dict, key: str) -> float:
    """Bytes or seconds per million rows, at the largest m."""
    size = _largest(r)
    return size[key] / (size["m"] / 1e6)


def _shards_per_million(r: dict) -> str:
    return f"{sig3(_per_million(r, 'train_stored_bytes') / GIB)} GiB"


def _generation_rate(r: dict) -> str:
    """Seconds to draw and write a million rows' shards, at the largest m."""
    return f"{approx(_per_million(r, 'train_generate_seconds'))} s"


def _generation(r: dict, m: str) -> str:
    seconds = _size(r, m)["train_generate_seconds"]
    return f"{approx(seconds / 60)} minutes" if seconds >= 120 else f"{approx(seconds)} s"


def _nnz_per_row(r: dict) -> str:
    """The training rows' mean non-zeros, over every m."""
    return span([size["train_nnz"] / size["m"] for size in r["results"]], ".1f")


def _lbfgs_seconds(r: dict, target: str, m: str) -> str:
    return _lbfgs(r, target, m, "median_seconds") + " s"


def _lbfgs_iterations(r: dict, target: str, m: str) -> str:
    return _lbfgs(r, target, m, "median_iterations")


def _refused(r: dict) -> str:
    """The sizes at which the service refused L-BFGS."""
    return listing([f"{size['m']:,}" for size in r["results"] if "refused" in size["lbfgs"]])


def _hardest_ratio(r: dict, method: str, measure: str = "median_seconds") -> float | None:
    """The method's ``measure`` (median seconds or iterations) to the hardest target at the
    largest m over that at the smallest; None when either did not reach it."""
    target = str(max(r["targets"]))
    sizes = sorted(r["results"], key=lambda size: size["m"])
    first, last = (_row(size, method, target)[measure] for size in (sizes[0], sizes[-1]))
    return None if first is None or last is None else last / first


def _ratio(r: dict, method: str) -> str:
    ratio = _hardest_ratio(r, method)
    return "-" if ratio is None else f"{ratio:.2f}x"


# PGS's seconds (and iterations) to the hardest target at the largest m, over those at the
# smallest: flat or falling, as the paper's inverse time dependency has it.
GOAL_FLAT = 1.0


def inverse_time_scale_goals(r: dict) -> list[Goal]:
    sizes = [size["m"] for size in r["results"]]
    target = max(r["targets"])
    methods = ("p2", "p18")
    span_of = f"to accuracy {target:g} at m = {max(sizes):,} over those at m = {min(sizes):,}"
    return [
        ratio_goal(
            f"PGS p=2 and p=1.8, seconds {span_of} (flat or falling)",
            [_hardest_ratio(r, method) for method in methods],
            GOAL_FLAT,
        ),
        ratio_goal(
            f"PGS p=2 and p=1.8, iterations {span_of} (flat or falling)",
            [_hardest_ratio(r, method, "median_iterations") for method in methods],
            GOAL_FLAT,
        ),
    ]


FIGURES: dict[tuple[str, str], Figure] = {
    ("inverse_time_scale", "seconds"): _seconds,
    ("inverse_time_scale", "iterations"): _iterations,
    ("inverse_time_scale", "spread"): _spread,
    ("inverse_time_scale", "checkpoint"): _checkpoint,
    ("inverse_time_scale", "pgs_seconds"): _pgs_seconds,
    ("inverse_time_scale", "lbfgs_seconds"): _lbfgs_seconds,
    ("inverse_time_scale", "lbfgs_iterations"): _lbfgs_iterations,
    ("inverse_time_scale", "lbfgs_over_pgs"): _lbfgs_over_pgs,
    ("inverse_time_scale", "refused"): _refused,
    ("inverse_time_scale", "ratio"): _ratio,
    ("inverse_time_scale", "shards"): _shards,
    ("inverse_time_scale", "data_directory"): _data_directory,
    ("inverse_time_scale", "least_free"): _least_free,
    ("inverse_time_scale", "worker_rss"): _worker_rss,
    ("inverse_time_scale", "budget"): _budget,
    ("inverse_time_scale", "shards_per_million"): _shards_per_million,
    ("inverse_time_scale", "generation_rate"): _generation_rate,
    ("inverse_time_scale", "generation"): _generation,
    ("inverse_time_scale", "nnz_per_row"): _nnz_per_row,
}
