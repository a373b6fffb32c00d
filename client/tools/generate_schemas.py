"""Regenerate ``pgs_client/schemas.py``, the typed result objects, from the OpenAPI document.

    python client/tools/generate_schemas.py                 # the app of this repository
    python client/tools/generate_schemas.py --url URL       # a running service's /openapi.json

The dataclasses come from datamodel-code-generator with the fixed options below (the version is
pinned in the client's ``dev`` extra), so the same document always gives the same file;
``tests/client/test_package.py`` fails when the file no longer matches the app's document.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

CLIENT = Path(__file__).resolve().parents[1]
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a running service (default: this repository's app)")
    args = parser.parse_args()
    openapi = openapi_from_url(args.url) if args.url else openapi_from_app()
    SCHEMAS.write_text(generate(openapi))
    print(f"wrote {SCHEMAS}")


if __name__ == "__main__":
    main()
