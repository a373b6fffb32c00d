"""``/docs``: Swagger UI on the service's own OpenAPI document, with its scripts and styles served
from the package (``static/``, vendored from npm; ``static/VERSION`` says which and how), so the
page works where there is no internet and asks no CDN for anything.

ReDoc is turned off (``redoc_url=None`` in app/main.py): one documentation page is enough, and its
script would have to be vendored too.
"""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.openapi.docs import get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.staticfiles import StaticFiles
from starlette.responses import HTMLResponse

STATIC_DIR = Path(__file__).parent / "static"
DOCS_PATH = "/docs"
ASSETS_PATH = "/docs/assets"
OAUTH2_REDIRECT_PATH = "/docs/oauth2-redirect"

router = APIRouter(include_in_schema=False)

_INLINE_SCRIPT = re.compile(rb"<script>(.*?)</script>", re.DOTALL)


def with_policy(page: HTMLResponse) -> HTMLResponse:
    """The page with a Content-Security-Policy like the console's: the key typed into Swagger
    UI's Authorize dialog stays in a page that loads scripts from this origin only (the inline
    script that starts Swagger UI is allowed by its hash), cannot be framed, and sends nothing
    to another site. Swagger UI sets inline styles, which the policy allows: they run no code."""
    hashes = " ".join(
        f"'sha256-{base64.b64encode(hashlib.sha256(script).digest()).decode()}'"
        for script in _INLINE_SCRIPT.findall(page.body)
    )
    page.headers["Content-Security-Policy"] = (
        f"default-src 'self'; script-src 'self' {hashes}; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
        "form-action 'self'; frame-ancestors 'none'"
    )
    page.headers["X-Content-Type-Options"] = "nosniff"
    page.headers["Referrer-Policy"] = "no-referrer"
    return page


@router.get(DOCS_PATH)
def swagger_ui() -> HTMLResponse:
    return with_policy(
        get_swagger_ui_html(
            openapi_url="/openapi.json",
            title="PGS service - API",
            swagger_js_url=f"{ASSETS_PATH}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS_PATH}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS_PATH}/favicon-32x32.png",
            oauth2_redirect_url=OAUTH2_REDIRECT_PATH,
            # Swagger UI would otherwise send the document to validator.swagger.io for a badge.
            swagger_ui_parameters={"validatorUrl": None},
        )
    )


@router.get(OAUTH2_REDIRECT_PATH)
def swagger_ui_redirect() -> HTMLResponse:
    return with_policy(get_swagger_ui_oauth2_redirect_html())


def install_docs(app: FastAPI) -> None:
    """Serve /docs and its assets (no API key: the page asks for one, like the console)."""
    app.include_router(router)
    app.mount(ASSETS_PATH, StaticFiles(directory=STATIC_DIR), name="docs-assets")
