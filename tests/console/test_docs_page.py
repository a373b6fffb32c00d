"""``/docs`` in a real browser: Swagger UI renders every operation of the service's document from
the files the service serves itself (app/docs_ui), and no request leaves the service."""

from __future__ import annotations

from typing import Any

from tests.cluster.harness import ApiServer
from tests.console.conftest import WAIT_MS, Console


def test_docs_render_every_operation_without_leaving_the_service(browser: Any, service: ApiServer) -> None:
    page = browser.new_page()
    try:
        console = Console(page, service.base).watch()
        page.goto(f"{service.base}/docs")
        page.wait_for_selector(".opblock", timeout=WAIT_MS)
        with service.client() as c:
            spec = c.get("/openapi.json").json()
        operations = sum(len(item) for item in spec["paths"].values())
        assert page.locator(".opblock").count() == operations
        console.check()
    finally:
        page.close()
