"""The download of a URL import: its bytes streamed into the uploads area before the parse.

The upload service runs it outside the parse slots, a few at a time per owner
(app/background/upload_service.py), so a slow source delays only its own import. It is bounded
in size (the cap), in time (PGS_IMPORT_DEADLINE_S) and in rate: from the start, each window of
PGS_IMPORT_RATE_WINDOW_S must bring PGS_IMPORT_MIN_BYTES_PER_S x the window's length (the first
window is the grace for connecting and the first bytes). Redirects are followed by hand, each
hop checked against the roots as the source itself was (import_urls.py).

An error quotes no byte of what the source sent (a body, a status line, a reason phrase): only
the status code with its standard phrase, or the kind of failure.
"""

from __future__ import annotations

import os
from http import HTTPStatus
from pathlib import Path

import anyio
import httpx

from app.core.config import Settings
from app.core.errors import ProblemError
from app.services.datasets import import_urls
from app.services.datasets.import_urls import HttpUrl
from app.services.datasets.imports import ImportRoots, refused

MAX_REDIRECTS = 5
# A host that does not take the connection is reported as such (502) after this long, unless
# the pace below ends the download first; the pace bounds every other wait.
CONNECT_TIMEOUT_S = 30.0
# Servers send the bytes as they are: the cap and the pace count what crosses the network.
HEADERS = {"Accept-Encoding": "identity"}


class Pace:
    """The download's deadline and minimum rate, both kept by one cancel scope whose deadline is
    the next moment either could be broken: a read that waits past it is cancelled, wherever it
    waits (connecting, the answer's headers, the body)."""

    def __init__(self, settings: Settings, now: float) -> None:
        self.deadline_s = settings.import_deadline_s
        self.min_bytes_per_s = settings.import_min_bytes_per_s
        self.window_s = settings.import_rate_window_s
        self.deadline = now + self.deadline_s
        self.window_end = now + self.window_s
        self.window_bytes = 0
        self.received = 0
        self.scope = anyio.CancelScope(deadline=min(self.deadline, self.window_end))

    def add(self, size: int, now: float) -> None:
        """``size`` more bytes arrived: the scope now fires at the end of the first window (the
        current one or, once it has its bytes, the next) that is short of them."""
        self.received += size
        if now >= self.window_end:  # the window that ended had its bytes, or the scope had fired
            self.window_end += self.window_s
            self.window_bytes = 0
        self.window_bytes += size
        full = self.window_bytes >= self.min_bytes_per_s * self.window_s
        self.scope.deadline = min(self.deadline, self.window_end + (self.window_s if full else 0.0))

    def broken(self, now: float) -> ProblemError:
        """Why the scope fired."""
        if now >= self.deadline:
            why = f"the download took longer than {self.deadline_s:g} s (PGS_IMPORT_DEADLINE_S)"
        else:
            why = (
                f"the download was slower than {self.min_bytes_per_s} bytes/s over "
                f"{self.window_s:g} s (PGS_IMPORT_MIN_BYTES_PER_S, PGS_IMPORT_RATE_WINDOW_S)"
            )
        return ProblemError(
            504, f"{why}; {self.received} bytes had arrived, none are kept", kind="import-too-slow"
        )


def download(settings: Settings, source: str, target: Path, cap: int) -> int:
    """Stream ``source`` (an http(s) URL as check_source returned it) into ``target``, at most
    ``cap`` bytes; returns the size.

    Problems: 403 for a redirect out of the roots (or to no http(s) URL), 413 past the cap, 502
    when the source answers an error, cannot be reached or redirects too often, 504 past the
    deadline or under the rate.
    """
    return anyio.run(_download, settings, import_urls.parse(source), target, cap)


async def _download(settings: Settings, url: HttpUrl, target: Path, cap: int) -> int:
    pace = Pace(settings, anyio.current_time())
    with pace.scope:
        async with httpx.AsyncClient(
            timeout=httpx.Timeout(None, connect=CONNECT_TIMEOUT_S),
            follow_redirects=False,
            trust_env=False,
            headers=HEADERS,
        ) as http:
            return await _follow(http, ImportRoots.of(settings), url, target, cap, pace)
    raise pace.broken(anyio.current_time())


async def _follow(
    http: httpx.AsyncClient, roots: ImportRoots, url: HttpUrl, target: Path, cap: int, pace: Pace
) -> int:
    for _ in range(MAX_REDIRECTS + 1):
        try:
            async with http.stream("GET", str(url)) as response:
                if response.is_redirect:
                    url = _redirect(roots, url, response.headers.get("location", ""))
                    continue
                if response.status_code != 200:
                    raise _failed(f"the source answered {_status(response.status_code)}")
                return await _save(response, target, cap, pace)
        except httpx.HTTPError as exc:
            # The kind only: the messages of some (a malformed status line) quote the answer.
            raise _failed(f"the source could not be read ({type(exc).__name__})") from exc
    raise _failed(f"the source redirected more than {MAX_REDIRECTS} times")


def _redirect(roots: ImportRoots, current: HttpUrl, location: str) -> HttpUrl:
    try:
        url = import_urls.follow(current, location)
    except import_urls.BadUrl as exc:
        raise refused(f"the source redirects to a URL that is not fetched: {exc}") from None
    if not roots.allows_url(url):
        raise refused(f"the source redirects to {url}, outside the import roots (PGS_IMPORT_ROOTS)")
    return url


async def _save(response: httpx.Response, target: Path, cap: int, pace: Pace) -> int:
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise _too_large(cap)
    size = 0
    # Plain writes: this event loop serves this download only.
    with open(target, "wb") as fh:
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > cap:
                raise _too_large(cap)
            fh.write(chunk)
            pace.add(len(chunk), anyio.current_time())
        fh.flush()
        os.fsync(fh.fileno())
    return size


def _status(code: int) -> str:
    try:
        return f"{code} {HTTPStatus(code).phrase}"
    except ValueError:
        return str(code)


def _failed(detail: str) -> ProblemError:
    return ProblemError(502, detail, kind="import-failed")


def _too_large(cap: int) -> ProblemError:
    return ProblemError(
        413,
        f"the source is larger than {cap} bytes (PGS_MAX_UPLOAD_BYTES, or "
        "what is left of PGS_UPLOAD_QUOTA_BYTES)",
        kind="payload-too-large",
    )
