"""The console in a real browser against a real service: upload, train, watch, compare, study,
cancel, predict, and the API key, the way a person would do them (see conftest.py).

Module fixtures set up data through the page too (uploads, jobs started from the form), so each
test reads on its own; every page visited is saved under var/screenshots/ at two widths.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.cluster.harness import ApiServer, poll_job, wait_until

from .conftest import WAIT_MS, Console, open_console

BLUE, RED = (0x1F, 0x77, 0xB4), (0xD6, 0x27, 0x28)  # the charts' first two colours
# Long enough (~10 s here) to watch a job's progress bar move.
WATCHABLE_ITERATIONS = 15_000_000


def expect() -> Any:
    from playwright.sync_api import expect as playwright_expect

    playwright_expect.set_options(timeout=WAIT_MS)
    return playwright_expect


def color_pixels(locator: Any, rgb: tuple[int, int, int], tolerance: int = 40) -> int:
    """Pixels of (about) this colour on a canvas: proof the curve was drawn, not only its element."""
    return int(
        locator.evaluate(
            """(canvas, [r, g, b, tol]) => {
             const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
             let n = 0;
             for (let i = 0; i < data.length; i += 4) {
               if (data[i + 3] > 200 && Math.abs(data[i] - r) < tol && Math.abs(data[i + 1] - g) < tol
                   && Math.abs(data[i + 2] - b) < tol) n += 1;
             }
             return n;
           }""",
            [*rgb, tolerance],
        )
    )


def api(server: ApiServer) -> httpx.Client:
    return httpx.Client(base_url=server.base, timeout=60)


def fill_solver(page: Any, params: dict[str, Any], prefix: str = "", solver: str = "pgs") -> None:
    """Choose the solver in a solver editor and fill the inputs of ``params``."""
    scope = page.locator(f'.solver-editor:has([name="{prefix}solver"])')
    scope.locator(f'[name="{prefix}solver"]').select_option(solver)
    for name, value in params.items():
        control = scope.locator(f'[name="{prefix}params.{name}"]')
        text = value if isinstance(value, str) else json.dumps(value)
        if control.evaluate("el => el.tagName") == "SELECT":
            control.select_option(label=text)
        else:
            control.fill(text)


def start_job(page: Any, dataset_id: int, params: dict[str, Any], targets: str = "") -> int:
    """Fill the New job form and submit it; returns the new job's id."""
    page.get_by_label("Training data set").select_option(str(dataset_id))
    page.get_by_label("Held-out fraction").fill("0.25")
    fill_solver(page, params)
    page.get_by_label("Targets", exact=True).fill(targets)
    page.get_by_role("button", name="Start job").click()
    queued = page.locator(".alert-success").filter(has_text="queued").last
    expect()(queued).to_be_visible()
    return int(queued.locator("a").first.inner_text().lstrip("#"))


@pytest.fixture(scope="module")
def datasets(browser: Any, service: ApiServer, data_dir: Path) -> dict[str, int]:
    """a9a through the file picker and heart by drag and drop, through the page."""
    context, tab = open_console(browser, service)
    page = tab.page
    try:
        tab.goto("#/datasets")
        page.get_by_label("Choose a file").set_input_files(data_dir / "a9a.train.svm")
        page.get_by_text("Options (name").click()
        page.get_by_label("name", exact=True).fill("a9a")
        page.get_by_role("button", name="Upload").click()
        uploaded = page.locator(".alert-success")
        expect()(uploaded).to_contain_text("Uploaded a9a: 32,561 rows × 123 features, binary.")

        # A drop carries a File the way a file manager's drag does.
        transfer = page.evaluate_handle(
            """(text) => { const t = new DataTransfer();
                           t.items.add(new File([text], 'heart_scale.svm', {type: 'text/plain'}));
                           return t; }""",
            (data_dir / "heart_scale.svm").read_text(),
        )
        page.dispatch_event(".drop-zone", "drop", {"dataTransfer": transfer})
        expect()(page.locator(".chosen-file")).to_contain_text("heart_scale.svm")
        page.get_by_role("button", name="Upload").click()
        expect()(uploaded).to_contain_text("Uploaded heart_scale.svm: 270 rows × 13 features")
        tab.check()
    finally:
        context.close()
    with api(service) as client:
        return {d["name"]: d["id"] for d in client.get("/v1/datasets").json()["items"]}


@pytest.fixture(scope="module")
def two_jobs(browser: Any, service: ApiServer, datasets: dict[str, int]) -> tuple[int, int]:
    """PGS with p = 2 and p = 1.8 on a9a, started from the New job form."""
    context, tab = open_console(browser, service)
    try:
        tab.goto("#/jobs/new")
        ids = tuple(
            start_job(
                tab.page,
                datasets["a9a"],
                {
                    "loss": "logistic",
                    "p": p,
                    "n_iter": WATCHABLE_ITERATIONS,
                    "random_state": 0,
                },
                targets="0.84, 0.845",
            )
            for p in (2.0, 1.8)
        )
        expect()(tab.page.get_by_role("link", name="compare the 2 jobs started here")).to_be_visible()
        tab.check()
    finally:
        context.close()
    return ids  # type: ignore[return-value]


def test_datasets_page_lists_the_uploads(console: Console, datasets: dict[str, int]) -> None:
    page = console.page
    console.goto("#/datasets")
    row = page.locator("tbody tr", has_text="a9a")
    expect()(row).to_contain_text("32,561")
    expect()(row).to_contain_text("451,592")
    expect()(page.locator("tbody tr", has_text="heart_scale.svm")).to_contain_text("270")
    console.shot("datasets")
    row.get_by_role("link", name="a9a").click()
    expect()(page.get_by_role("heading", level=1)).to_contain_text("a9a")
    expect()(page.locator(".facts").first).to_contain_text("-1, 1")
    # The columns' statistics: the first 20 of the columns that occur in the svmlight file.
    heading = page.get_by_role("heading", name=re.compile("Columns with a value"))
    columns = page.locator("section", has=heading)
    expect()(columns.locator("tbody tr")).to_have_count(20)
    expect()(columns.locator("tbody tr").first).to_contain_text("numeric")
    console.shot("dataset")


def test_a_job_page_shows_progress_moving_and_draws_its_curves(
    console: Console, two_jobs: tuple[int, int]
) -> None:
    page = console.page
    console.goto(f"#/jobs/{two_jobs[0]}")
    bar = page.locator(".job-progress progress")
    seen: list[float] = []
    # The page updates itself: the bar's value must grow while the job runs.
    while len({v for v in seen if 0 < v < 1}) < 2:
        seen.append(float(bar.evaluate("el => el.value")))
        assert seen[-1] < 1 or len(seen) > 1, "the job ended before its progress could be watched"
        assert len(seen) < 600, f"the progress bar did not move: {seen[-5:]}"
        page.wait_for_timeout(100)
    assert seen == sorted(seen), seen
    expect()(page.locator("h1 .badge")).to_have_text("succeeded")
    assert bar.evaluate("el => el.value") == 1

    score = page.locator(".chart-box").first.locator("canvas")
    assert color_pixels(score, BLUE) > 100
    objective = page.locator(".chart-box").nth(1).locator("canvas")
    assert color_pixels(objective, BLUE) > 100
    # Values on hover: the legend shows the point under the cursor.
    over = page.locator(".chart-box").first.locator(".u-over")
    size = over.bounding_box()
    over.hover(position={"x": size["width"] * 0.6, "y": size["height"] * 0.5})
    legend_value = page.locator(".chart-box").first.locator(".u-legend .u-value").nth(1)
    expect()(legend_value).to_have_text(re.compile(r"^0\.\d+"))
    expect()(page.locator("section", has_text="Time to target").locator("tbody tr")).to_have_count(2)
    console.shot("job")

    # The other x axis, on a linear scale: redrawn, still with pixels.
    page.get_by_label("samples seen").check()
    page.get_by_label("log x axis").uncheck()
    expect()(page.locator(".chart-box").first).to_contain_text("samples seen")
    assert color_pixels(score, BLUE) > 100


def test_sigma_auto_from_the_form_shows_the_chosen_sigma_and_its_path(
    console: Console, datasets: dict[str, int]
) -> None:
    page = console.page
    console.goto("#/jobs/new")
    page.get_by_label("Training data set").select_option(str(datasets["heart_scale.svm"]))
    fill_solver(page, {"loss": "logistic", "random_state": 0})
    page.get_by_label("choose sigma by cross-validation").check()
    page.locator('[name="selection.folds"]').fill("3")
    page.locator('[name="selection.n_sigmas"]').fill("4")
    page.get_by_role("button", name="Start job").click()
    queued = page.locator(".alert-success").filter(has_text="queued").last
    expect()(queued).to_be_visible()
    queued.locator("a").first.click()
    expect()(page.locator("h1 .badge")).to_have_text("succeeded")
    chosen = page.locator(".chosen-sigma")
    expect()(chosen).to_have_text(re.compile(r"^\d"))
    section = page.locator("section", has=page.get_by_role("heading", name="Sigma selection"))
    expect()(section).to_contain_text("3-fold")
    assert color_pixels(section.locator("canvas"), BLUE) > 50
    assert color_pixels(section.locator("canvas"), RED) > 10  # the chosen sigma's marker
    console.shot("job-selection")


def test_early_stopping_from_the_form_shows_why_the_job_stopped(
    console: Console, datasets: dict[str, int]
) -> None:
    page = console.page
    console.goto("#/jobs/new")
    page.get_by_label("Training data set").select_option(str(datasets["a9a"]))
    # The catalog lists early stopping's parameters with the solver's others.
    fill_solver(page, {"sigma": 1e-4, "early_stopping": True, "n_iter_no_change": 3, "random_state": 0})
    page.get_by_role("button", name="Start job").click()
    queued = page.locator(".alert-success").filter(has_text="queued").last
    expect()(queued).to_be_visible()
    queued.locator("a").first.click()
    expect()(page.locator("h1 .badge")).to_have_text("succeeded")
    expect()(page.locator("dd", has_text="no_improvement")).to_be_visible()
    # gd cannot stop early: the form shows why next to the field.
    console.allow(422, "POST", "/v1/jobs")
    console.goto("#/jobs/new")
    page.get_by_label("Training data set").select_option(str(datasets["a9a"]))
    fill_solver(page, {"early_stopping": True}, solver="gd")
    page.get_by_role("button", name="Start job").click()
    error = page.locator('[data-field="params.early_stopping"] > .field-error')
    expect()(error).to_contain_text("full-gradient")


def test_compare_overlays_two_jobs_with_their_times_to_target(
    console: Console, service: ApiServer, two_jobs: tuple[int, int]
) -> None:
    with api(service) as client:
        for job_id in two_jobs:
            assert poll_job(client, job_id, timeout=WAIT_MS / 1000)["status"] == "succeeded"
    page = console.page
    console.goto(f"#/compare?ids={two_jobs[0]},{two_jobs[1]}")
    table = page.locator("table.ttt")
    expect()(table.locator("tbody tr")).to_have_count(2)
    expect()(table.locator("thead")).to_contain_text("to 0.845")
    expect()(table.locator(".fastest")).not_to_have_count(0)
    expect()(page.locator(".chart-box").first.locator(".u-legend")).to_contain_text(f"#{two_jobs[1]} pgs")
    canvas = page.locator(".chart-box").first.locator("canvas")
    assert color_pixels(canvas, BLUE) > 100 and color_pixels(canvas, RED) > 100
    console.shot("compare")


def test_a_refused_request_shows_its_errors_next_to_the_fields(
    console: Console, datasets: dict[str, int]
) -> None:
    console.allow(422, "POST", "/v1/jobs")
    page = console.page
    console.goto("#/jobs/new")
    page.get_by_label("Training data set").select_option(str(datasets["heart_scale.svm"]))
    fill_solver(page, {"loss": "logistic", "p": 2.5})
    page.get_by_role("button", name="Start job").click()
    error = page.locator('[data-field^="params"] > .field-error').filter(has_text="p: expected")
    expect()(error).to_be_visible()
    expect()(error).to_contain_text("float in [1.01, 2], got 2.5")
    expect()(page.locator(".form-problem")).to_contain_text("The service refused the request")
    console.shot("new-job-error")

    fill_solver(page, {"loss": "logistic"})
    page.get_by_label("Held-out fraction").fill("1.5")
    page.get_by_role("button", name="Start job").click()
    fraction_error = page.locator('[data-field="test_fraction"] > .field-error')
    expect()(fraction_error).to_contain_text("less than 1")
    expect()(page.get_by_label("Held-out fraction")).to_have_attribute("aria-invalid", "true")
    expect()(page.locator('[data-field^="params"] > .field-error').first).to_be_hidden()


def test_the_job_form_weighs_classes_and_names_a_refused_weight_column(
    console: Console, service: ApiServer, datasets: dict[str, int]
) -> None:
    console.allow(422, "POST", "/v1/jobs")
    page = console.page
    console.goto("#/jobs/new")
    page.get_by_label("Training data set").select_option(str(datasets["heart_scale.svm"]))
    fill_solver(page, {"loss": "logistic", "class_weight": {"1": 3}, "random_state": 0})
    page.get_by_label("Weight column").fill("w")
    page.get_by_role("button", name="Start job").click()
    error = page.locator('[data-field="weight_column"] > .field-error')
    expect()(error).to_contain_text("svmlight")  # an svmlight file has no named columns

    page.get_by_label("Weight column").fill("")
    page.get_by_role("button", name="Start job").click()
    queued = page.locator(".alert-success").filter(has_text="queued").last
    expect()(queued).to_be_visible()
    job_id = int(queued.locator("a").first.inner_text().lstrip("#"))
    with api(service) as client:
        job = poll_job(client, job_id, timeout=WAIT_MS / 1000)
    assert job["status"] == "succeeded" and job["params"]["class_weight"] == {"1": 3}


def test_the_job_form_follows_the_solver_catalog(
    console: Console, service: ApiServer, data_dir: Path, datasets: dict[str, int]
) -> None:
    """The form is GET /v1/solvers: every solver, the losses of the chosen one for the data set's
    task, each parameter with its default and range; the API's error lands next to its field."""
    console.allow(422, "POST", "/v1/jobs")
    page = console.page
    with api(service) as client:
        catalog = client.get("/v1/solvers").json()["solvers"]
        abalone = client.post(
            "/v1/datasets", files={"file": ("abalone.svm", (data_dir / "abalone.svm").read_bytes())}
        ).json()["id"]
    console.goto("#/jobs/new")
    solver = page.get_by_label("Solver", exact=True)
    # The catalog's solvers, and "auto" (the service chooses among them when the job is created).
    options = solver.locator("option").evaluate_all("os => os.map(o => o.value)")
    assert options == [*(s["name"] for s in catalog), "auto"]
    loss_options = 'el => [...el.options].map(o => o.value ? o.textContent : "").filter(Boolean)'
    loss = page.get_by_label("loss", exact=True)
    page.get_by_label("Training data set").select_option(str(datasets["heart_scale.svm"]))
    assert loss.evaluate(loss_options) == catalog[0]["tasks"][0]["losses"]  # pgs: every loss
    solver.select_option("gcd")
    gcd = next(s for s in catalog if s["name"] == "gcd")
    assert (
        loss.evaluate(loss_options) == gcd["tasks"][0]["losses"] and "hinge" not in gcd["tasks"][0]["losses"]
    )
    expect()(page.locator('[data-field="params.sigma"] .hint')).to_contain_text("(0, 1e+12]")
    expect()(page.get_by_label("sigma", exact=True)).to_have_attribute("placeholder", "0.00001")
    page.get_by_label("Training data set").select_option(str(abalone))
    assert loss.evaluate(loss_options) == ["huber", "squared"]

    page.get_by_label("Training data set").select_option(str(datasets["heart_scale.svm"]))
    fill_solver(page, {"loss": "logistic", "p": 2.5, "n_iter": 1000, "sampling": "replacement"})
    expect()(page.get_by_label("p", exact=True)).to_have_attribute("placeholder", "2")
    page.get_by_role("button", name="Start job").click()
    # The API's error lands next to the one field it names.
    expect()(page.locator('[data-field="params.p"] > .field-error')).to_contain_text(
        "p: expected float in [1.01, 2]"
    )
    expect()(page.get_by_label("p", exact=True)).to_have_attribute("aria-invalid", "true")

    job_id = start_job(
        page,
        datasets["heart_scale.svm"],
        {"loss": "logistic", "p": 1.5, "n_iter": 1000, "sampling": "replacement"},
    )
    with api(service) as client:
        params = client.get(f"/v1/jobs/{job_id}").json()["params"]
    # The form sent what was typed; the service adds the seed it drew for the run.
    assert isinstance(params.pop("random_state"), int)
    assert params == {"loss": "logistic", "p": 1.5, "n_iter": 1000, "sampling": "replacement"}
    console.shot("new-job-catalog")


def test_auto_from_the_form_shows_the_chosen_solver_and_why(
    console: Console, service: ApiServer, datasets: dict[str, int]
) -> None:
    page = console.page
    console.goto("#/jobs/new")
    page.get_by_label("Training data set").select_option(str(datasets["heart_scale.svm"]))
    fill_solver(page, {"sigma": 1e-3, "random_state": 0}, solver="auto")
    expect()(page.locator(".solver-editor")).to_contain_text("pgs, sdca or lbfgs")
    page.get_by_role("button", name="Start job").click()
    queued = page.locator(".alert-success").filter(has_text="queued").last
    expect()(queued).to_be_visible()
    job_id = int(queued.locator("a").first.inner_text().lstrip("#"))
    with api(service) as client:
        job = client.get(f"/v1/jobs/{job_id}").json()
    assert job["solver"] == "pgs" and job["solver_choice"]["requested"] == "auto"
    console.goto(f"#/jobs/{job_id}")
    expect()(page.get_by_text("Chosen by auto")).to_be_visible()
    expect()(page.get_by_text(job["solver_choice"]["reason"])).to_be_visible()


def test_jobs_list_updates_live_and_cancels_and_a_used_dataset_is_not_deleted(
    console: Console, service: ApiServer, datasets: dict[str, int]
) -> None:
    console.allow(409, "DELETE", r"/v1/datasets/\d+")
    page = console.page
    console.goto("#/jobs/new")
    job_id = start_job(page, datasets["a9a"], {"loss": "hinge", "n_iter": 2_000_000_000})

    console.goto(f"#/datasets/{datasets['a9a']}")
    page.get_by_role("button", name="Delete…").click()
    page.get_by_role("button", name=f"Delete data set {datasets['a9a']}").click()
    refusal = page.locator(".confirm .alert-error")
    expect()(refusal).to_contain_text(f"used by queued or running job(s) [{job_id}]")

    # Updates leave the keyboard focus alone: on the job's page and in the list.
    for route, scope in ((f"#/jobs/{job_id}", ".job-progress"), ("#/jobs", f'tr[data-key="{job_id}"]')):
        console.goto(route)
        cancel = page.get_by_role("button", name=f"Cancel job {job_id}")
        cancel.focus()
        bar = page.locator(f"{scope} progress")
        first = float(bar.evaluate("el => el.value"))
        wait_until(
            lambda: float(bar.evaluate("el => el.value")) > first,  # noqa: B023
            WAIT_MS / 1000,
            f"the progress bar of {route} moved without a reload",
        )
        expect()(cancel).to_be_focused()
    console.shot("jobs")
    row = page.locator(f'tr[data-key="{job_id}"]')
    row.get_by_role("button", name=f"Cancel job {job_id}").click()
    expect()(row.locator(".badge")).to_have_text("cancelled")
    with api(service) as client:
        assert client.get(f"/v1/jobs/{job_id}").json()["stop_reason"] == "cancelled"

    page.get_by_label("Status").select_option("cancelled")
    expect()(page.locator("tbody tr")).to_have_count(1)
    assert "status=cancelled" in page.url
    # The data set and solver filters are the API's: the request names them.
    heart = datasets["heart_scale.svm"]
    with page.expect_request(lambda r: f"/v1/jobs?limit=100&status=cancelled&dataset_id={heart}" in r.url):
        page.get_by_label("Data set").select_option(str(heart))
    expect()(page.locator(f'tr[data-key="{job_id}"]')).to_have_count(0)
    page.get_by_label("Data set").select_option(str(datasets["a9a"]))
    with page.expect_request(lambda r: "solver=pgs" in r.url):
        page.get_by_label("Solver").select_option("pgs")
    expect()(page.locator(f'tr[data-key="{job_id}"]')).to_be_visible()
    assert f"dataset={datasets['a9a']}" in page.url and "solver=pgs" in page.url


def test_a_study_shows_its_figure_and_downloads_it(console: Console, datasets: dict[str, int]) -> None:
    page = console.page
    console.goto("#/studies/new")
    page.get_by_label("Name", exact=True).fill("heart: p = 2 against p = 1.8")
    page.get_by_label("Training data set").select_option(str(datasets["heart_scale.svm"]))
    fill_solver(page, {"loss": "logistic", "n_iter": 3000}, prefix="runs.0.")
    page.get_by_role("button", name="Add a run").click()
    page.get_by_role("button", name="Add a run").click()
    page.get_by_role("button", name="Remove this run").nth(1).click()
    # The third run is now the second: its inputs (and where its errors land) say so.
    expect()(page.locator('[name="runs.2.solver"]')).to_have_count(0)
    expect()(page.locator('[data-field="runs.1.params.p"] [name="runs.1.params.p"]')).to_have_count(1)
    fill_solver(page, {"loss": "logistic", "p": 1.8, "n_iter": 3000}, prefix="runs.1.")
    page.get_by_label("Training-set sizes m").fill("50, 100, 200")
    page.get_by_label("Repeats").fill("2")
    page.get_by_label("Targets", exact=True).fill("0.7, 0.75")
    page.get_by_role("button", name="Start study").click()

    expect()(page).to_have_url(re.compile(r"#/studies/\d+$"))
    expect()(page.locator("h1 .badge")).to_have_text("succeeded")
    expect()(page.locator("section", has_text="Table").locator("tbody tr")).to_have_count(12)
    canvas = page.locator(".chart-box canvas")
    expect()(page.locator(".chart-box .u-legend")).to_contain_text("→ 0.75")
    assert color_pixels(canvas, BLUE) > 50 and color_pixels(canvas, RED) > 50
    console.shot("study")

    with page.expect_download() as svg:
        page.get_by_role("button", name="Download SVG").click()
    assert svg.value.suggested_filename.endswith(".svg")
    drawn = Path(svg.value.path()).read_bytes()
    assert b"<svg" in drawn[:2000]
    assert b'<g id="band-run0-target0">' in drawn  # min to max as a band, as on the page
    with page.expect_download() as png:
        page.get_by_role("button", name="Download PNG").click()
    assert Path(png.value.path()).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    console.goto("#/studies")
    expect()(page.locator("tbody tr").first).to_contain_text("heart: p = 2 against p = 1.8")
    console.shot("studies")


def test_a_model_page_predicts_pasted_rows(
    console: Console, service: ApiServer, data_dir: Path, two_jobs: tuple[int, int]
) -> None:
    console.allow(422, "POST", r"/v1/models/\d+/predict")
    with api(service) as client:
        model_id = poll_job(client, two_jobs[0], timeout=WAIT_MS / 1000)["model_id"]
    page = console.page
    console.goto(f"#/models/{model_id}")
    expect()(page.locator(".facts").first).to_contain_text("weights non-zero")
    rows = (data_dir / "a9a.test.svm").read_text().splitlines()[:3]
    page.get_by_label("Rows to predict").fill("\n".join(rows))
    page.get_by_role("button", name="Predict").click()
    answer = page.locator("[aria-live] table tbody tr")
    expect()(answer).to_have_count(3)
    for i in range(3):
        assert answer.nth(i).locator("td").nth(1).inner_text() in ("-1", "1")
    console.shot("model")

    page.get_by_label("Rows to predict").fill(json.dumps([[0.0] * 123]))
    expect()(page.get_by_label("JSON rows")).to_be_checked()
    page.get_by_role("button", name="Predict").click()
    expect()(answer).to_have_count(1)

    page.get_by_label("svmlight text").check()
    page.get_by_label("Rows to predict").fill("1:abc")
    page.get_by_role("button", name="Predict").click()
    expect()(page.locator(".form-problem .alert-error")).to_be_visible()


def test_keyboard_alone_reaches_the_pages(console: Console, datasets: dict[str, int]) -> None:
    page = console.page
    console.goto("#/datasets")
    expect()(page.get_by_role("heading", level=1)).to_have_text("Datasets")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    for _ in range(12):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.textContent") == "Studies":
            break
    page.keyboard.press("Enter")
    expect()(page).to_have_url(re.compile("#/studies$"))
    # Focus moves to the new page's heading, where a screen reader starts reading.
    expect()(page.get_by_role("heading", level=1)).to_be_focused()


@pytest.fixture
def keyed_service(tmp_path: Path) -> Iterator[ApiServer]:
    server = ApiServer(
        tmp_path / "data",
        tmp_path / "server.log",
        PGS_WORKERS="1",
        PGS_PRESTART_WORKERS="false",
        PGS_API_KEYS="key-one,key-two",
    ).start()
    try:
        yield server
    finally:
        server.stop()


def test_the_key_is_asked_once_per_tab_and_kept_out_of_urls_and_local_storage(
    browser: Any, keyed_service: ApiServer
) -> None:
    context, tab = open_console(browser, keyed_service)
    for status in (401, 403):
        tab.allow(status, "GET", r"/v1/.*")
    page = tab.page
    sent: list[str | None] = []
    page.on("request", lambda r: sent.append(r.headers.get("authorization")) if "/v1/" in r.url else None)
    try:
        tab.goto("#/jobs")  # the page and its scripts load without a key
        dialog = page.get_by_role("dialog")
        expect()(dialog).to_be_visible()
        tab.shot("key-dialog")
        page.get_by_role("textbox", name="API key").fill("wrong")
        page.get_by_role("button", name="Use this key").click()
        expect()(dialog).to_contain_text("refused that key")
        page.get_by_role("textbox", name="API key").fill("key-two")
        page.get_by_role("button", name="Use this key").click()
        expect()(page.get_by_role("heading", level=1)).to_have_text("Jobs")
        expect()(page.get_by_text("No job matches")).to_be_visible()
        assert "Bearer key-two" in sent

        page.reload()  # the same tab keeps it
        expect()(page.get_by_role("heading", level=1)).to_have_text("Jobs")
        expect()(dialog).to_be_hidden()
        storage = page.evaluate("() => [Object.values(sessionStorage), localStorage.length]")
        assert storage == [["key-two"], 0]
        assert "key" not in page.url
        assert page.evaluate("() => document.cookie") == ""

        other = context.new_page()  # another tab asks again
        other.goto(f"{keyed_service.base}/#/datasets")
        expect()(other.get_by_role("dialog")).to_be_visible()
        other.close()

        page.get_by_role("button", name="Forget key").click()
        expect()(dialog).to_be_visible()
        tab.check()
    finally:
        context.close()
