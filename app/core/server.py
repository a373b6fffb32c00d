"""uvicorn's HTTP/1.1 protocol with a deadline for a request's headers and a bound on each
client's connections, the server options, and the server that tells long polls it is stopping.

uvicorn (0.54) closes idle keep-alive connections (``timeout_keep_alive``) and caps the size of a
request head (``h11_max_incomplete_event_size``), but sets no timer until a first response: a
client that connects and sends nothing, or trickles its headers, holds the connection forever
(the keep-alive timer is also cancelled by every byte received). Nor does it bound one client:
its only bound, ``limit_concurrency``, is everyone's, so one address that opens enough slow
connections has every other client refused (503). An ASGI app cannot help, since it is called
only once the headers are complete; both therefore live in the protocol. Bodies are timed by the
app (:class:`app.core.limits.TimedReceive`).

A connection that is done with is closed gently, the way Go's and Apache's servers do: the answer
is sent, then our side of the connection is shut (the client reads the answer and an end of
file), what the client still sends is read and dropped for :data:`LINGER_S`, and only then is the
socket closed. Closing a socket with unread data in it sends a TCP reset instead, and the reset
can destroy the answer before the client has read it.
"""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass
from functools import lru_cache, partial
from types import FrameType
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from app.core.clients import RETRY_AFTER_S, ClientCounts, TrustedProxies, limit_key, too_many_detail
from app.core.config import Settings, get_settings
from app.core.errors import TYPE_PREFIX

# Long enough for the answer and an end of file to reach the client; short enough that
# connections refused in a burst do not pile up.
LINGER_S = 1.0


def _raw_problem(status: int, reason: str, kind: str, detail: str, headers: str = "") -> bytes:
    """A problem+json answer written to the socket as is: h11 cannot answer a request whose head
    it has not seen."""
    body = json.dumps({"type": TYPE_PREFIX + kind, "title": reason, "status": status, "detail": detail})
    return (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/problem+json\r\n{headers}"
        f"connection: close\r\ncontent-length: {len(body)}\r\n\r\n{body}"
    ).encode()


_TIMEOUT_RESPONSE = _raw_problem(
    408,
    "Request Timeout",
    "request-timeout",
    "the request headers did not arrive in time (PGS_HEADER_TIMEOUT_S)",
)


def _too_many_response(limit: int) -> bytes:
    return _raw_problem(
        429,
        "Too Many Requests",
        "too-many-connections",
        too_many_detail(limit),
        f"retry-after: {RETRY_AFTER_S}\r\n",
    )


@dataclass(frozen=True)
class ConnectionLimits:
    header_timeout_s: float
    counts: ClientCounts  # shared by every connection of the server
    proxies: TrustedProxies

    @classmethod
    def of(cls, settings: Settings) -> ConnectionLimits:
        counts = ClientCounts(settings.max_connections_per_client)
        return cls(settings.header_timeout_s, counts, settings.proxies)


@lru_cache(maxsize=1)
def _environment_limits() -> ConnectionLimits:
    """The limits of a server started as ``uvicorn --http app.core.server:ClientLimitsProtocol``,
    from the PGS_* environment; ``python -m app`` passes its own (:func:`uvicorn_options`)."""
    return ConnectionLimits.of(get_settings())


class ClientLimitsProtocol(H11Protocol):
    """uvicorn's h11 protocol with three bounds on what a client holds:

    - a request's headers must be complete ``header_timeout_s`` after the connection opened or
      the previous response ended, else the client gets a 408 and the connection is closed;
    - a client (not a trusted proxy) may hold ``counts.limit`` connections; one more gets a 429
      with Retry-After as soon as it connects, and is closed;
    - an answer sent before its request's body was read (a 401 or 403 to a keyless upload, a 413)
      closes the connection: uvicorn would otherwise read and drop that body for as long as the
      client sends it, and every byte would keep the connection open.

    Usable as ``uvicorn --http app.core.server:ClientLimitsProtocol`` (the limits are then the
    PGS_* environment's); ``python -m app`` uses it.
    """

    def __init__(self, *args: Any, limits: ConnectionLimits | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.limits = limits or _environment_limits()
        self._header_timer: asyncio.TimerHandle | None = None
        self._counted_as: str | None = None
        self._closing = False

    # -- the header deadline

    def _arm_header_timer(self) -> None:
        self._disarm_header_timer()
        self._header_timer = self.loop.call_later(self.limits.header_timeout_s, self._headers_late)

    def _disarm_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self._close_gently(_TIMEOUT_RESPONSE)

    # -- closing

    def _close_gently(self, answer: bytes = b"") -> None:
        """Send ``answer``, shut our side, drop what comes for LINGER_S, then close."""
        self._closing = True
        self._disarm_header_timer()
        # No longer serving: not one of the connections uvicorn's limit_concurrency counts.
        self.connections.discard(self)
        if answer:
            self.transport.write(answer)
        if self.transport.can_write_eof():
            try:
                self.transport.write_eof()
            except OSError:  # the client is already gone (ENOTCONN): nothing to linger for
                self.transport.close()
                return
        self.loop.call_later(LINGER_S, self.transport.close)

    # -- the protocol

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        peer = self.client[0] if self.client else None
        # A trusted proxy carries many clients: they are counted per request, by address
        # (app.core.clients.ProxiedClientMiddleware). A Unix socket has no peer address.
        if peer is None or self.limits.proxies.trusts(peer):
            self._arm_header_timer()
            return
        key = limit_key(peer)
        if not self.limits.counts.take(key):
            self._close_gently(_too_many_response(self.limits.counts.limit))
            return
        self._counted_as = key
        self._arm_header_timer()

    def data_received(self, data: bytes) -> None:
        if self._closing:
            return  # read and dropped: closing with unread data would reset the connection
        super().data_received(data)

    def handle_events(self) -> None:
        super().handle_events()
        if self.conn.their_state is not h11.IDLE:
            self._disarm_header_timer()  # the head is in: the body has the app's own timers

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.transport.is_closing() or self._closing:
            return
        if self.conn.their_state is h11.SEND_BODY:
            # Answered before the body was read: see the class's docstring.
            self._unset_keepalive_if_required()
            self._close_gently()
        else:
            self._arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_timer()
        if self._counted_as is not None:
            self.limits.counts.give_back(self._counted_as)
            self._counted_as = None
        super().connection_lost(exc)


def uvicorn_options(settings: Settings) -> dict[str, Any]:
    """The uvicorn.run() options that bound what slow or numerous clients can hold."""
    return {
        "http": partial(ClientLimitsProtocol, limits=ConnectionLimits.of(settings)),
        # More open connections than this, all clients together, get a 503 (each holds memory
        # and a file descriptor).
        "limit_concurrency": settings.max_connections,
        # uvicorn's default, stated: idle keep-alive connections close after 5 s.
        "timeout_keep_alive": 5,
        # X-Forwarded-For is read by the app, from PGS_TRUSTED_PROXIES only
        # (app.core.clients.ProxiedClientMiddleware); uvicorn would trust 127.0.0.1 by default.
        "proxy_headers": False,
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
