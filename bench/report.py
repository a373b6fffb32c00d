"""Render the JSON written by bench.paper_figures and bench.inverse_time as Markdown tables.

    .venv/bin/python -m bench.report [--figures docs/figures]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def _fmt(x, digits=3):
    return "-" if x is None else f"{x:.{digits}g}"


def paper_tables(path: Path) -> str:
    result = json.loads(path.read_text())
    name = path.name.removesuffix("_paper_figures.json")
    out = [f"#### {name}: median solver seconds to each test-accuracy target "
           f"(targets {result['targets']}; sizes {result['sizes']})", ""]
    methods = list(dict.fromkeys(r["method"] for r in result["rows"]))
    for target in result["targets"]:
        out.append(f"Target {target}:")
        out.append("")
        out.append("| method | " + " | ".join(f"m={m}" for m in result["sizes"]) + " |")
        out.append("|---|" + "---|" * len(result["sizes"]))
        for method in methods:
            cells = []
            for m in result["sizes"]:
                row = next(r for r in result["rows"]
                           if r["method"] == method and r["m"] == m and r["target"] == target)
                cell = _fmt(row["median_seconds"])
                if row["reached"] < row["runs"]:
                    cell += f" ({row['reached']}/{row['runs']})"
                cells.append(cell)
            out.append(f"| {method} | " + " | ".join(cells) + " |")
        out.append("")
    out.append(f"#### {name}: Table II (largest m, sigma chosen on validation data)")
    out.append("")
    out.append("| objective | sigma | L-BFGS accuracy (iterations) | PGS accuracy median +- std | "
               "PGS seconds (median) |")
    out.append("|---|---|---|---|---|")
    for row in result["table_ii"]:
        out.append(
            f"| {row['objective']} | {row['sigma']:.0e} | {row['lbfgs_accuracy']:.4f} "
            f"({row['lbfgs_iterations']}) | {row['pgs_accuracy_median']:.4f} +- "
            f"{row['pgs_accuracy_std']:.4f} ({row['runs']} runs) | {row['pgs_seconds_median']:.3f} |"
        )
    out.append("")
    return "\n".join(out)


def toy_table(path: Path) -> str:
    result = json.loads(path.read_text())
    out = ["| features | " + " | ".join(f"m={r['m']}" for r in next(iter(result.values()))) + " |"]
    out.append("|---|" + "---|" * len(next(iter(result.values()))))
    for n_features, rows in result.items():
        cells = [f"{_fmt(r['median_iterations'], 3)} ({r['reached']}/{r['runs']}, s={r['sigma']:.0e})"
                 for r in rows]
        out.append(f"| {n_features} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--figures", type=Path, default=Path("docs/figures"))
    args = parser.parse_args(argv)
    for path in sorted(args.figures.glob("*_paper_figures.json")):
        print(paper_tables(path))
    for name in ("fig9_toy", "fig9_toy_target_sigma"):
        toy = args.figures / f"{name}.json"
        if toy.exists():
            print(f"{name}:\n{toy_table(toy)}\n")


if __name__ == "__main__":
    main()
