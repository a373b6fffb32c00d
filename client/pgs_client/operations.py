"""Which API operations a client method or a ``pgs`` command performs.

Each method and command that sends a request names its operations (``"METHOD /path"``, the
path as the service's OpenAPI document writes it) with :func:`covers`. A test walks the service's
OpenAPI document and fails when an operation has no method or no command that covers it, or when
a name here matches no operation: the client and the command line keep up with the API as it
grows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

# Operations no method or command calls on its own, and why that is complete coverage.
PLUMBING = {
    "OPTIONS /v1/uploads": "tus discovery (versions, extensions, limits) for generic tus clients; "
    "the client speaks the one tus version and the extensions it was written for",
}

# An upload, small or resumable: one form POST, or the tus requests that send a big file in
# parts, then the data set made from them.
UPLOAD_OPERATIONS = (
    "POST /v1/datasets",
    "POST /v1/uploads",
    "HEAD /v1/uploads/{upload_id}",
    "PATCH /v1/uploads/{upload_id}",
    "POST /v1/uploads/{upload_id}/dataset",
    "GET /v1/uploads/{upload_id}",
)


def covers(*operations: str) -> Callable[[F], F]:
    """Mark a function as performing these operations (``"GET /v1/models/{model_id}"``)."""

    def mark(function: F) -> F:
        function.__pgs_operations__ = operations  # type: ignore[attr-defined]
        return function

    return mark


def operations_of(function: Any) -> tuple[str, ...]:
    """The operations a function was marked with (none if unmarked)."""
    return tuple(getattr(function, "__pgs_operations__", ()))
