"""Headers every answer carries unless its route set its own: the browser must not guess a type
other than the one sent, and an API answer opened as a page (a study's SVG figure, a JSON body
that quotes user text) runs nothing and cannot be framed.

The console and /docs set their own, wider policies (app/console, app/docs_ui): those pages run
this origin's scripts.
"""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# Nothing may load or run; the inline <style> of matplotlib's SVG figures may style them.
API_CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"
DEFAULT_HEADERS = {
    "Content-Security-Policy": API_CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
}


class SecurityHeadersMiddleware:
    """Adds :data:`DEFAULT_HEADERS` to every HTTP answer that lacks them (pure ASGI)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in DEFAULT_HEADERS.items():
                    headers.setdefault(name, value)
            await send(message)

        await self.app(scope, receive, send_with_headers)
