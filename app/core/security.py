"""Bearer API keys, and the rule that a server reachable from the network needs them."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from app.core.config import Settings
from app.core.errors import ProblemError

ANONYMOUS = "anonymous"
_bearer = HTTPBearer(auto_error=False, description="One of the keys in PGS_API_KEYS")


def principal_of(key: str) -> str:
    """A stable, non-secret name for a key (idempotency keys are scoped by it)."""
    return "key:" + hashlib.sha256(key.encode()).hexdigest()[:16]


async def require_api_key(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> str:
    """The caller's principal; 401 without a bearer token, 403 with an unknown one."""
    keys: frozenset[str] = request.app.state.settings.api_key_set
    if not keys:
        return ANONYMOUS
    if credentials is None:
        raise ProblemError(
            401, "send 'Authorization: Bearer <key>'", kind="unauthorized",
            headers={"WWW-Authenticate": "Bearer"},
        )
    given = credentials.credentials.encode()
    # Compare against every key in constant time, so timing does not reveal a near match.
    matches = [k for k in keys if hmac.compare_digest(given, k.encode())]
    if not matches:
        raise ProblemError(403, "the API key is not valid", kind="forbidden")
    return principal_of(matches[0])


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
    if is_loopback(settings.host) or settings.api_key_set or settings.allow_anonymous:
        return
    raise BindRefused(
        f"refusing to listen on {settings.host}:{settings.port} without authentication: set "
        "PGS_API_KEYS (comma-separated keys), bind to 127.0.0.1, or set PGS_ALLOW_ANONYMOUS=1"
    )
