"""The URL rules of server-side imports (app/services/datasets/import_urls.py), one case a line:
what a URL becomes once normalised, and which roots allow it."""

from __future__ import annotations

import pytest

from app.services.datasets import import_urls


@pytest.mark.parametrize(
    ("written", "fetched"),
    [
        ("http://h/a/b/c/./../../g", "http://h/a/g"),  # RFC 3986 5.2.4's own example
        ("http://h/mid/content=5/../6", "http://h/mid/6"),
        ("http://h/a/b/..", "http://h/a/"),
        ("http://h/a/.", "http://h/a/"),
        ("http://h/../../x", "http://h/x"),
        ("http://h", "http://h/"),
        ("HTTP://Files.Example:80/x?q=1#frag", "http://files.example/x?q=1"),
        ("https://h:443/x", "https://h/x"),
        ("http://[::1]:8080/x", "http://[::1]:8080/x"),
    ],
)
def test_a_url_is_fetched_normalised(written: str, fetched: str):
    assert str(import_urls.parse(written)) == fetched


@pytest.mark.parametrize(
    ("root", "url", "allowed"),
    [
        ("http://h/data/", "http://h/data/x", True),
        ("http://h/data/", "http://h/data/", True),
        ("http://h/data/", "http://h/data", False),
        ("http://h/data", "http://h/data", True),
        ("http://h/data", "http://h/data/x/y", True),
        ("http://h/data", "http://h/database", False),
        ("http://h/data/", "http://h/data/../secret", False),
        ("http://h/data/", "http://h/%64ata/x", True),  # the same bytes once decoded
        ("http://h/d%ff/", "http://h/d%fe/x", False),  # not the same bytes, though both are not UTF-8
        ("http://h", "http://h/anything", True),
        ("http://h", "http://h:8080/anything", False),
        ("http://h:8080", "http://h/anything", False),
        ("http://h:80/data/", "http://h/data/x", True),
        ("http://h/", "https://h/x", False),
        ("http://H/", "http://h/x", True),
        ("http://h/", "http://h.evil/x", False),
    ],
)
def test_a_root_allows_its_own_scheme_host_port_and_path_below(root: str, url: str, allowed: bool):
    assert import_urls.parse_root(root).allows(import_urls.parse(url)) is allowed


@pytest.mark.parametrize(
    "written",
    [
        "http://root@h/x",
        "http://h:8125@other:8124/x",
        "http://h/a/%2e%2e/x",
        "http://h/a/%2E/x",
        "http://h/a%2fb",
        "http://h/a%5cb",
        "http://h/a\\b",
        "http://h:8125.example.invalid/",
        "http://h:65536/",
        "http://h:0/",
        "http://h/a b",
        "http://h/\u00e9",
        "http://h\u0000/",
        "http://h_1/",
        "http://[::1/",
        "http:///x",
        "ftp://h/x",
        "http://h/" + "a" * 4096,
    ],
)
def test_what_a_server_could_read_otherwise_is_refused(written: str):
    with pytest.raises(import_urls.BadUrl):
        import_urls.parse(written)


@pytest.mark.parametrize("root", ["http://h/data/?q=1", "http://h/data/#f", "http://user@h/", "http://h:x/"])
def test_a_malformed_root_names_the_setting(root: str):
    with pytest.raises(ValueError, match="PGS_IMPORT_ROOTS"):
        import_urls.parse_root(root)


def test_a_redirect_is_resolved_from_the_url_it_answers():
    here = import_urls.parse("http://h/data/a/b")
    assert str(import_urls.follow(here, "../c")) == "http://h/data/c"
    assert str(import_urls.follow(here, "/data/../secret")) == "http://h/secret"
    assert str(import_urls.follow(here, "//other:8124/x")) == "http://other:8124/x"
