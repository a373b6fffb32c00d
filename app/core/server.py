"""uvicorn's HTTP/1.1 protocol with a deadline for a request's headers, the server options, and
the server that tells long polls it is stopping.

uvicorn (0.54) closes idle keep-alive connections (``timeout_keep_alive``) and caps the size of a
request head (``h11_max_incomplete_event_size``), but sets no timer until a first response: a
client that connects and sends nothing, or trickles its headers, holds the connection forever
(the keep-alive timer is also cancelled by every byte received). An ASGI app cannot help, since it
is called only once the headers are complete; the deadline therefore lives in the protocol.
Bodies are timed by the app (:class:`app.core.limits.TimedReceive`).
"""

from __future__ import annotations

import asyncio
import json
import threading
from functools import partial
from types import FrameType
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from app.core.config import Settings, get_settings

_TIMEOUT_BODY = json.dumps(
    {
        "type": "urn:pgs:problem:request-timeout",
        "title": "Request Timeout",
        "status": 408,
        "detail": "the request headers did not arrive in time (PGS_HEADER_TIMEOUT_S)",
    }
).encode()
# Written raw: h11 cannot send a response to a request whose head it has not seen.
_TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/problem+json\r\n"
    b"connection: close\r\ncontent-length: %d\r\n\r\n%s" % (len(_TIMEOUT_BODY), _TIMEOUT_BODY)
)


class HeaderTimeoutProtocol(H11Protocol):
    """A request's headers must be complete ``header_timeout_s`` after the connection opened or
    the previous response ended, else the client gets a 408 and the connection is closed.

    Usable as ``uvicorn --http app.core.server:HeaderTimeoutProtocol`` (the timeout is then
    PGS_HEADER_TIMEOUT_S); ``python -m app`` uses it.
    """

    def __init__(self, *args: Any, header_timeout_s: float | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.header_timeout_s = (
            header_timeout_s if header_timeout_s is not None else get_settings().header_timeout_s
        )
        self._header_timer: asyncio.TimerHandle | None = None

    def _arm_header_timer(self) -> None:
        self._disarm_header_timer()
        self._header_timer = self.loop.call_later(self.header_timeout_s, self._headers_late)

    def _disarm_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.write(_TIMEOUT_RESPONSE)
            self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_header_timer()

    def handle_events(self) -> None:
        super().handle_events()
        if self.conn.their_state is not h11.IDLE:
            self._disarm_header_timer()  # the head is in: the body has the app's own timers

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_timer()
        super().connection_lost(exc)


def uvicorn_options(settings: Settings) -> dict[str, Any]:
    """The uvicorn.run() options that bound what slow or numerous clients can hold."""
    return {
        "http": partial(HeaderTimeoutProtocol, header_timeout_s=settings.header_timeout_s),
        # More open connections than this get a 503 (each holds memory and a file descriptor).
        "limit_concurrency": settings.max_connections,
        # uvicorn's default, stated: idle keep-alive connections close after 5 s.
        "timeout_keep_alive": 5,
    }


# Set when ``python -m app`` begins its graceful shutdown. uvicorn then waits for every open request
# before it stops the app, so a long poll (GET /v1/jobs/{id}?wait=) answers at once instead of
# holding the shutdown for the rest of its wait.
SHUTTING_DOWN = threading.Event()


class Server(uvicorn.Server):
    """uvicorn's server, which sets :data:`SHUTTING_DOWN` on the signal that stops it."""

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        SHUTTING_DOWN.set()
        super().handle_exit(sig, frame)
