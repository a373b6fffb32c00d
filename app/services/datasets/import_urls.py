"""The http(s) URLs of server-side imports, parsed and compared as they will be fetched.

A source URL is parsed by ``urllib.parse``, its dot segments removed (RFC 3986, 5.2.4) and the
result rebuilt as the one URL that is fetched: what is checked is what is requested. A URL that
a server could read as another path than the one checked is refused rather than guessed at:
user information (``root@other-host``), a percent-encoded ``.``/``..`` segment, an encoded or
back slash, a character outside printable ASCII. A root allows its scheme, host (compared
case-insensitively) and port (the scheme's default unless it names one), and its path segment by
segment: ``/data/`` allows what is below ``/data/``; ``/data`` allows ``/data`` itself too, never
``/database``.
"""

from __future__ import annotations

import ipaddress
import string
from dataclasses import dataclass
from urllib.parse import unquote_to_bytes, urljoin, urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443}
# The longest source a request may name (ImportRequest.source), and so the longest redirect.
MAX_URL_CHARS = 4096
# A host name or an IPv4 address; an IPv6 address (in brackets) is checked by ``ipaddress``.
HOST_CHARS = frozenset(string.ascii_lowercase + string.digits + ".-")
# Decoded, these would change which path a server reads.
PATH_CHANGING = (b".", b"..")
SEPARATORS = (b"/", b"\\")


class BadUrl(ValueError):
    """The text is not a URL this service fetches; the message says why."""


@dataclass(frozen=True)
class HttpUrl:
    scheme: str
    host: str  # lower case; an IPv6 address without its brackets
    port: int  # as written, or the scheme's default
    # The path after dot-segment removal, split at "/" (percent-encoding kept): "/a/b" is
    # ("a", "b"), and a trailing slash is a last empty segment ("/a/" is ("a", "")).
    segments: tuple[str, ...]
    query: str

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        port = "" if self.port == DEFAULT_PORTS[self.scheme] else f":{self.port}"
        query = f"?{self.query}" if self.query else ""
        return f"{self.scheme}://{host}{port}/{'/'.join(self.segments)}{query}"

    def allows(self, url: HttpUrl) -> bool:
        """Whether ``url`` is this root or below it (this being a root)."""
        if (url.scheme, url.host, url.port) != (self.scheme, self.host, self.port):
            return False
        directory = self.segments[-1] == ""
        prefix = self.segments[:-1] if directory else self.segments
        if _decoded(url.segments[: len(prefix)]) != _decoded(prefix):
            return False
        return len(url.segments) > len(prefix) or not directory


def parse(text: str) -> HttpUrl:
    """``text`` as an http(s) URL with its dot segments removed; BadUrl says why it is not one."""
    if len(text) > MAX_URL_CHARS:
        raise BadUrl(f"the URL is longer than {MAX_URL_CHARS} characters")
    if not all(" " < ch <= "~" for ch in text):
        raise BadUrl(
            "the URL has a control character, a space or a character outside ASCII; "
            "percent-encode it (and write an international host name in punycode)"
        )
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise BadUrl(f"the URL is malformed: {exc}") from None
    if parts.scheme not in DEFAULT_PORTS:
        raise BadUrl("the URL's scheme must be http or https")
    if "@" in parts.netloc:
        raise BadUrl("a URL with user information (user@ or user:password@ before the host) is not fetched")
    if port == 0:
        raise BadUrl("the URL's port is 0")
    return HttpUrl(
        scheme=parts.scheme,
        host=_host(parts.hostname or ""),
        port=DEFAULT_PORTS[parts.scheme] if port is None else port,
        segments=_segments(parts.path),
        query=parts.query,
    )


def parse_root(text: str) -> HttpUrl:
    """An http(s) entry of PGS_IMPORT_ROOTS; ValueError naming the setting when malformed."""
    try:
        root = parse(text)
    except BadUrl as exc:
        raise ValueError(f"PGS_IMPORT_ROOTS: {text!r}: {exc}") from None
    if urlsplit(text).query or "#" in text:
        raise ValueError(f"PGS_IMPORT_ROOTS: {text!r}: a root has no query or fragment")
    return root


def follow(current: HttpUrl, location: str) -> HttpUrl:
    """The URL a redirect's Location leads to from ``current``."""
    try:
        joined = urljoin(str(current), location)
    except ValueError as exc:
        raise BadUrl(f"the URL is malformed: {exc}") from None
    return parse(joined)


def _host(host: str) -> str:
    if not host:
        raise BadUrl("the URL has no host")
    if ":" in host:
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise BadUrl("the URL's IPv6 address is malformed") from None
    elif not set(host) <= HOST_CHARS:
        raise BadUrl("the URL's host may have letters, digits, '.' and '-' only")
    return host


def _segments(path: str) -> tuple[str, ...]:
    """RFC 3986 5.2.4 (remove_dot_segments) on the path's segments; refuses the encoded ones."""
    written = path.split("/")[1:] if path else [""]
    kept: list[str] = []
    for i, segment in enumerate(written):
        last = i == len(written) - 1
        if segment in (".", ".."):
            if segment == ".." and kept:
                kept.pop()
            if last:
                kept.append("")  # "/a/b/.." is "/a/"
            continue
        decoded = unquote_to_bytes(segment)
        if decoded in PATH_CHANGING or any(sep in decoded for sep in SEPARATORS):
            raise BadUrl(
                "the URL's path has a percent-encoded '.' or '..' segment, or an encoded or "
                "back slash; write the path it means plainly"
            )
        kept.append(segment)
    return tuple(kept)


def _decoded(segments: tuple[str, ...]) -> list[bytes]:
    return [unquote_to_bytes(s) for s in segments]
