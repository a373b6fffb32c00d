"""Server-side imports: a data set read from a directory or URL prefix the operator allows
(PGS_IMPORT_ROOTS) instead of sent over HTTP.

A path must resolve (symlinks and ``..`` followed) to a regular file inside an allowed directory;
a URL must start with an allowed prefix, and so must every redirect it takes (each hop is checked
before it is followed). A URL is fetched streaming to the uploads dir, cut at a size cap.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import httpx

from app.core.config import Settings
from app.core.errors import ProblemError, field_error

URL_SCHEMES = ("http://", "https://")
MAX_REDIRECTS = 5
CHUNK_BYTES = 1024 * 1024
# Connecting and each read may take this long; the whole transfer has only the size cap.
FETCH_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class ImportRoots:
    directories: tuple[Path, ...]
    url_prefixes: tuple[str, ...]

    @classmethod
    def of(cls, settings: Settings) -> ImportRoots:
        entries = [e.strip() for e in settings.import_roots.split(",") if e.strip()]
        urls = tuple(e for e in entries if e.lower().startswith(URL_SCHEMES))
        dirs = tuple(Path(_local(e)).expanduser().resolve() for e in entries if e not in urls)
        return cls(dirs, urls)

    def allows_url(self, url: str) -> bool:
        return any(url.startswith(prefix) for prefix in self.url_prefixes)


def _local(entry: str) -> str:
    return unquote(urlsplit(entry).path) if entry.startswith("file://") else entry


def _refused(detail: str, status: int = 403) -> ProblemError:
    return ProblemError(
        status, detail, kind="import-refused", errors=[field_error(["body", "source"], detail)]
    )


def check_source(settings: Settings, source: str) -> str:
    """The source to import: a resolved path inside an allowed directory, or an allowed URL.

    403 when imports are off or the source is outside every root; 422 for a path that is not a
    file.
    """
    roots = ImportRoots.of(settings)
    if not roots.directories and not roots.url_prefixes:
        raise _refused("server-side imports are off: the operator allows none (PGS_IMPORT_ROOTS is empty)")
    if source.lower().startswith(URL_SCHEMES):
        if not roots.allows_url(source):
            raise _refused("the URL is outside the import roots (PGS_IMPORT_ROOTS)")
        return source
    if "://" in source and not source.startswith("file://"):
        raise _refused("import from a path, a file:// URL or an http(s) URL", 422)
    path = Path(_local(source))
    if not path.is_absolute():
        raise _refused("give the path to import as an absolute path", 422)
    # strict=False: a missing file is reported below as such, not as a path escape.
    resolved = path.resolve()
    if not any(root == resolved or root in resolved.parents for root in roots.directories):
        raise _refused(
            "the path is outside the import roots (PGS_IMPORT_ROOTS), after "
            "following its symbolic links and '..'"
        )
    if not resolved.is_file():
        raise _refused(f"{source} is not a file the server can read", 422)
    return str(resolved)


def is_url(source: str) -> bool:
    return source.lower().startswith(URL_SCHEMES)


def fetch(settings: Settings, url: str, target: Path, cap: int) -> int:
    """Stream ``url`` into ``target`` (at most ``cap`` bytes); returns the size.

    Redirects are followed by hand, each checked against the roots first. Problems: 403 for a
    redirect out of the roots, 413 past the cap, 502 when the source answers an error or cannot
    be reached.
    """
    roots = ImportRoots.of(settings)
    with httpx.Client(timeout=FETCH_TIMEOUT_S, follow_redirects=False, trust_env=False) as http:
        for _ in range(MAX_REDIRECTS + 1):
            try:
                with http.stream("GET", url) as response:
                    if response.is_redirect:
                        url = urljoin(url, response.headers.get("location", ""))
                        if not roots.allows_url(url):
                            raise _refused(
                                f"the source redirects to {url}, outside the import roots (PGS_IMPORT_ROOTS)"
                            )
                        continue
                    if response.status_code != 200:
                        raise ProblemError(
                            502, f"the source answered {response.status_code}", kind="import-failed"
                        )
                    return _save(response, target, cap)
            except httpx.HTTPError as exc:
                raise ProblemError(502, f"the source could not be read: {exc}", kind="import-failed") from exc
    raise ProblemError(502, f"the source redirected more than {MAX_REDIRECTS} times", kind="import-failed")


def _save(response: httpx.Response, target: Path, cap: int) -> int:
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise _too_large(cap)
    size = 0
    with open(target, "wb") as fh:
        for chunk in response.iter_bytes(CHUNK_BYTES):
            size += len(chunk)
            if size > cap:
                raise _too_large(cap)
            fh.write(chunk)
        fh.flush()
        os.fsync(fh.fileno())
    return size


def _too_large(cap: int) -> ProblemError:
    return ProblemError(
        413,
        f"the source is larger than {cap} bytes (PGS_MAX_UPLOAD_BYTES, or "
        "what is left of PGS_UPLOAD_QUOTA_BYTES)",
        kind="payload-too-large",
    )
