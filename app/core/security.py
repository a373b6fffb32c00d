"""Bearer API keys, the rules for a server without them, and who may read /metrics."""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from app.core.config import Settings
from app.core.errors import ProblemError, problem_response
from app.core.tenants import ANONYMOUS, Caller, KeyRing

_bearer = HTTPBearer(auto_error=False, description="One of the keys of PGS_API_KEYS or PGS_API_KEYS_FILE")
# What a reader key may do besides reading: predict with its owner's models.
_READER_WRITES = re.compile(r"^/v1/models/[^/]+/predict$")


def authenticate(keyring: KeyRing, headers: Headers) -> Caller:
    """The caller a request's bearer key is; 401 without one, 403 with an unknown one."""
    if not keyring.enabled:
        return ANONYMOUS
    scheme, _, token = headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ProblemError(
            401,
            "send 'Authorization: Bearer <key>'",
            kind="unauthorized",
            headers={"WWW-Authenticate": "Bearer"},
        )
    caller = keyring.caller_for(token.strip())
    if caller is None:
        raise ProblemError(403, "the API key is not valid", kind="forbidden")
    return caller


def check_role(caller: Caller, method: str, path: str) -> None:
    """403 for a reader's write (anything but a read or a prediction)."""
    if caller.role == "reader" and method not in SAFE_METHODS and not _READER_WRITES.match(path):
        raise ProblemError(
            403, "this API key is a reader's: it reads and predicts, and changes nothing", kind="forbidden"
        )


class AuthMiddleware:
    """Authenticates every /v1 request before anything reads its body: a caller without a valid
    key is answered at once and holds no connection while it trickles a body in. The caller goes
    into the request's state for :func:`current_caller`."""

    def __init__(self, app: ASGIApp, keyring: KeyRing) -> None:
        self.app = app
        self.keyring = keyring

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/v1/"):
            try:
                caller = authenticate(self.keyring, Headers(scope=scope))
                check_role(caller, scope["method"], scope["path"])
            except ProblemError as problem:
                response = problem_response(
                    Request(scope), problem.status, problem.detail, kind=problem.kind, headers=problem.headers
                )
                await response(scope, receive, send)
                return
            scope.setdefault("state", {})["caller"] = caller
        await self.app(scope, receive, send)


async def current_caller(
    request: Request,
    # Declares the bearer scheme in the OpenAPI document; AuthMiddleware has checked the key.
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Caller:
    caller: Caller = request.state.caller
    return caller


class BindRefused(RuntimeError):
    pass


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve to anything


def check_bind(settings: Settings) -> None:
    """Refuse to listen beyond loopback without API keys unless PGS_ALLOW_ANONYMOUS=1."""
    if is_loopback(settings.host) or settings.auth_enabled or settings.allow_anonymous:
        return
    raise BindRefused(
        f"refusing to listen on {settings.host}:{settings.port} without authentication: set "
        "PGS_API_KEYS or PGS_API_KEYS_FILE, bind to 127.0.0.1, or set PGS_ALLOW_ANONYMOUS=1"
    )


# -- without keys: loopback only, the server's own Host, same-origin writes ---------------------

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def _host_name(value: str) -> str:
    """``host[:port]`` or ``[v6]:port`` without the port, lower case."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:].split("]", 1)[0]
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _origin_host(origin: str) -> str | None:
    """The ``host[:port]`` of an Origin header; None for "null" or anything unparsable."""
    scheme, sep, rest = origin.partition("://")
    return rest.lower() if sep and scheme in ("http", "https") and rest else None


class NetworkGuardMiddleware:
    """The rules for a server without API keys, in the app itself (not only in ``python -m app``,
    so ``uvicorn app.main:create_app --factory --host 0.0.0.0`` obeys them too):

    - a connection to a non-loopback address is refused (403) unless PGS_ALLOW_ANONYMOUS=1;
    - the Host header must be the server's own address, a loopback name or one of
      PGS_ALLOWED_HOSTS (400): a DNS-rebinding page reaches 127.0.0.1 under its own name;
    - a write (any method but GET/HEAD/OPTIONS) from a browser page of another origin is refused
      (403): a cross-site form can POST multipart or text/plain without a CORS preflight.

    With keys none of this applies: a page cannot attach a bearer key by itself. The connection's
    own address comes from the ASGI scope; a server name that is not an IP address (an in-process
    test transport, a Unix socket) is local by construction.
    """

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.settings = settings
        self.allowed_hosts = LOOPBACK_NAMES | settings.allowed_host_set

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self.settings.auth_enabled:
            problem = self._problem(scope)
            if problem is not None:
                response = problem_response(Request(scope), problem.status, problem.detail, kind=problem.kind)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def _problem(self, scope: Scope) -> ProblemError | None:
        server_host = str((scope.get("server") or ("", None))[0]).lower()
        if (
            _is_ip(server_host)
            and not ipaddress.ip_address(server_host).is_loopback
            and not self.settings.allow_anonymous
        ):
            return ProblemError(
                403,
                "this server has no API keys and answers loopback clients "
                "only: set PGS_API_KEYS (or PGS_ALLOW_ANONYMOUS=1)",
                kind="forbidden",
            )
        headers = Headers(scope=scope)
        host = _host_name(headers.get("host", ""))
        if host != server_host and host not in self.allowed_hosts:
            return ProblemError(
                400,
                f"the Host {host!r} is not this server's: without API keys "
                "only its own address, localhost or PGS_ALLOWED_HOSTS are served",
                kind="invalid-host",
            )
        if scope["method"] not in SAFE_METHODS and self._cross_origin(headers):
            return ProblemError(
                403,
                "a write from a page of another origin; without API keys "
                "only same-origin pages and non-browser clients may write",
                kind="cross-origin",
            )
        return None

    def _cross_origin(self, headers: Headers) -> bool:
        if headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
            return True
        origin = headers.get("origin")
        return origin is not None and _origin_host(origin) != headers.get("host", "").lower()


# -- /metrics ------------------------------------------------------------------------------------


async def metrics_access(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> None:
    """PGS_METRICS_ACCESS: "public", "key" (a key, when keys are set) or "off" (404)."""
    access = request.app.state.settings.metrics_access
    if access == "off":
        raise ProblemError(404, "metrics are turned off (PGS_METRICS_ACCESS=off)", kind="not-found")
    if access == "key":
        authenticate(request.app.state.keyring, request.headers)
