"""The download of a URL import: its bytes streamed into the uploads area, cut at a size cap.

Redirects are followed by hand, each hop checked against the roots as the source itself was
(import_urls.py).

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
# Connecting and each read may take this long; the whole transfer has only the size cap.
FETCH_TIMEOUT_S = 30.0
# Servers send the bytes as they are: the cap counts what crosses the network.
HEADERS = {"Accept-Encoding": "identity"}


def download(settings: Settings, source: str, target: Path, cap: int) -> int:
    """Stream ``source`` (an http(s) URL as check_source returned it) into ``target``, at most
    ``cap`` bytes; returns the size.

    Problems: 403 for a redirect out of the roots (or to no http(s) URL), 413 past the cap, 502
    when the source answers an error, cannot be reached or redirects too often.
    """
    return anyio.run(_download, settings, import_urls.parse(source), target, cap)


async def _download(settings: Settings, url: HttpUrl, target: Path, cap: int) -> int:
    async with httpx.AsyncClient(
        timeout=FETCH_TIMEOUT_S, follow_redirects=False, trust_env=False, headers=HEADERS
    ) as http:
        return await _follow(http, ImportRoots.of(settings), url, target, cap)


async def _follow(http: httpx.AsyncClient, roots: ImportRoots, url: HttpUrl, target: Path, cap: int) -> int:
    for _ in range(MAX_REDIRECTS + 1):
        try:
            async with http.stream("GET", str(url)) as response:
                if response.is_redirect:
                    url = _redirect(roots, url, response.headers.get("location", ""))
                    continue
                if response.status_code != 200:
                    raise _failed(f"the source answered {_status(response.status_code)}")
                return await _save(response, target, cap)
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


async def _save(response: httpx.Response, target: Path, cap: int) -> int:
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
