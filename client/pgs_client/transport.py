"""HTTP with the service: authentication, problem+json errors, bounded retries, pagination.

Which failures are retried, and why that never duplicates work:

* a connection that could not be opened (the request never left): always;
* 503 (the service did not do the work: its database is away): always, after ``Retry-After``;
* a connection lost after the request was sent (the service may have done it): only for
  requests that are safe to repeat: reads, deletes, predictions, cancels, and the creating
  POSTs (jobs, data sets, studies), which carry an ``Idempotency-Key``: the service answers the
  retry with what the first request created.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx

from pgs_client.errors import ConnectionFailed, ServiceUnavailable, api_error
from pgs_client.version import VERSION

log = logging.getLogger("pgs_client")

T = TypeVar("T")

# Errors raised before a byte of the request was sent: repeating it cannot do anything twice.
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


@dataclass(frozen=True)
class RetryPolicy:
    """At most ``max_retries`` repeats, waiting ``backoff_s * 2**n`` (with jitter) or the
    service's ``Retry-After``, never more than ``max_wait_s`` at a time."""

    max_retries: int = 4
    backoff_s: float = 0.5
    max_wait_s: float = 30.0

    def wait(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.max_wait_s)
        return min(self.backoff_s * 2**attempt, self.max_wait_s) * random.uniform(0.5, 1.0)


def problem_of(response: httpx.Response) -> dict[str, Any]:
    """The problem+json body, or the text of a body that is not JSON (a proxy's error page)."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        return body
    return {"status": response.status_code, "title": response.reason_phrase, "detail": response.text[:1000]}


class Transport:
    """One ``httpx.Client`` against the service's base URL."""

    def __init__(self, url: str, api_key: str | None, timeout: float, retry: RetryPolicy):
        headers = {"User-Agent": f"pgs-client/{VERSION}"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self.url = url.rstrip("/")
        self.retry = retry
        self._http = httpx.Client(base_url=self.url, headers=headers, timeout=timeout)

    def close(self) -> None:
        self._http.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        safe: bool,
        idempotency_key: str | None = None,
        build: Callable[[], dict[str, Any]] | None = None,
        **kwargs: Any,
    ) -> httpx.Response:
        """Send, retrying as the module docstring says; an error status raises
        :class:`~pgs_client.errors.ApiError`.

        ``safe``: repeating the request after the connection dropped cannot duplicate work.
        ``build``: returns more httpx arguments for each attempt (a fresh file to stream).
        """
        if idempotency_key is not None:
            kwargs["headers"] = {**kwargs.get("headers", {}), "Idempotency-Key": idempotency_key}
        repeatable = safe or idempotency_key is not None
        attempt = 0
        while True:
            try:
                response = self._http.request(method, path, **kwargs, **(build() if build else {}))
            except httpx.TransportError as exc:
                if attempt >= self.retry.max_retries or not (repeatable or isinstance(exc, _NOT_SENT)):
                    raise ConnectionFailed(f"{method} {self.url}{path}: {exc!r}") from exc
                delay = self.retry.wait(attempt, None)
                log.warning("%s %s: %r; retrying in %.1f s", method, path, exc, delay)
            else:
                if response.status_code < 400:
                    return response
                error = api_error(response.status_code, problem_of(response), dict(response.headers))
                if not isinstance(error, ServiceUnavailable) or attempt >= self.retry.max_retries:
                    raise error
                delay = self.retry.wait(attempt, error.retry_after)
                log.warning("%s %s: 503 %s; retrying in %.1f s", method, path, error.detail, delay)
            time.sleep(delay)
            attempt += 1

    def get(self, path: str, **kwargs: Any) -> Any:
        return self.request("GET", path, safe=True, **kwargs).json()

    def download(self, path: str, target: Path, **kwargs: Any) -> Path:
        """GET ``path`` into the file ``target`` as it arrives (never whole in memory)."""
        with self._http.stream("GET", path, **kwargs) as response:
            if response.status_code >= 400:
                response.read()
                raise api_error(response.status_code, problem_of(response), dict(response.headers))
            with target.open("wb") as fh:
                for chunk in response.iter_bytes(1 << 20):
                    fh.write(chunk)
        return target

    def pages(
        self,
        path: str,
        parse: Callable[[dict[str, Any]], T],
        limit: int | None,
        page_size: int,
        **params: Any,
    ) -> Iterator[T]:
        """Every item of a cursor-paginated listing (newest first), fetched a page at a time;
        at most ``limit`` items when given."""
        cursor: str | None = None
        left = limit
        while left is None or left > 0:
            size = page_size if left is None else min(page_size, left)
            query = {k: v for k, v in {**params, "limit": size, "cursor": cursor}.items() if v is not None}
            page = self.get(path, params=query)
            for item in page["items"]:
                yield parse(item)
            if left is not None:
                left -= len(page["items"])
            cursor = page["next_cursor"]
            if cursor is None:
                return
