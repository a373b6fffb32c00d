"""bench.warm_start's record: a refresh from a stored model against a cold fit on the new rows."""

from __future__ import annotations

from .format import md_table, sig3
from .goals import Goal, ratio_goal

# A refresh should take a fraction of a cold fit: at most half its time to the same accuracy.
GOAL_RATIO = 0.5


def warm_start(r: dict) -> str:
    return md_table(
        [
            "data set",
            "solver",
            "stored model's accuracy",
            "cold fit's final accuracy (target)",
            "cold: s to target (of its total)",
            "warm: s to target",
            "warm / cold (median)",
            "refresh with its default budget: accuracy, s",
        ],
        [
            [
                row["dataset"],
                row["solver"],
                f"{row['stored_accuracy']:.4f}",
                f"{row['target']:.4f}",
                f"{sig3(row['cold_seconds'])} (of {sig3(row['cold_total_seconds'])})",
                sig3(row["warm_seconds"]),
                "-" if row["median_ratio"] is None else f"{row['median_ratio']:.2f}x",
                f"{row['refresh_accuracy']:.4f}, {sig3(row['refresh_seconds'])}",
            ]
            for row in r["rows"]
        ],
    )


def warm_start_goals(r: dict) -> list[Goal]:
    return [
        ratio_goal(
            "A refresh from init_model: time to the cold fit's final test accuracy against the cold fit's",
            [row["median_ratio"] for row in r["rows"]],
            GOAL_RATIO,
            note="median over 3 splits per data set and solver",
        )
    ]
