"""The web console: static pages at ``/`` that read and write everything through the public API.

The console is a single page (``static/index.html``) with hash routing (``#/jobs/3``) and native
ES modules: no build step, no server-side templates, and no route of its own beyond the page and
its files. Its requests carry the user's API key like any other client; the files themselves are
public, so the page can load and ask for the key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from starlette.responses import Response

STATIC_DIR = Path(__file__).parent / "static"
ASSETS_PATH = "/console"

# Everything from this origin and nothing else: no CDN, no inline script, no framing (a page that
# holds an API key must not be clickjacked). blob: images are the downloaded study figures.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
_PAGE_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    # Revalidate on every load (a cheap 304): after an upgrade the browser runs the new scripts.
    "Cache-Control": "no-cache",
}

router = APIRouter(include_in_schema=False)


@router.api_route("/", methods=["GET", "HEAD"])
def console_page() -> FileResponse:
    return FileResponse(STATIC_DIR / "index.html", headers=_PAGE_HEADERS)


class _ConsoleFiles(StaticFiles):
    def file_response(self, *args: Any, **kwargs: Any) -> Response:
        response = super().file_response(*args, **kwargs)
        response.headers.update(_PAGE_HEADERS)
        return response


def install_console(app: FastAPI) -> None:
    """Serve the console: the page at ``/`` and its files under ``/console/`` (no API key)."""
    app.include_router(router)
    app.mount(ASSETS_PATH, _ConsoleFiles(directory=STATIC_DIR), name="console")
