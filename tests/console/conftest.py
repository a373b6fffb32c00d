"""Browser tests of the web console: a real service (``python -m app`` on a free 127.0.0.1 port,
a temp data dir, the real process pool and SQLite) driven by a real headless Chromium.

Chromium is Debian's ``chromium`` package, driven by Playwright for Python through
``executable_path`` (Playwright's own browser download is never used). Without it the tests skip
and say how to enable them.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.harness import ApiServer

REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "var" / "screenshots"
# Bounds on waiting for a hang on a loaded machine; they do not measure speed.
WAIT_MS = 90_000
READY_MS = 30_000
NARROW = {"width": 390, "height": 800}
WIDE = {"width": 1280, "height": 800}
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# Chromium aborts its requests when the machine's network interfaces change (containers starting
# or stopping beside the tests): not the console's doing. The console retries its GETs; a page
# whose scripts were cut off is loaded again.
NETWORK_CHANGED = "Failed to load resource: net::ERR_NETWORK_CHANGED"
# The page has rendered the route (main.js marks it), or it waits for an API key.
RENDERED = """(path) => document.body.dataset.page === path
  || Boolean(document.getElementById('key-dialog')?.open)"""


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    path = chromium_path()
    if path is None:
        pytest.skip(
            "browser tests skipped: no chromium on PATH; install Debian's package with "
            "`apt-get install -y chromium` (.ci/run does) to run them"
        )
    sync_api = pytest.importorskip(
        "playwright.sync_api",
        reason="browser tests skipped: playwright is not installed (pip install -e '.[dev]')",
    )
    with sync_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    """The service under test, for one test module (its jobs and data sets are shared)."""
    root = tmp_path_factory.mktemp("console-service")
    server = ApiServer(root / "data", root / "server.log", PGS_WORKERS="2").start()
    try:
        yield server
    finally:
        server.stop()
    server.assert_clean_log()


@dataclass
class Console:
    """One browser tab on the console, watching what the page does.

    Every request must stay on the service; every response of 400 or more must be one the test
    allowed (the browser logs each such response as a console error, and those are the only
    console errors accepted); no script error may occur.
    """

    page: Any
    base: str
    outside: list[str] = field(default_factory=list)
    failures: list[tuple[int, str, str]] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    allowed: list[tuple[int, str, str]] = field(default_factory=list)

    def watch(self) -> Console:
        def on_request(request: Any) -> None:
            if not request.url.startswith((self.base + "/", "blob:", "data:")):
                self.outside.append(request.url)

        def on_response(response: Any) -> None:
            if response.status >= 400:
                path = response.url[len(self.base) :]
                self.failures.append((response.status, response.request.method, path))

        def on_console(message: Any) -> None:
            if message.type == "error":
                self.console_errors.append(message.text)

        self.page.on("request", on_request)
        self.page.on("response", on_response)
        self.page.on("console", on_console)
        self.page.on("pageerror", lambda error: self.page_errors.append(str(error)))
        return self

    def allow(self, status: int, method: str, path_pattern: str) -> None:
        self.allowed.append((status, method, path_pattern))

    def goto(self, route: str) -> None:
        """Open a route and wait until the page has rendered it."""
        path = route.lstrip("#").split("?")[0]
        self.page.evaluate("() => document.body && delete document.body.dataset.page")
        self.page.goto(f"{self.base}/{route}")
        if not self.rendered(path):
            assert NETWORK_CHANGED in self.console_errors, f"{route} was not rendered"
            self.page.reload()
            assert self.rendered(path), f"{route} was not rendered, even after a reload"

    def rendered(self, path: str) -> bool:
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        try:
            self.page.wait_for_function(RENDERED, arg=path, timeout=READY_MS)
            return True
        except PlaywrightTimeout:
            return False

    def check(self) -> None:
        assert not self.outside, f"requests outside the service: {self.outside}"
        assert not self.page_errors, f"script errors: {self.page_errors}"
        unexpected = [
            f
            for f in self.failures
            if not any(
                f[0] == s and f[1] == m and re.fullmatch(p, f[2].split("?")[0]) for s, m, p in self.allowed
            )
        ]
        assert not unexpected, f"unexpected error responses: {unexpected}"
        browser_lines = [
            e
            for e in self.console_errors
            if e.startswith("Failed to load resource: the server responded with a status")
        ]
        others = [e for e in self.console_errors if e not in browser_lines and e != NETWORK_CHANGED]
        assert not others, f"console errors: {others}"
        assert len(browser_lines) <= len(self.failures)

    def shot(self, name: str) -> None:
        """Screenshots at 1280x800 and at a phone's width, with the checks a reader needs:
        nothing wider than the window, and a label on every form control."""
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        for size, suffix in ((WIDE, "1280"), (NARROW, "narrow")):
            self.page.set_viewport_size(size)
            settle(self.page)
            overflow = self.page.evaluate(
                "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
            assert overflow <= 0, f"{name} at {size['width']} px is {overflow} px too wide"
            self.page.screenshot(path=str(SCREENSHOTS / f"{name}-{suffix}.png"), full_page=True)
        self.page.set_viewport_size(WIDE)
        settle(self.page)
        unlabelled = self.page.evaluate(UNLABELLED_CONTROLS)
        assert not unlabelled, f"{name}: form controls without a label: {unlabelled}"


UNLABELLED_CONTROLS = """() => [...document.querySelectorAll('input, select, textarea')]
  .filter((el) => el.offsetParent !== null || el.type === 'file')
  .filter((el) => !(el.labels && el.labels.length) && !el.getAttribute('aria-label'))
  .map((el) => el.outerHTML.slice(0, 120))"""


def settle(page: Any) -> None:
    """Two animation frames: resize observers have redrawn the charts."""
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")


def open_console(browser: Any, server: ApiServer) -> tuple[Any, Console]:
    context = browser.new_context(viewport=WIDE, accept_downloads=True)
    context.set_default_timeout(WAIT_MS)
    page = context.new_page()
    return context, Console(page, server.base).watch()


@pytest.fixture
def console(browser: Any, service: ApiServer) -> Iterator[Console]:
    """A fresh tab (and browser context: its own sessionStorage) on the module's service."""
    context, tab = open_console(browser, service)
    try:
        yield tab
        tab.check()
    finally:
        context.close()
