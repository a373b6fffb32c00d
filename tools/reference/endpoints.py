"""docs/reference/endpoints.md: every operation of the service's OpenAPI document, by tag."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from tools.reference.markdown import code, header, table

INTRO = """\
Every operation of the service's OpenAPI document (`GET /openapi.json`; Swagger UI on it at
`/docs`), grouped as the document tags them, with its query parameters. The document also holds
each operation's request body, answers and their examples. Outside the document: the web console
(`GET /`, `GET /console/...`, [console.md](console.md)), `/openapi.json` and `/docs`, which need
no key. What every operation has in common (errors, pagination, idempotency) is in
[http-api.md](http-api.md)."""

_METHODS = ("get", "head", "options", "post", "put", "patch", "delete")


def page() -> str:
    return render(openapi_document())


def openapi_document() -> dict[str, Any]:
    """The document as the app builds it (nothing starts: no lifespan, no data dir written)."""
    from app.core.config import Settings
    from app.main import create_app

    with tempfile.TemporaryDirectory() as root:
        return create_app(Settings(data_dir=Path(root))).openapi()


def render(document: dict[str, Any]) -> str:
    by_tag: dict[str, list[list[str]]] = {}
    for path, item in document["paths"].items():
        for method in (m for m in _METHODS if m in item):
            operation = item[method]
            query = [code(p["name"]) for p in operation.get("parameters", []) if p["in"] == "query"]
            row = [code(method.upper()), code(path), operation.get("summary", ""), ", ".join(query)]
            by_tag.setdefault(operation.get("tags", ["other"])[0], []).append(row)
    sections = [
        f"## {tag}\n\n" + table(["method", "path", "what it does", "query parameters"], rows)
        for tag, rows in by_tag.items()
    ]
    return header("Endpoints", "the OpenAPI document (app/api/routes/)", INTRO) + "\n" + "\n".join(sections)
