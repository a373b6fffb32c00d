"""Writes examples/credit.csv: a small synthetic credit-scoring table as R's write.csv exports one
(a header, quoted text cells, NA for missing cells, the label as text), so that the client's
examples of tabular data run without downloading anything. Seeded: the file is the same on
every run (``python examples/make_credit.py``).

The label depends on the columns (a logistic model learns it well, not perfectly): a longer loan,
a larger amount and renting raise the risk; savings, age and owning a home lower it.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

ROWS = 200
SEED = 32
NA_SHARE = 0.04
HOUSING = ("own", "rent", "free")
PURPOSE = ("car", "furniture", "education", "business", "repairs")
SAVINGS = ("none", "low", "moderate", "high")
EMPLOYMENT = ("unemployed", "under_1y", "1_to_4y", "over_4y")
HEADER = ("duration", "amount", "age", "housing", "purpose", "savings", "employment", "credit_risk")


def _row(rng: random.Random) -> list[object]:
    duration = rng.choice(range(6, 61, 6))
    amount = round(rng.lognormvariate(7.8, 0.6))
    age = rng.randint(19, 75)
    housing, purpose = rng.choice(HOUSING), rng.choice(PURPOSE)
    savings, employment = rng.choice(SAVINGS), rng.choice(EMPLOYMENT)
    z = (
        0.05 * (duration - 24)
        + 0.0002 * (amount - 2500)
        - 0.03 * (age - 35)
        + {"own": -0.6, "rent": 0.6, "free": 0.2}[housing]
        - 0.5 * SAVINGS.index(savings)
        - 0.3 * EMPLOYMENT.index(employment)
        + rng.gauss(0, 0.8)
    )
    label = "bad" if 1 / (1 + math.exp(-z)) > 0.5 else "good"
    cells: list[object] = [duration, amount, age, housing, purpose, savings, employment]
    # Missing cells as R writes them: NA, in numeric and text columns alike (never the label).
    return [None if rng.random() < NA_SHARE else c for c in cells] + [label]


def _cell(value: object) -> str:
    """A cell as R's write.csv writes it: text quoted, NA bare, numbers as they are."""
    if value is None:
        return "NA"
    return f'"{value}"' if isinstance(value, str) else str(value)


def main() -> None:
    rng = random.Random(SEED)
    lines = [",".join(map(_cell, HEADER))]
    lines += [",".join(map(_cell, _row(rng))) for _ in range(ROWS)]
    Path(__file__).with_name("credit.csv").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
