"""The test metrics of a finished job and of its model in a real browser against a real service
(see conftest.py): the numbers with the decision threshold, precision/recall/F1 per class, the
confusion matrix, and the ROC and calibration curves drawn on their canvases."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.cluster.harness import ApiServer, poll_job

from .conftest import WAIT_MS, Console
from .test_console import BLUE, color_pixels, expect


@pytest.fixture(scope="module")
def finished_job(service: ApiServer, data_dir: Path) -> dict[str, Any]:
    with httpx.Client(base_url=service.base, timeout=60) as client:
        heart = data_dir / "heart_scale.svm"
        ds = client.post("/v1/datasets", files={"file": ("heart.svm", heart.read_bytes())}).json()
        body = {
            "dataset_id": ds["id"],
            "test_fraction": 0.3,
            "params": {"loss": "logistic", "sigma": 1e-3, "n_iter": 3000, "random_state": 0},
            "threshold": {"metric": "f1"},
        }
        created = client.post("/v1/jobs", json=body)
        assert created.status_code == 202, created.text
        job = poll_job(client, created.json()["id"], timeout=WAIT_MS / 1000)
    assert job["status"] == "succeeded", job
    return job


def _check_metrics_section(console: Console, job: dict[str, Any]) -> None:
    page = console.page
    section = page.locator("section.test-metrics")
    expect()(section).to_be_visible()
    test = job["metrics"]["test"]
    for text in (
        "Balanced accuracy",
        "ROC AUC",
        "Log-loss",
        "Average precision",
        "Decision threshold",
        "best f1",
    ):
        expect()(section).to_contain_text(text)
    matrix = section.locator("table.confusion-matrix tbody tr")
    expect()(matrix).to_have_count(2)
    cells = [float(c.replace(",", "")) for c in matrix.locator("td").all_inner_texts()]
    assert cells == [v for row in test["confusion_matrix"]["matrix"] for v in row]
    expect()(section.locator("h3", has_text="Per class").locator("..").locator("tbody tr")).to_have_count(2)
    assert color_pixels(section.locator(".roc-curve canvas"), BLUE) > 50
    assert color_pixels(section.locator(".calibration-curve canvas"), BLUE) > 20


def test_a_job_page_shows_its_test_metrics_confusion_matrix_and_curves(
    console: Console, finished_job: dict[str, Any]
) -> None:
    console.goto(f"#/jobs/{finished_job['id']}")
    expect()(console.page.locator("h1 .badge")).to_have_text("succeeded")
    _check_metrics_section(console, finished_job)
    console.shot("job-test-metrics")


def test_a_model_page_shows_the_same_test_metrics(console: Console, finished_job: dict[str, Any]) -> None:
    console.goto(f"#/models/{finished_job['model_id']}")
    _check_metrics_section(console, finished_job)
    console.shot("model-test-metrics")
