"""Stored XSS in the console (rows X1 and X2 of the security review), in headless Chromium against
a real service: the review's payloads go into every text a user can type (a data set's name,
description and file name, CSV feature names, string labels, a text column's values, a job's name
and description, a model's description, a study's name and run labels, the predict box, the hash
route), and every console page that shows them, and the SVG figures opened directly, run none:
no dialog opens, no element is made of them, and they read as the text that was typed.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.cluster.harness import ApiServer, poll_job

from .conftest import WAIT_MS, Console, open_console

PAYLOADS = [
    "<img src=x onerror=alert(1)>",
    "</script><script>alert(1)</script>",
    '"><svg onload=alert(1)>',
]
IMG, SCRIPT, SVG = PAYLOADS
# Elements a payload would make if it were parsed as markup; the console itself makes none.
MADE_OF_PAYLOADS = "main img, main script, main svg[onload], main [onerror], main [onload]"


def _csv() -> bytes:
    """Feature names, a text column's values and the string labels are payloads."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([IMG, SCRIPT, "colour", "label"])
    for i in range(60):
        writer.writerow([i % 7, (i * 3) % 5, PAYLOADS[i % 3], (IMG, SVG)[i % 2]])
    return out.getvalue().encode()


@pytest.fixture(scope="module")
def stored(service: ApiServer) -> Iterator[dict[str, int]]:
    """Everything the review typed payloads into, created through the API."""
    with httpx.Client(base_url=service.base, timeout=WAIT_MS / 1000) as c:
        ds = c.post(
            "/v1/datasets", files={"file": (f"{SVG}.csv", _csv())}, data={"name": IMG, "description": SCRIPT}
        ).json()
        # HTTP clients percent-encode a quote in a file name: the payload without one.
        by_file = c.post("/v1/datasets", files={"file": (f"{IMG}.csv", _csv())}).json()
        assert by_file["name"] == f"{IMG}.csv"
        job = c.post(
            "/v1/jobs",
            json={"dataset_id": ds["id"], "name": SVG, "description": IMG, "params": {"n_iter": 200}},
        ).json()
        model_id = poll_job(c, job["id"], timeout=WAIT_MS / 1000)["model_id"]
        assert c.patch(f"/v1/models/{model_id}", json={"description": SCRIPT}).status_code == 200
        study = c.post(
            "/v1/studies",
            json={
                "name": SCRIPT,
                "dataset_id": ds["id"],
                "test_fraction": 0.25,
                "runs": [{"params": {"n_iter": 100}, "label": label} for label in (IMG, SVG)],
                "sizes": [20, 40],
                "repeats": 1,
                "targets": [0.5],
            },
        ).json()
        for study_job in c.get(f"/v1/studies/{study['id']}/jobs").json()["items"]:
            poll_job(c, study_job["id"], timeout=WAIT_MS / 1000)
        other = c.post("/v1/jobs", json={"dataset_id": ds["id"], "params": {"n_iter": 100}}).json()
        poll_job(c, other["id"], timeout=WAIT_MS / 1000)
        yield {
            "dataset": ds["id"],
            "by_file": by_file["id"],
            "job": job["id"],
            "other_job": other["id"],
            "model": model_id,
            "study": study["id"],
        }


@pytest.fixture
def tab(browser: Any, service: ApiServer) -> Iterator[tuple[Console, list[str]]]:
    """A console tab that records (and dismisses) every dialog a script opens."""
    context, console = open_console(browser, service)
    dialogs: list[str] = []

    def on_dialog(dialog: Any) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    console.page.on("dialog", on_dialog)
    try:
        yield console, dialogs
        console.check()
    finally:
        context.close()


def _inert(console: Console, dialogs: list[str], route: str) -> str:
    """The page's main text, once no payload has run or made an element on it."""
    page = console.page
    page.wait_for_timeout(300)  # an onerror or onload would have fired by now
    assert dialogs == [], (route, dialogs)
    assert page.locator(MADE_OF_PAYLOADS).count() == 0, route
    return str(page.locator("main").inner_text())


def test_x1_no_payload_runs_on_any_console_page(
    tab: tuple[Console, list[str]], stored: dict[str, int]
) -> None:
    """X1: 13 pages showing the stored payloads, and the hash route, run none of them; each
    shows the payloads it holds as text."""
    console, dialogs = tab
    # What each page shows of them (data set names, labels, feature names, study names and run
    # labels); the pages that show none still hold them (a job's name, a model's description).
    pages = {
        "#/datasets": [IMG, SVG, f"{IMG}.csv"],
        f"#/datasets/{stored['dataset']}": [IMG, SVG],
        f"#/datasets/{stored['by_file']}": [f"{IMG}.csv"],
        "#/jobs": [IMG],
        f"#/jobs/{stored['job']}": [],
        "#/jobs/new": [IMG],
        f"#/compare?ids={stored['job']},{stored['other_job']}": [IMG],
        "#/studies": PAYLOADS,
        "#/studies/new": [IMG],
        f"#/studies/{stored['study']}": PAYLOADS,
        "#/models": [],
        f"#/models/{stored['model']}": [IMG, SVG],
    }
    for route, shown in pages.items():
        console.goto(route)
        text = _inert(console, dialogs, route)
        for payload in shown:
            assert payload in text, (route, payload)
    console.page.goto(f"{console.base}/#/{IMG}")
    console.page.wait_for_function("() => document.body.dataset.page !== undefined", timeout=WAIT_MS)
    assert "No page at /%3Cimg" in _inert(console, dialogs, "hash route")  # as the browser encodes it


def test_x1_the_predict_boxs_error_shows_a_payload_as_text(
    tab: tuple[Console, list[str]], stored: dict[str, int]
) -> None:
    """X1: a payload pasted into the predict box (a feature name the model lacks) comes back in
    the API's error with the model's payload feature names, shown as text."""
    console, dialogs = tab
    console.allow(422, "POST", r"/v1/models/\d+/predict")
    console.goto(f"#/models/{stored['model']}")
    page = console.page
    page.get_by_label("Rows to predict").fill(json.dumps([{SVG: 1, IMG: "x"}]))
    page.get_by_role("button", name="Predict").click()
    page.locator(".form-problem .alert-error").wait_for(timeout=WAIT_MS)
    _inert(console, dialogs, "predict box")
    # The error names the unknown feature and the model's own: all three payloads, as text.
    problem = page.locator(".form-problem", has=page.locator(".alert-error")).inner_text()
    assert all(payload in problem for payload in PAYLOADS), problem


def test_x2_svg_figures_opened_directly_run_nothing(
    tab: tuple[Console, list[str]], stored: dict[str, int]
) -> None:
    """X2: the study's figure (its name and labels are payloads) and a study job's figure,
    opened as pages of their own, open no dialog."""
    console, dialogs = tab
    page = console.page
    for path in (f"/v1/studies/{stored['study']}/plot", f"/v1/jobs/{stored['job']}/plot"):
        answer = page.goto(f"{console.base}{path}")
        assert answer is not None and answer.status == 200, path
        assert answer.headers["content-type"].startswith("image/svg+xml")
        page.wait_for_timeout(300)
        assert dialogs == [], (path, dialogs)
        assert page.locator("script, img, foreignObject").count() == 0, path
