"""Server-side imports (PGS_IMPORT_ROOTS): from an allowed directory or URL prefix only, never
out of them by '..', a symbolic link or a redirect; a URL is fetched with a size cap. The URL
cases run against an HTTP server on 127.0.0.1 that each test starts and stops."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from tests.cluster.harness import tiny_svmlight
from tests.helpers import assert_problem, http_server, make_settings, poll


class _Handler(SimpleHTTPRequestHandler):
    """Files of a directory, plus /data/away: a redirect out of the allowed prefix."""

    def do_GET(self) -> None:
        if self.path == "/data/away":
            self.send_response(302)
            self.send_header("Location", "/private/secret.svm")
            self.end_headers()
            return
        super().do_GET()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def web(tmp_path: Path) -> Iterator[str]:
    """http://127.0.0.1:<port>/ serving tmp_path/web (data/ and private/)."""
    root = tmp_path / "web"
    for sub in ("data", "private"):
        (root / sub).mkdir(parents=True)
        (root / sub / "d.svm").write_bytes(tiny_svmlight(200))
    (root / "private" / "secret.svm").write_bytes(tiny_svmlight(50))
    with http_server(functools.partial(_Handler, directory=str(root))) as url:
        yield url


@pytest.fixture
def allowed(tmp_path: Path) -> Path:
    d = tmp_path / "imports"
    d.mkdir()
    (d / "d.svm").write_bytes(tiny_svmlight(200))
    (tmp_path / "outside.svm").write_bytes(tiny_svmlight(20))
    (d / "link.svm").symlink_to(tmp_path / "outside.svm")
    return d


def _client(tmp_path: Path, roots: str, **overrides: Any) -> TestClient:
    return TestClient(create_app(make_settings(tmp_path, import_roots=roots, **overrides)))


def _import(client: TestClient, source: str, **options: Any) -> dict[str, Any]:
    r = client.post("/v1/datasets/import", json={"source": source, **options})
    assert r.status_code == 202, r.text
    return poll(client, r.headers["Location"], lambda u: u["state"] in ("done", "failed"))


def test_imports_are_off_without_roots(tmp_path: Path, allowed: Path):
    with _client(tmp_path, "") as client:
        body = assert_problem(
            client.post("/v1/datasets/import", json={"source": str(allowed / "d.svm")}), 403
        )
        assert "PGS_IMPORT_ROOTS" in body["detail"]


def test_a_file_in_an_allowed_directory_is_imported(tmp_path: Path, allowed: Path):
    with _client(tmp_path, str(allowed)) as client:
        for source in (str(allowed / "d.svm"), (allowed / "d.svm").as_uri()):
            upload = _import(client, source, name="imported")
            assert upload["state"] == "done", upload
            ds = client.get(f"/v1/datasets/{upload['dataset_id']}").json()
            assert ds["sha256"] == hashlib.sha256((allowed / "d.svm").read_bytes()).hexdigest()
            assert (ds["name"], ds["n_samples"]) == ("imported", 200)


@pytest.mark.parametrize("escape", ["../outside.svm", "link.svm", "sub/../../outside.svm"])
def test_no_path_leaves_the_roots(tmp_path: Path, allowed: Path, escape: str):
    with _client(tmp_path, str(allowed)) as client:
        r = client.post("/v1/datasets/import", json={"source": f"{allowed}/{escape}"})
        assert "outside the import roots" in assert_problem(r, 403, "body.source")["detail"]
        assert client.get("/v1/datasets").json()["items"] == []


def test_a_url_under_an_allowed_prefix_is_fetched_and_imported(tmp_path: Path, web: str):
    with _client(tmp_path, f"{web}/data/") as client:
        upload = _import(client, f"{web}/data/d.svm")
        assert upload["state"] == "done", upload
        assert upload["length"] == len(tiny_svmlight(200))
        assert list((tmp_path / "var" / "uploads").iterdir()) == []
        assert_problem(client.post("/v1/datasets/import", json={"source": f"{web}/private/secret.svm"}), 403)


def test_a_redirect_out_of_the_prefixes_is_not_followed(tmp_path: Path, web: str):
    with _client(tmp_path, f"{web}/data/") as client:
        upload = _import(client, f"{web}/data/away")
        assert upload["state"] == "failed" and upload["error"]["status"] == 403, upload
        assert "outside the import roots" in upload["error"]["detail"]
        assert client.get("/v1/datasets").json()["items"] == []


def test_a_url_over_the_size_cap_is_refused(tmp_path: Path, web: str):
    with _client(tmp_path, f"{web}/data/", max_upload_bytes=1000) as client:
        upload = _import(client, f"{web}/data/d.svm")
        assert upload["state"] == "failed" and upload["error"]["status"] == 413, upload
        assert list((tmp_path / "var" / "uploads").iterdir()) == []


def test_a_malformed_url_root_stops_the_start(tmp_path: Path):
    with pytest.raises(ValueError, match="PGS_IMPORT_ROOTS"), _client(tmp_path, "http://127.0.0.1:80x/data/"):
        pass
