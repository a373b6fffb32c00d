"""What a model learned and the warnings for a degenerate fit, in a real browser (see
conftest.py): the model page and the job page draw the largest positive and negative weights as
bars (in the charts' first two colours), list them by name, switch between the classes of a
multiclass model, and show the warnings of a sigma-1e12 fit; a sound fit shows none."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.cluster.harness import ApiServer, poll_job

from .conftest import WAIT_MS, Console
from .test_console import BLUE, RED, api, color_pixels, expect


def _trained(client: httpx.Client, **body: Any) -> dict[str, Any]:
    r = client.post("/v1/jobs", json=body)
    assert r.status_code == 202, r.text
    job = poll_job(client, r.json()["id"], timeout=WAIT_MS / 1000)
    assert job["status"] == "succeeded", job
    return job  # type: ignore[no-any-return]


def _three_classes() -> bytes:
    lines = ["size,weight,colour,grade"]
    for i in range(300):
        size, weight, colour = i % 17, (i * 7) % 23, ("red", "green", "blue")[i % 3]
        grade = "small" if size + (colour == "red") * 4 < 7 else "medium" if size < 13 else "large"
        lines.append(f"{size},{weight},{colour},{grade}")
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture(scope="module")
def jobs(service: ApiServer, data_dir: Path) -> Iterator[dict[str, dict[str, Any]]]:
    with api(service) as client:
        heart = client.post(
            "/v1/datasets", files={"file": ("heart.svm", (data_dir / "heart_scale.svm").read_bytes())}
        ).json()["id"]
        grades = client.post("/v1/datasets", files={"file": ("grades.csv", _three_classes())}).json()["id"]
        lbfgs = {"solver": "lbfgs", "params": {"loss": "logistic", "sigma": 1e-3}, "test_fraction": 0.3}
        yield {
            "sound": _trained(client, dataset_id=heart, **lbfgs),
            "zero": _trained(
                client,
                dataset_id=heart,
                solver="scd",
                params={"loss": "logistic", "sigma": 1e12},
                test_fraction=0.3,
            ),
            "multiclass": _trained(client, dataset_id=grades, **lbfgs),
        }


def test_the_model_page_draws_the_weights_as_bars_and_lists_them_by_name(
    console: Console, jobs: dict[str, dict[str, Any]]
) -> None:
    page = console.page
    console.goto(f"#/models/{jobs['sound']['model_id']}")
    section = page.locator("section.coefficients")
    expect()(section.get_by_role("heading", name="What the model learned")).to_be_visible()
    expect()(section.locator(".coefficient-facts")).to_contain_text("13 non-zero weights")
    canvas = section.locator("canvas")
    assert color_pixels(canvas, BLUE) > 50 and color_pixels(canvas, RED) > 50
    section.get_by_text("The weights by name").click()
    rows = section.locator("table tbody tr")
    expect()(rows).to_have_count(13)
    assert {rows.nth(i).locator("td").first.inner_text() for i in range(13)} == {str(j) for j in range(1, 14)}
    expect()(page.locator(".fit-warnings .alert")).to_have_count(0)
    console.shot("model-coefficients")


def test_a_multiclass_model_shows_each_class_in_turn(
    console: Console, jobs: dict[str, dict[str, Any]]
) -> None:
    page = console.page
    console.goto(f"#/models/{jobs['multiclass']['model_id']}")
    section = page.locator("section.coefficients")
    pick = section.get_by_label("Class")
    section.get_by_text("The weights by name").click()
    first = section.locator("table tbody").inner_text()
    labels = pick.locator("option").all_inner_texts()
    assert sorted(labels) == ["large", "medium", "small"]
    pick.select_option(label=labels[1])
    expect()(section.locator("table tbody")).not_to_have_text(first)
    assert "colour=" in section.locator("table tbody").inner_text()


def test_a_degenerate_fit_is_warned_on_the_job_and_the_model_page(
    console: Console, jobs: dict[str, dict[str, Any]]
) -> None:
    page = console.page
    job = jobs["zero"]
    console.goto(f"#/jobs/{job['id']}")
    warnings = page.locator(".fit-warnings .alert-warning")
    expect()(warnings.first).to_contain_text(
        'sigma 1e12 leaves every weight at 0: every row gets about the same score; try sigma: "auto"'
    )
    expect()(warnings).to_have_count(2)
    expect()(page.locator("section.coefficients .coefficient-facts")).to_contain_text("0 non-zero weights")
    console.shot("job-warnings")
    console.goto(f"#/models/{job['model_id']}")
    expect()(page.locator(".fit-warnings .alert-warning")).to_have_count(2)
