"""Who a request's client is, and how much of the server one client may hold at once.

The client is the connection's peer, unless the peer is one of ``PGS_TRUSTED_PROXIES``: then it
is the right-most address of ``X-Forwarded-For`` that is not a trusted proxy (each proxy appends
the address it was reached from, so everything left of the last untrusted hop is whatever the
client chose to write). From any other peer the header is ignored: a client cannot spoof its way
out of its own limit.

``PGS_MAX_CONNECTIONS_PER_CLIENT`` bounds what one client holds, counted where it is known:

- a direct client by its open connections, in the HTTP protocol (app/core/server.py), as soon as
  it connects: a client that opens many and trickles headers or bodies is refused before it has
  sent a byte, and never reaches the server's own ceiling (PGS_MAX_CONNECTIONS);
- a client behind a trusted proxy by its requests in flight (:class:`ProxiedClientMiddleware`):
  its address is only known once the headers are parsed, and a proxy carries many clients over
  its connections, so these are not counted against the proxy.

An IPv6 client is counted by its /64, the block one host is usually given: per address, a single
host could take as many slots as it likes.
"""

from __future__ import annotations

import ipaddress
from collections import Counter

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from app.core.errors import problem_response

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
# How long a client told it holds too many should wait: one of its requests usually ends by then.
RETRY_AFTER_S = 1
# A hop of X-Forwarded-For that is not an address (a proxy's "unknown", junk) is kept, cut short:
# it is still a distinct client, but not an unbounded key.
_MAX_HOP_CHARS = 64


def parse_networks(spec: str) -> tuple[Network, ...]:
    """The networks of a comma-separated list of addresses and CIDR blocks; ValueError names an
    entry that is neither."""
    networks = []
    for entry in (e.strip() for e in spec.split(",")):
        if not entry:
            continue
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            raise ValueError(f"{entry!r} is not an IP address or a CIDR block") from None
    return tuple(networks)


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """An address as a peer or a proxy writes it: ``1.2.3.4``, ``1.2.3.4:5678``, ``::1`` or
    ``[::1]:5678``; None for anything else."""
    text = text.strip()
    if text.startswith("["):
        text = text[1:].split("]", 1)[0]
    elif text.count(":") == 1:
        text = text.split(":", 1)[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


class TrustedProxies:
    def __init__(self, networks: tuple[Network, ...]) -> None:
        self.networks = networks

    def __bool__(self) -> bool:
        return bool(self.networks)

    def trusts(self, host: str) -> bool:
        address = _address(host)
        return address is not None and any(address in n for n in self.networks)

    def client_of(self, peer: str, forwarded_for: list[str]) -> str:
        """The client's address: ``peer`` itself unless it is a trusted proxy; then the
        right-most hop of the ``X-Forwarded-For`` values that is not a trusted proxy (the
        left-most if all are)."""
        if not self.trusts(peer):
            return peer
        hops = [h.strip() for value in forwarded_for for h in value.split(",") if h.strip()]
        for hop in reversed(hops):
            if not self.trusts(hop):
                return _canonical(hop)
        return _canonical(hops[0]) if hops else peer


def _canonical(hop: str) -> str:
    address = _address(hop)
    return str(address) if address is not None else hop[:_MAX_HOP_CHARS]


def limit_key(client: str) -> str:
    """What a client is counted by: its IPv4 address, or its IPv6 /64."""
    address = _address(client)
    if isinstance(address, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address) if address is not None else client


class ClientCounts:
    """How many slots each client holds, at most ``limit`` each. Used from one event loop."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._held: Counter[str] = Counter()

    def take(self, client: str) -> bool:
        """Count one more for ``client`` if it holds fewer than the limit; False if not."""
        if self._held[client] >= self.limit:
            return False
        self._held[client] += 1
        return True

    def give_back(self, client: str) -> None:
        self._held[client] -= 1
        if self._held[client] <= 0:
            del self._held[client]

    def held(self, client: str) -> int:
        return self._held[client]


def too_many_detail(limit: int) -> str:
    return (
        f"this client already holds {limit} connections or requests (PGS_MAX_CONNECTIONS_PER_CLIENT); "
        "retry when one has ended"
    )


class ProxiedClientMiddleware:
    """Puts the client's address into the scope (``scope["client"]``: logs, the audit trail and
    the access log see it) and bounds the requests in flight of each client behind a trusted
    proxy (429 with Retry-After). A direct client is bounded by its connections instead."""

    def __init__(self, app: ASGIApp, proxies: TrustedProxies, per_client: int) -> None:
        self.app = app
        self.proxies = proxies
        self.counts = ClientCounts(per_client)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        peer = scope.get("client")
        if scope["type"] != "http" or not peer or not self.proxies.trusts(peer[0]):
            await self.app(scope, receive, send)
            return
        client = self.proxies.client_of(peer[0], Headers(scope=scope).getlist("x-forwarded-for"))
        scope["client"] = (client, 0)  # the port a proxy saw is not passed on
        key = limit_key(client)
        if not self.counts.take(key):
            response = problem_response(
                Request(scope),
                429,
                too_many_detail(self.counts.limit),
                kind="too-many-connections",
                headers={"Retry-After": str(RETRY_AFTER_S)},
            )
            await response(scope, receive, send)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self.counts.give_back(key)
