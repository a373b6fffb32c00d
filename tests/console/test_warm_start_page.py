"""A refresh from the console: the model page's "Refresh on new rows" opens the New job form with
the model as its warm start (init_model), and the job and the model it trains say where they
started (see conftest.py for the browser and the real service)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.cluster.harness import ApiServer, poll_job

from .conftest import WAIT_MS, Console


def expect() -> Any:
    from playwright.sync_api import expect as playwright_expect

    playwright_expect.set_options(timeout=WAIT_MS)
    return playwright_expect


@pytest.fixture(scope="module")
def heart_model(service: ApiServer, data_dir: Path) -> tuple[int, int]:
    """(heart_scale's data set id, a logistic PGS model of it), made through the API."""
    with httpx.Client(base_url=service.base, timeout=60) as client:
        heart = (data_dir / "heart_scale.svm").read_bytes()
        ds = client.post("/v1/datasets", files={"file": ("heart.svm", heart)}).json()
        body = {"dataset_id": ds["id"], "params": {"loss": "logistic", "random_state": 0}}
        job = poll_job(client, client.post("/v1/jobs", json=body).json()["id"])
        assert job["status"] == "succeeded", job
        return ds["id"], job["model_id"]


def test_a_model_refreshed_from_its_page_says_where_it_started(
    console: Console, heart_model: tuple[int, int]
) -> None:
    dataset_id, model_id = heart_model
    page = console.page
    console.goto(f"#/models/{model_id}")
    expect()(page.locator(".facts, dl").first).to_contain_text("zero (a cold start)")
    page.get_by_role("link", name="Refresh on new rows…").click()
    start = page.get_by_label("Start from model")
    expect()(start).to_have_value(str(model_id))
    page.get_by_label("Training data set").select_option(str(dataset_id))
    page.get_by_role("button", name="Start job").click()
    queued = page.locator(".alert-success").filter(has_text="queued").last
    expect()(queued).to_be_visible()
    queued.locator("a").first.click()
    expect()(page.locator("h1 .badge")).to_have_text("succeeded")
    expect()(page.get_by_role("link", name=f"model #{model_id}")).to_be_visible()
    console.shot("job-warm-start")

    # The form names the field the API refuses.
    console.allow(422, "POST", "/v1/jobs")
    console.goto("#/jobs/new?init_model=nothing@here")
    page.get_by_label("Training data set").select_option(str(dataset_id))
    page.get_by_role("button", name="Start job").click()
    error = page.locator('[data-field="init_model"] .field-error')
    expect()(error).to_contain_text("model alias nothing@here does not exist")
