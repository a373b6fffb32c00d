"""Server-side imports: a data set read from a directory or URL root the operator allows
(PGS_IMPORT_ROOTS) instead of sent over HTTP.

A path must resolve (symlinks and ``..`` followed) to a regular file inside an allowed directory;
a URL, once normalised (import_urls.py), must be one of the allowed roots or below it, and so
must every redirect it takes (download.py checks each hop before following it). A source that
is not a path or URL at all (a NUL or another control character, a malformed port) is a 422.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from app.core.config import Settings
from app.core.errors import ProblemError, field_error, invalid
from app.services.datasets import import_urls
from app.services.datasets.import_urls import HttpUrl

URL_SCHEMES = ("http://", "https://")
SOURCE_FIELD = ["body", "source"]


@dataclass(frozen=True)
class ImportRoots:
    directories: tuple[Path, ...]
    urls: tuple[HttpUrl, ...]

    @classmethod
    def of(cls, settings: Settings) -> ImportRoots:
        """The roots of PGS_IMPORT_ROOTS; ValueError when an http(s) entry is malformed."""
        entries = [e.strip() for e in settings.import_roots.split(",") if e.strip()]
        urls = tuple(import_urls.parse_root(e) for e in entries if is_url(e))
        dirs = tuple(Path(_local(e)).expanduser().resolve() for e in entries if not is_url(e))
        return cls(dirs, urls)

    def allows_url(self, url: HttpUrl) -> bool:
        return any(root.allows(url) for root in self.urls)


def is_url(source: str) -> bool:
    return source.lower().startswith(URL_SCHEMES)


def _local(entry: str) -> str:
    return unquote(urlsplit(entry).path) if entry.startswith("file://") else entry


def refused(detail: str, status: int = 403) -> ProblemError:
    return ProblemError(status, detail, kind="import-refused", errors=[field_error(SOURCE_FIELD, detail)])


def _malformed(detail: str) -> ProblemError:
    return invalid(detail, [field_error(SOURCE_FIELD, detail)])


def check_source(settings: Settings, source: str) -> str:
    """The source to import: a resolved path inside an allowed directory, or an allowed URL in
    the form it is fetched.

    403 when imports are off or the source is outside every root; 422 for a malformed source or
    a path that is not a file.
    """
    roots = ImportRoots.of(settings)
    if not roots.directories and not roots.urls:
        raise refused("server-side imports are off: the operator allows none (PGS_IMPORT_ROOTS is empty)")
    if is_url(source):
        try:
            url = import_urls.parse(source)
        except import_urls.BadUrl as exc:
            raise _malformed(str(exc)) from None
        if not roots.allows_url(url):
            raise refused("the URL is outside the import roots (PGS_IMPORT_ROOTS)")
        return str(url)
    if "://" in source and not source.startswith("file://"):
        raise refused("import from a path, a file:// URL or an http(s) URL", 422)
    return str(_checked_path(roots, _local(source)))


def _checked_path(roots: ImportRoots, text: str) -> Path:
    # Linux paths may hold any byte but NUL; control characters are refused too (a name with an
    # ESC or a newline is a trick, not a data set), and lone surrogates cannot become bytes.
    if any(unicodedata.category(ch) in ("Cc", "Cs") for ch in text):
        raise _malformed("the path has a NUL, another control character or a lone surrogate")
    path = Path(text)
    if not path.is_absolute():
        raise refused("give the path to import as an absolute path", 422)
    # strict=False: a missing file is reported below as such, not as a path escape.
    resolved = path.resolve()
    if not any(root == resolved or root in resolved.parents for root in roots.directories):
        raise refused(
            "the path is outside the import roots (PGS_IMPORT_ROOTS), after "
            "following its symbolic links and '..'"
        )
    try:
        is_file = resolved.is_file()
    except OSError as exc:  # a name too long, a directory the server may not search
        raise refused(f"{text} is not a file the server can read ({exc.strerror})", 422) from None
    if not is_file:
        raise refused(f"{text} is not a file the server can read", 422)
    return resolved
