"""A data set without labels (uploaded with ``labelled=false``) in the console, in a real browser
against a real service: the list and its page say it has no labels and what it is for, the job
form does not offer it, with no failed request and no console error (conftest.py checks both
after each test)."""

from __future__ import annotations

from typing import Any

import httpx

from tests.cluster.harness import ApiServer

from .conftest import WAIT_MS, Console

ROWS_CSV = b"income,home,age\n1200,rent,31\nNA,own,45\n900,NA,22\n"


def test_a_data_set_without_labels_says_so(console: Console, service: ApiServer) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=WAIT_MS)
    with httpx.Client(base_url=service.base, timeout=60) as api:
        r = api.post(
            "/v1/datasets",
            files={"file": ("new-rows.csv", ROWS_CSV)},
            data={"name": "new rows", "labelled": "false"},
        )
    assert r.status_code == 201, r.text
    dataset: dict[str, Any] = r.json()
    page = console.page
    console.goto("#/datasets")
    expect(page.locator(f"tr[data-key='{dataset['id']}']")).to_contain_text("no labels")
    console.goto(f"#/datasets/{dataset['id']}")
    schema = page.locator(".dataset-schema")
    expect(schema).to_contain_text("none (rows to predict)")
    expect(schema).to_contain_text("no labels: it was uploaded with labelled=false")
    expect(schema).to_contain_text("Text columnshome")
    # The job form offers the data sets a job can train on or be evaluated with: not this one.
    console.goto("#/jobs/new")
    expect(page.locator("main")).to_contain_text("There is no data set to train on yet")
    assert "new rows" not in page.locator("main").inner_text()
