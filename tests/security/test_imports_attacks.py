"""The attacks on server-side imports of the security review (rows I1-I9), replayed against the
real app: each test is one attack and asserts the outcome that must hold.

Remote hosts are HTTP servers on 127.0.0.1 (tests.helpers.http_server): ``site`` is the host the
operator allows, ``victim`` one it does not (in the review, the API's own port), which must
never receive a request. Their slow answers end when the test does, or after a bounded number
of steps.
"""

from __future__ import annotations

import base64
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from tests.cluster.harness import tiny_svmlight
from tests.helpers import JOB_TIMEOUT_S, assert_problem, http_server, make_settings, poll

SVM = tiny_svmlight(50)
SECRET = b"SECRET-7f3a"
# A slow answer sends one byte per step, for at most this many steps (a minute).
TRICKLE_STEP_S = 0.05
TRICKLE_STEPS = 1200
KEY_A, KEY_B = "key-a", "key-b"


class Site:
    """A stand-in host: the paths it was asked for, the redirects it answers, and the switch
    that ends its slow answers."""

    def __init__(self) -> None:
        self.url = ""
        self.paths: list[str] = []
        self.redirects: dict[str, str] = {}
        self.stop = threading.Event()

    def asked(self, path: str) -> int:
        return self.paths.count(path)


class _Answers(BaseHTTPRequestHandler):
    """The answers of a stand-in host, by path; its redirects come first."""

    site: Site

    def do_GET(self) -> None:
        self.site.paths.append(self.path)
        answer = ANSWERS.get(self.path, _Answers.not_found)
        if self.path in self.site.redirects:
            answer = _Answers.redirect
        try:
            answer(self)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the service hung up, as it should when it stops a download

    def redirect(self) -> None:
        self.send_response(302)
        self.send_header("Location", self.site.redirects[self.path])
        self.send_header("Content-Length", "0")
        self.end_headers()

    def data(self) -> None:
        self._headers(200, len(SVM))
        self.wfile.write(SVM)

    def error(self) -> None:
        self.send_response(500, SECRET.decode())
        self.send_header("Content-Length", str(len(SECRET)))
        self.end_headers()
        self.wfile.write(SECRET)

    def not_http(self) -> None:
        self.wfile.write(SECRET + b" is not an HTTP status line\r\n\r\n")

    def huge(self) -> None:
        self._headers(200, 10**12)

    def endless(self) -> None:
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        chunk = b"1 1:1\n" * 10_000
        for _ in range(1000):  # 60 MB at most
            if self.site.stop.is_set():
                return
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))

    def trickle(self) -> None:
        self._headers(200, 10**6)
        self._trickle(b"1" * TRICKLE_STEPS)

    def slow_headers(self) -> None:
        self._trickle(b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * TRICKLE_STEPS)

    def not_found(self) -> None:
        self._headers(404, 0)

    def _headers(self, status: int, length: int) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(length))
        self.end_headers()

    def _trickle(self, data: bytes) -> None:
        for byte in data:
            if self.site.stop.is_set():
                return
            self.wfile.write(bytes([byte]))
            self.wfile.flush()
            time.sleep(TRICKLE_STEP_S)

    def log_message(self, format: str, *args: Any) -> None:
        pass


ANSWERS: dict[str, Callable[[_Answers], None]] = {
    "/data/d.svm": _Answers.data,
    "/secret": _Answers.data,
    "/database.svm": _Answers.data,
    "/data/error": _Answers.error,
    "/data/not-http": _Answers.not_http,
    "/data/huge": _Answers.huge,
    "/data/endless": _Answers.endless,
    "/data/trickle": _Answers.trickle,
    "/data/slow-headers": _Answers.slow_headers,
}


@pytest.fixture
def site() -> Iterator[Site]:
    yield from _serve()


@pytest.fixture
def victim() -> Iterator[Site]:
    yield from _serve()


def _serve() -> Iterator[Site]:
    host = Site()
    with http_server(type("Answers", (_Answers,), {"site": host})) as url:
        host.url = url
        try:
            yield host
        finally:
            host.stop.set()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """tmp_path/imports (the allowed directory) and what lies around it."""
    root = tmp_path / "imports"
    (root / "sub").mkdir(parents=True)
    (root / "d.svm").write_bytes(SVM)
    os.mkfifo(root / "fifo")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "x.svm").write_bytes(SVM)
    (tmp_path / "outside.svm").write_bytes(SVM)
    for name, target in [
        ("link-file", tmp_path / "outside.svm"),
        ("link-dir", tmp_path / "outside"),
        ("link-environ", Path("/proc/self/environ")),
        ("link-passwd", Path("/etc/passwd")),
    ]:
        (root / name).symlink_to(target)
    return root


def _app(tmp_path: Path, roots: str, **overrides: Any) -> TestClient:
    return TestClient(create_app(make_settings(tmp_path, import_roots=roots, **overrides)))


def _refused(client: TestClient, source: str, status: int) -> dict[str, Any]:
    """The import is refused at once, naming the source; nothing is created."""
    # json.dumps escapes what is not ASCII: a lone surrogate travels as JSON allows it, \ud800.
    request = json.dumps({"source": source})
    r = client.post("/v1/datasets/import", content=request, headers={"Content-Type": "application/json"})
    body = assert_problem(r, status, "body.source")
    assert client.get("/v1/datasets").json()["items"] == []
    return body


def _imported(client: TestClient, source: str) -> dict[str, Any]:
    """The upload of an accepted import, once done or failed."""
    return _ended(client, _start(client, source))


def _start(client: TestClient, source: str, key: str | None = None) -> str:
    r = client.post("/v1/datasets/import", json={"source": source}, headers=_auth(key))
    assert r.status_code == 202, r.text
    location: str = r.headers["Location"]
    return location


def _ended(client: TestClient, location: str, key: str | None = None) -> dict[str, Any]:
    return poll(client, location, lambda u: u["state"] != "parsing", headers=_auth(key))


def _auth(key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"} if key else {}


def _until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + JOB_TIMEOUT_S  # bounds a hang; measures nothing
    while not condition():
        assert time.monotonic() < deadline, "the condition did not come true"
        time.sleep(0.05)


def _failed(upload: dict[str, Any], status: int, tmp_path: Path) -> str:
    """The import failed with ``status``, keeping no byte; returns the error's detail."""
    assert upload["state"] == "failed" and upload["error"]["status"] == status, upload
    assert list((tmp_path / "var" / "uploads").iterdir()) == []
    detail: str = upload["error"]["detail"]
    return detail


# -- I1: paths out of the allowed directory --------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "status"),
    [
        ("{root}/../outside/x.svm", 403),
        ("{root}/sub/../../outside.svm", 403),
        ("{tmp}/outside.svm", 403),
        ("/etc/passwd", 403),
        ("/proc/self/environ", 403),
        ("{root}/link-file", 403),
        ("{root}/link-dir/x.svm", 403),
        ("{root}/link-environ", 403),
        ("{root}/link-passwd", 403),
        ("file://{root}/../outside.svm", 403),
        ("file://{root}/%2e%2e/outside.svm", 403),
        ("file://{root}/..%2foutside.svm", 403),
        ("{root}/%2e%2e/outside.svm", 422),  # a name, not '..': no such file
        ("{root}/..%2foutside.svm", 422),
        ("imports/d.svm", 422),
        ("~/d.svm", 422),
        ("{root}/fifo", 422),
        ("{root}/sub", 422),
    ],
)
def test_i1_no_path_leaves_the_roots_and_only_files_are_read(
    tmp_path: Path, tree: Path, source: str, status: int
):
    with _app(tmp_path, str(tree)) as client:
        _refused(client, source.format(root=tree, tmp=tmp_path), status)


# -- I2: a path that is no path --------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "{root}/\u0000x",
        "imports/\u0000x",
        "file://{root}/%00x",
        "{root}/\u001b[31mx",
        "{root}/\ud800",  # a lone surrogate: no bytes on disk can be its name
        "{root}/" + "n" * 300,  # longer than a name may be
    ],
)
def test_i2_an_impossible_path_is_a_422_naming_the_source(tmp_path: Path, tree: Path, source: str):
    with _app(tmp_path, str(tree)) as client:
        _refused(client, source.format(root=tree), 422)


# -- I3: URLs outside the roots, asked for directly ------------------------------------------------


@pytest.mark.parametrize(
    ("source", "status"),
    [
        ("{victim}/metrics", 403),
        ("HTTP://{victim_host}/metrics", 403),
        ("http://169.254.169.254/latest/meta-data/", 403),
        ("{site}/private/d.svm", 403),
        ("ftp://{victim_host}/d.svm", 422),
        ("gopher://{victim_host}/_stats", 422),
        ("dict://{victim_host}/stat", 422),
        ("jar:{site}/data/d.jar!/d.svm", 422),
    ],
)
def test_i3_a_url_outside_the_roots_is_refused_unfetched(
    tmp_path: Path, site: Site, victim: Site, source: str, status: int
):
    urls = {"site": site.url, "victim": victim.url, "victim_host": victim.url.removeprefix("http://")}
    with _app(tmp_path, f"{site.url}/data/") as client:
        _refused(client, source.format(**urls), status)
    assert site.paths == victim.paths == []


# -- I4: an allowed URL that redirects out ---------------------------------------------------------


@pytest.mark.parametrize(
    ("location", "status", "says"),
    [
        ("{victim}/metrics", 403, "outside the import roots"),
        ("http://169.254.169.254/latest/meta-data/", 403, "outside the import roots"),
        ("/data/../secret", 403, "outside the import roots"),
        ("file:///etc/passwd", 403, "not fetched"),
        ("{site}@{victim_host}/metrics", 403, "not fetched"),
        ("/data/hop", 502, "redirected more than 5 times"),  # a loop
    ],
)
def test_i4_every_redirect_is_checked_before_it_is_followed(
    tmp_path: Path, site: Site, victim: Site, location: str, status: int, says: str
):
    urls = {"site": site.url, "victim": victim.url, "victim_host": victim.url.removeprefix("http://")}
    site.redirects["/data/hop"] = location.format(**urls)
    with _app(tmp_path, f"{site.url}/data/") as client:
        assert says in _failed(_imported(client, f"{site.url}/data/hop"), status, tmp_path)
        assert client.get("/v1/datasets").json()["items"] == []
    assert victim.paths == [] and site.asked("/secret") == 0


# -- I5: dot segments out of an allowed prefix -----------------------------------------------------


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/data/../secret", 403),
        ("/data/./../secret", 403),
        ("/data/sub/../../secret", 403),
        ("/data/%2e%2e/secret", 422),
        ("/data/%2E./secret", 422),
        ("/data/..%2fsecret", 422),
        ("/data/..%5csecret", 422),
        ("/data\\..\\secret", 422),
    ],
)
def test_i5_dot_segments_are_removed_before_the_prefix_is_compared(
    tmp_path: Path, site: Site, path: str, status: int
):
    with _app(tmp_path, f"{site.url}/data/") as client:
        _refused(client, site.url + path, status)
    assert site.paths == []


def test_i5_dot_segments_that_stay_inside_the_prefix_are_fetched_resolved(tmp_path: Path, site: Site):
    with _app(tmp_path, f"{site.url}/data/") as client:
        upload = _imported(client, f"{site.url}/data/sub/./../d.svm")
    assert upload["state"] == "done", upload
    assert upload["source"] == f"{site.url}/data/d.svm"
    assert site.paths == ["/data/d.svm"]


# -- I6: user information, and a root without a trailing slash ------------------------------------


@pytest.mark.parametrize("path", ["/healthz", "/openapi.json"])
def test_i6_user_information_cannot_reach_another_host(tmp_path: Path, site: Site, victim: Site, path: str):
    victim_host = victim.url.removeprefix("http://")
    with _app(tmp_path, site.url) as client:
        body = _refused(client, f"{site.url}@{victim_host}{path}", 422)
    assert "user information" in body["detail"]
    assert victim.paths == [] and site.paths == []


def test_i6_a_root_without_a_trailing_slash_is_that_path_and_below(tmp_path: Path, site: Site):
    with _app(tmp_path, f"{site.url}/data") as client:
        _refused(client, f"{site.url}/database.svm", 403)
        _refused(client, "http://127.0.0.1/data/d.svm", 403)  # port 80, not the root's
        assert _imported(client, f"{site.url}/data/d.svm")["state"] == "done"
    assert site.paths == ["/data/d.svm"]


@pytest.mark.parametrize("path", ["/data/error", "/data/not-http"])
def test_i6_a_failed_fetch_quotes_nothing_the_source_sent(tmp_path: Path, site: Site, path: str):
    with _app(tmp_path, f"{site.url}/data/") as client:
        detail = _failed(_imported(client, site.url + path), 502, tmp_path)
    assert SECRET.decode() not in detail
    if path == "/data/error":
        assert detail == "the source answered 500 Internal Server Error"


# -- I7: a URL that does not parse -----------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "{site}.example.invalid/data/d.svm",  # the port is '<port>.example.invalid'
        "http://127.0.0.1:99999/data/d.svm",
        "http://127.0.0.1:/data/\u0000",
        "http://127.0.0.1:8000/data/a b",
        "http://[::1/data/d.svm",
        "http:///data/d.svm",
    ],
)
def test_i7_a_malformed_url_is_a_422_at_request_time(tmp_path: Path, site: Site, source: str):
    with _app(tmp_path, f"{site.url}/data/") as client:
        _refused(client, source.format(site=site.url), 422)
    assert site.paths == []


# -- I8: bodies without end ------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/data/huge", "/data/endless"])
def test_i8_a_source_past_the_size_cap_fails_and_keeps_nothing(tmp_path: Path, site: Site, path: str):
    with _app(tmp_path, f"{site.url}/data/", max_upload_bytes=1024 * 1024) as client:
        detail = _failed(_imported(client, site.url + path), 413, tmp_path)
    assert "PGS_MAX_UPLOAD_BYTES" in detail


# -- I9: sources that trickle ----------------------------------------------------------------------


def test_i9_a_download_past_the_deadline_fails_and_keeps_nothing(tmp_path: Path, site: Site):
    with _app(tmp_path, f"{site.url}/data/", import_deadline_s=2) as client:
        detail = _failed(_imported(client, f"{site.url}/data/trickle"), 504, tmp_path)
    assert "PGS_IMPORT_DEADLINE_S" in detail


@pytest.mark.parametrize("path", ["/data/trickle", "/data/slow-headers"])
def test_i9_a_download_under_the_minimum_rate_fails_and_keeps_nothing(tmp_path: Path, site: Site, path: str):
    rate = {"import_min_bytes_per_s": 1000, "import_rate_window_s": 0.5}
    with _app(tmp_path, f"{site.url}/data/", **rate) as client:
        detail = _failed(_imported(client, site.url + path), 504, tmp_path)
    assert "PGS_IMPORT_MIN_BYTES_PER_S" in detail


def test_i9_trickling_imports_do_not_hold_another_owners_uploads(tmp_path: Path, site: Site):
    settings = {"api_keys": f"team-a:member:{KEY_A},team-b:member:{KEY_B}", "max_concurrent_parses": 2}
    with _app(tmp_path, f"{site.url}/data/", **settings) as client:
        slow = [_start(client, f"{site.url}/data/trickle", KEY_A) for _ in range(2)]
        _until(lambda: site.asked("/data/trickle") == 2)

        location = _resumable_upload(client, SVM, KEY_B)
        r = client.post(f"{location}/dataset", json={}, headers=_auth(KEY_B))
        assert r.status_code == 202, r.text
        assert _ended(client, location, KEY_B)["state"] == "done"

        assert [client.get(u, headers=_auth(KEY_A)).json()["state"] for u in slow] == ["parsing"] * 2
        site.stop.set()  # the trickles end short of their length: the downloads fail
        for u in slow:
            _failed(_ended(client, u, KEY_A), 502, tmp_path)


def _resumable_upload(client: TestClient, data: bytes, key: str) -> str:
    tus = {"Authorization": f"Bearer {key}", "Tus-Resumable": "1.0.0"}
    meta = "filename " + base64.b64encode(b"b.svm").decode()
    r = client.post("/v1/uploads", headers={**tus, "Upload-Length": str(len(data)), "Upload-Metadata": meta})
    assert r.status_code == 201, r.text
    location: str = r.headers["Location"]
    r = client.patch(
        location,
        content=data,
        headers={**tus, "Upload-Offset": "0", "Content-Type": "application/offset+octet-stream"},
    )
    assert r.status_code == 204, r.text
    return location
