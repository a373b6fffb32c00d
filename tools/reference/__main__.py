"""``python -m tools.reference [--check]``: write the generated reference pages, or (``--check``)
exit 1 naming those that differ from what the code gives."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tools.reference import generate, stale, write

ROOT = Path(__file__).resolve().parents[2]


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.reference", description=__doc__)
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a page is stale")
    args = parser.parse_args()
    pages = generate()
    if args.check:
        outdated = stale(ROOT, pages)
        for path in outdated:
            print(f"{path} differs from what the code gives: run make docs", file=sys.stderr)
        return 1 if outdated else 0
    for path in write(ROOT, pages):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
