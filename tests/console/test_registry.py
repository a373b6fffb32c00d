"""The console as a model registry and a workbench, in a real browser against a real service: a
model's name, version, aliases (one moved from the page), tags, description and exports; lists
searched, filtered, sorted and paged by the API; a data set's schema; a running job's time left;
and every kind of page visited with no failed request and no console error (conftest.py checks
both after each test)."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.cluster.harness import ApiServer, poll_job

from .conftest import WAIT_MS, Console

# A credit-scoring table as R writes it: a label column by name, text columns, NA cells.
CREDIT_CSV = "\n".join(
    ["class,income,home,purpose,age"]
    + [
        f"{'good' if i % 3 else 'bad'},{'NA' if i % 7 == 0 else 1000 + 37 * i},"
        f"{['rent', 'own', 'NA'][i % 3]},{['car', 'house', 'tv', 'other'][i % 4]},{20 + i % 50}"
        for i in range(120)
    ]
).encode()
# More data sets than one page of the list holds (50 a page).
EXTRA_DATASETS = 55
LONG = {"loss": "logistic", "sigma": 1e-4, "n_iter": 10**9, "random_state": 0}


def expect() -> Any:
    from playwright.sync_api import expect as playwright_expect

    playwright_expect.set_options(timeout=WAIT_MS)
    return playwright_expect


def _ok(response: httpx.Response) -> Any:
    assert response.is_success, response.text
    return response.json() if response.content else None


@pytest.fixture(scope="module")
def api(service: ApiServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service.base, timeout=60) as client:
        yield client


@pytest.fixture(scope="module")
def registry(api: httpx.Client) -> dict[str, Any]:
    """Two versions of the model "credit" (one tagged, one with the alias prod), trained on the
    credit table; a second copy of that table whose model outlives it; many small data sets."""
    files = {"file": ("credit.csv", CREDIT_CSV)}
    credit = _ok(api.post("/v1/datasets", files=files, data={"name": "credit", "label_column": "class"}))
    doomed = _ok(api.post("/v1/datasets", files=files, data={"name": "credit-old", "label_column": "class"}))
    for i in range(EXTRA_DATASETS):
        _ok(
            api.post(
                "/v1/datasets",
                files={"file": (f"s{i}.svm", b"+1 1:1\n-1 2:1\n")},
                data={"name": f"small-{i:02d}"},
            )
        )
    body = {"solver": "lbfgs", "params": {"loss": "logistic", "sigma": 1e-3, "n_iter": 200}}
    jobs = [
        _ok(api.post("/v1/jobs", json={**body, "dataset_id": credit["id"], "model_name": "credit", **labels}))
        for labels in ({"name": "credit first", "tags": ["baseline"]}, {"name": "credit second"})
    ]
    gone = _ok(api.post("/v1/jobs", json={**body, "dataset_id": doomed["id"]}))
    models = []
    for job in [*jobs, gone]:
        done = poll_job(api, job["id"])
        assert done["status"] == "succeeded", done
        models.append(done["model_id"])
    _ok(api.put("/v1/aliases/credit@prod", json={"model_id": models[0]}))
    _ok(api.delete(f"/v1/datasets/{doomed['id']}", params={"force": "true"}))
    rows = "".join(f"{1 if i % 2 else -1} 1:{i % 5} 2:{i % 3}\n" for i in range(80)).encode()
    numeric = _ok(api.post("/v1/datasets", files={"file": ("n.svm", rows)}, data={"name": "numeric"}))
    study = _ok(
        api.post(
            "/v1/studies",
            json={
                "name": "sizes",
                "dataset_id": numeric["id"],
                "test_fraction": 0.25,
                "runs": [{"solver": "pgs", "params": {"loss": "logistic", "n_iter": 200}}],
                "sizes": [40],
                "repeats": 1,
                "targets": [0.6],
            },
        )
    )
    return {"credit": credit["id"], "jobs": [j["id"] for j in jobs], "models": models, "study": study["id"]}


def test_a_model_page_is_a_registry_entry(
    console: Console, api: httpx.Client, registry: dict[str, Any]
) -> None:
    first, second, _ = registry["models"]
    page = console.page
    console.goto(f"#/models/{second}")
    expect()(page.locator("h1")).to_contain_text("credit v2")
    model = api.get(f"/v1/models/{second}").json()
    # Density over the model's own weights (the one-hot indicators), never above 100 %.
    assert model["n_weights"] > model["n_features"]
    sparsity = f"{model['nnz_weights']} of {model['n_weights']} weights non-zero"
    expect()(page.locator(".facts").first).to_contain_text(sparsity)
    expect()(page.get_by_role("heading", name="Preprocessing")).to_be_visible()

    # Move credit@prod from version 1 to this version, asked twice.
    page.get_by_label("Alias", exact=True).select_option("prod")
    page.get_by_role("button", name="Move alias here…").click()
    expect()(page.locator(".confirm")).to_contain_text(
        f"Move credit@prod from model #{first} to model #{second}?"
    )
    page.get_by_role("button", name="Point credit@prod here").click()
    expect()(page.locator(".alias")).to_have_text("credit@prod")
    assert api.get("/v1/aliases/credit@prod").json()["model_id"] == second

    # Description and tags, edited in place.
    page.get_by_label("Description", exact=True).fill("scored on the R export")
    page.get_by_label("Tags", exact=True).fill("prod, credit")
    page.get_by_role("button", name="Save").click()
    expect()(page.locator(".facts").first).to_contain_text("scored on the R export")
    saved = api.get(f"/v1/models/{second}").json()
    assert saved["description"] == "scored on the R export" and saved["tags"] == ["prod", "credit"]

    # Each export button downloads the real file.
    for fmt, check in [
        ("npz", lambda b: zipfile.ZipFile(io.BytesIO(b)).namelist()),
        ("json", lambda b: json.loads(b)["format"] == "pgs-model"),
        ("onnx", lambda b: len(b) > 100),
    ]:
        with page.expect_download() as info:
            page.locator(f"[data-export={fmt}]").click()
        download = info.value
        assert download.suggested_filename == f"model-{second}.{fmt}"
        content = Path(download.path()).read_bytes()
        assert check(content), fmt
        assert content == api.get(f"/v1/models/{second}/export", params={"format": fmt}).content
    console.shot("model-registry")


def test_lists_search_filter_sort_and_page_on_the_server(console: Console, registry: dict[str, Any]) -> None:
    page = console.page
    console.goto("#/datasets")
    summary = page.locator(".list-summary")
    expect()(summary).to_contain_text("data sets 1–50, more on the next page")
    page.get_by_role("button", name="Next page").click()
    # credit, numeric and the small ones (credit-old is deleted).
    expect()(summary).to_contain_text(f"data sets 51–{EXTRA_DATASETS + 2}")
    page.get_by_role("button", name="Previous page").click()
    expect()(summary).to_contain_text("data sets 1–50")
    page.get_by_label("Search", exact=True).fill("SMALL-0")
    expect()(page.locator("tbody tr")).to_have_count(10)
    page.locator("[data-sort=name]").click()
    expect()(page.locator("tbody tr").first).to_contain_text("small-00")
    page.locator("[data-sort=name]").click()
    expect()(page.locator("tbody tr").first).to_contain_text("small-09")
    assert "sort=-name" in page.url and "q=SMALL-0" in page.url

    console.goto("#/jobs")
    page.get_by_label("Tag", exact=True).fill("baseline")
    rows = page.locator("tbody tr")
    expect()(rows).to_have_count(1)
    expect()(rows.first).to_contain_text("credit first")
    page.get_by_label("Tag", exact=True).fill("")
    page.get_by_label("Search", exact=True).fill("credit")
    expect()(rows).to_have_count(2)
    page.locator("[data-sort=name]").click()
    expect()(rows.first).to_contain_text("credit first")

    console.goto("#/models?q=credit&sort=-version")
    expect()(page.locator("tbody tr")).to_have_count(2)
    expect()(page.locator("tbody tr").first).to_contain_text("2")
    console.shot("models-list")


def test_a_data_set_page_shows_its_schema(console: Console, registry: dict[str, Any]) -> None:
    page = console.page
    console.goto(f"#/datasets/{registry['credit']}")
    schema = page.locator(".dataset-schema")
    expect()(schema).to_contain_text("class")
    expect()(schema).to_contain_text("income, home, purpose, age")
    expect()(schema).to_contain_text("Text columnshome, purpose")
    expect()(schema).to_contain_text("guessed from the labels")
    columns = page.locator("section[aria-labelledby=columns-title]")
    expect()(columns.locator("tr", has_text="home")).to_contain_text("rent")
    expect()(columns.locator("tr", has_text="income")).to_contain_text("18")  # its NA cells
    # Its own jobs and models, as the API's data set filters give them, and no other's.
    for job in registry["jobs"]:
        # In the jobs table and again as the "From job" of its model.
        expect()(page.locator(f"a[href='#/jobs/{job}']")).to_have_count(2)
    for model in registry["models"][:2]:
        expect()(page.locator(f"a[href='#/models/{model}']")).to_have_count(1)
    expect()(page.locator(f"a[href='#/models/{registry['models'][2]}']")).to_have_count(0)
    console.shot("dataset-schema")
    console.goto(f"#/models?dataset={registry['credit']}")
    expect()(page.locator("tbody tr")).to_have_count(2)


def test_a_running_job_shows_its_time_left(
    console: Console, api: httpx.Client, registry: dict[str, Any]
) -> None:
    job = _ok(
        api.post("/v1/jobs", json={"dataset_id": registry["credit"], "params": LONG, "time_budget_s": 120})
    )
    try:
        page = console.page
        console.goto(f"#/jobs/{job['id']}")
        expect()(page.locator(".job-timing")).to_contain_text("left")
        console.goto("#/jobs")
        expect()(page.locator(f"tr[data-key='{job['id']}'] .eta")).to_contain_text("left")
    finally:
        api.post(f"/v1/jobs/{job['id']}/cancel")
        poll_job(api, job["id"])


def test_a_job_choosing_sigma_says_so(console: Console, api: httpx.Client, registry: dict[str, Any]) -> None:
    # A path of 1,200 fits: far from done while the page is looked at.
    body = {
        "dataset_id": registry["credit"],
        "params": {**LONG, "sigma": "auto", "n_iter": 500_000},
        "selection": {"grid": [10.0 ** (-k / 20) for k in range(400)], "folds": 3, "patience": None},
        "time_budget_s": 120,
    }
    job = _ok(api.post("/v1/jobs", json=body))
    try:
        console.goto(f"#/jobs/{job['id']}")
        expect()(console.page.get_by_text("choosing sigma: fit")).to_contain_text("of 1,200 of the path")
        expect()(console.page.locator(".job-timing")).to_contain_text("left in this phase")
    finally:
        api.post(f"/v1/jobs/{job['id']}/cancel")
        poll_job(api, job["id"])


def test_a_dual_solver_s_job_draws_its_duality_gap(
    console: Console, api: httpx.Client, registry: dict[str, Any]
) -> None:
    body = {"dataset_id": registry["credit"], "solver": "sdca", "params": {"loss": "logistic", "sigma": 1e-3}}
    job = poll_job(api, _ok(api.post("/v1/jobs", json=body))["id"])
    assert job["status"] == "succeeded", job
    page = console.page
    console.goto(f"#/jobs/{job['id']}")
    gap = page.locator("figure", has_text="Duality gap")
    expect()(gap).to_be_visible()
    expect()(gap.locator("canvas").first).to_be_visible()
    page.get_by_text("Checkpoints (the data of the curves)").click()
    expect()(page.locator(".checkpoints th", has_text="Duality gap")).to_have_count(1)
    # A primal solver's job has no gap to draw.
    console.goto(f"#/jobs/{registry['jobs'][0]}")
    expect()(page.locator("figure", has_text="Training objective")).to_be_visible()
    expect()(page.locator("figure", has_text="Duality gap")).to_be_hidden()
    assert not console.failures, console.failures


def test_every_page_loads_without_a_failed_request(console: Console, registry: dict[str, Any]) -> None:
    deleted_model = registry["models"][2]
    routes = [
        "#/datasets",
        f"#/datasets/{registry['credit']}",
        "#/jobs",
        "#/jobs/new",
        f"#/jobs/{registry['jobs'][0]}",
        "#/compare",
        "#/studies",
        "#/studies/new",
        f"#/studies/{registry['study']}",
        "#/models",
        f"#/models/{registry['models'][0]}",
        f"#/models/{deleted_model}",
    ]
    for route in routes:
        console.goto(route)
        assert not console.failures, (route, console.failures)
    # A model keeps its training set's name once that data set is deleted.
    expect()(console.page.locator(".deleted-dataset")).to_have_text("credit-old (deleted)")
