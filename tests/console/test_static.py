"""The console's files as the service serves them (no browser needed): public, self-contained,
and under a Content-Security-Policy that allows nothing but the service itself."""

from __future__ import annotations

import re
from pathlib import Path

from fastapi.testclient import TestClient

from app.console import STATIC_DIR
from app.main import create_app
from tests.helpers import make_settings


def test_the_page_and_its_files_need_no_key_while_the_api_does(tmp_path: Path) -> None:
    with TestClient(create_app(make_settings(tmp_path, api_keys="secret"))) as client:
        page = client.get("/")
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/html")
        csp = page.headers["content-security-policy"]
        assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp
        script = client.get("/console/js/main.js")
        assert script.status_code == 200
        assert "javascript" in script.headers["content-type"]
        assert client.get("/console/vendor/uplot/uPlot.esm.js").status_code == 200
        assert client.get("/v1/jobs").status_code == 401
        assert client.get("/console/nope.js").status_code == 404


def test_the_console_adds_no_api_route(tmp_path: Path) -> None:
    with TestClient(create_app(make_settings(tmp_path))) as client:
        paths = client.get("/openapi.json").json()["paths"]
    assert not [p for p in paths if p == "/" or p.startswith("/console")]


def test_nothing_is_loaded_from_outside_the_service() -> None:
    index = (STATIC_DIR / "index.html").read_text()
    assert not re.search(r"""(src|href)=["'](https?:)?//""", index)
    for script in STATIC_DIR.glob("js/**/*.js"):
        for spec in re.findall(r"""^import .* from ["']([^"']+)["'];$""", script.read_text(), re.M):
            assert spec.startswith(("./", "../")), f"{script.name} imports {spec}"
    assert "url(" not in (STATIC_DIR / "console.css").read_text()


def test_the_vendored_chart_library_carries_its_licence_and_version() -> None:
    vendor = STATIC_DIR / "vendor" / "uplot"
    assert "MIT" in (vendor / "LICENSE").read_text()
    version = re.search(r"uPlot (\d+\.\d+\.\d+)", (vendor / "VERSION").read_text())
    assert version is not None
    assert f"(v{version.group(1)})" in (vendor / "uPlot.esm.js").read_text()[:400]
