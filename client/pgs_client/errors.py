"""Exceptions: one per HTTP status the service answers, built from its problem+json body."""

from __future__ import annotations

from typing import Any


class PgsError(Exception):
    """Base class of every error this package raises."""


class ApiError(PgsError):
    """The service answered with an error status.

    ``problem`` is the RFC 9457 body (``type``, ``title``, ``status``, ``detail``, ``instance``
    and, for validation errors, ``errors``); a body that is not problem+json (a proxy's HTML
    page, say) is kept as ``{"detail": <text>}``.
    """

    def __init__(self, status: int, problem: dict[str, Any], headers: dict[str, str] | None = None):
        self.status = status
        self.problem = problem
        self.headers = headers or {}
        super().__init__(f"{status} {self.title}: {self.detail}")

    @property
    def title(self) -> str:
        return str(self.problem.get("title") or "")

    @property
    def detail(self) -> str:
        return str(self.problem.get("detail") or "")

    @property
    def type(self) -> str:
        return str(self.problem.get("type") or "about:blank")

    @property
    def errors(self) -> list[dict[str, Any]]:
        """The fields a validation error names (``loc``, ``field``, ``msg``, ``type``)."""
        return list(self.problem.get("errors") or [])


class AuthError(ApiError):
    """401 (no API key) or 403 (a key the service does not know)."""


class NotFound(ApiError):
    """404."""


class Conflict(ApiError):
    """409: the resource's state forbids it (e.g. deleting a data set a running job uses)."""


class PayloadTooLarge(ApiError):
    """413: a body or a file over the service's limit."""


class ValidationError(ApiError):
    """422: the request names a bad field; ``errors`` says which and why."""


class ServiceUnavailable(ApiError):
    """503: the service cannot answer now (its database is away); retried before raised."""

    @property
    def retry_after(self) -> float | None:
        value = self.headers.get("retry-after")
        return float(value) if value and value.replace(".", "", 1).isdigit() else None


class ConnectionFailed(PgsError):
    """The service could not be reached (after the retries); ``__cause__`` is httpx's error."""


class JobFailed(PgsError):
    """A job ended ``failed``; ``job.error`` is the reason."""

    def __init__(self, job: Any):
        self.job = job
        super().__init__(f"job {job.id} failed: {job.error}")


class JobCancelled(PgsError):
    """A job ended ``cancelled``."""

    def __init__(self, job: Any):
        self.job = job
        super().__init__(f"job {job.id} was cancelled")


class BatchPredictionFailed(PgsError):
    """A batch prediction ended ``failed`` or ``cancelled``; ``batch.error`` says why."""

    def __init__(self, batch: Any):
        self.batch = batch
        super().__init__(f"batch prediction {batch.id} {batch.status}: {batch.error or 'no result'}")


_BY_STATUS: dict[int, type[ApiError]] = {
    401: AuthError,
    403: AuthError,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    422: ValidationError,
    503: ServiceUnavailable,
}


def api_error(status: int, problem: dict[str, Any], headers: dict[str, str]) -> ApiError:
    """The exception for a status: a subclass where one exists, else :class:`ApiError`."""
    return _BY_STATUS.get(status, ApiError)(status, problem, headers)
