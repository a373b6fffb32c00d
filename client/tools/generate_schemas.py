"""Regenerate ``pgs_client/schemas.py``, the typed result objects, from the OpenAPI document.

    python client/tools/generate_schemas.py                 # the app of this repository
    python client/tools/generate_schemas.py --url URL       # a running service's /openapi.json
    python client/tools/generate_schemas.py --check         # exit 1 if the file is out of date

The dataclasses come from datamodel-code-generator with the fixed options below (the version is
pinned in the client's ``dev`` extra), so the same document always gives the same file;
``make check`` runs ``--check`` against this repository's app.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

CLIENT = Path(__file__).resolve().parents[1]
REPO = CLIENT.parent
SCHEMAS = CLIENT / "pgs_client" / "schemas.py"
HEADER = (
    "# Generated from the service's OpenAPI document by client/tools/generate_schemas.py:\n"
    "# do not edit by hand."
)
OPTIONS = [
    "--input-file-type",
    "openapi",
    "--output-model-type",
    "dataclasses.dataclass",
    "--target-python-version",
    "3.11",
    "--keyword-only",
    "--use-standard-collections",
    "--use-union-operator",
    "--use-field-description",
    "--collapse-root-models",
    "--enum-field-as-literal",
    "all",
    "--output-datetime-class",
    "datetime",
    "--disable-timestamp",
    "--custom-file-header",
    HEADER,
    "--formatters",
    "ruff-format",
    "ruff-check",
]


def openapi_from_app() -> dict[str, Any]:
    """The document of ``create_app()`` (built, not started: nothing is written)."""
    # This checkout's app first: an environment shared by several checkouts (git worktrees)
    # has its editable install pointing at only one of them.
    sys.path.insert(0, str(REPO))
    from app.core.config import Settings
    from app.main import create_app

    with tempfile.TemporaryDirectory() as tmp:
        return create_app(Settings(data_dir=Path(tmp))).openapi()


def openapi_from_url(url: str) -> dict[str, Any]:
    import httpx

    response = httpx.get(url.rstrip("/") + "/openapi.json", timeout=30)
    response.raise_for_status()
    return dict(response.json())


def generate(openapi: dict[str, Any]) -> str:
    """The text of schemas.py for this document."""
    with tempfile.TemporaryDirectory() as tmp:
        source, target = Path(tmp) / "openapi.json", Path(tmp) / "schemas.py"
        source.write_text(json.dumps(openapi))
        # cwd: ruff formats with the repository's settings, wherever this is run from.
        subprocess.run(
            [
                sys.executable,
                "-m",
                "datamodel_code_generator",
                "--input",
                str(source),
                "--output",
                str(target),
                *OPTIONS,
            ],
            check=True,
            cwd=CLIENT,
        )
        return target.read_text()


def same_classes(fresh: str, current: str) -> bool:
    """Compared as syntax trees: a formatter's version may move line breaks, not classes/fields."""
    return ast.dump(ast.parse(fresh)) == ast.dump(ast.parse(current))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a running service (default: this repository's app)")
    parser.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 if stale")
    args = parser.parse_args()
    openapi = openapi_from_url(args.url) if args.url else openapi_from_app()
    fresh = generate(openapi)
    if not args.check:
        SCHEMAS.write_text(fresh)
        print(f"wrote {SCHEMAS}")
    elif not same_classes(fresh, SCHEMAS.read_text()):
        print(f"{SCHEMAS} is out of date with the API: run {sys.executable} {__file__}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
