"""Time-to-accuracy studies (app/api/routes/studies.py and plots.py, app/services/studies/state.py,
study_requests.py, study_phases.py) through the real app, a real SQLite file and the real pool:
fan-out into jobs on seeded subsamples, the table against the jobs' own traces, plots, cancel,
validation, sigma chosen on the training rows only."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sklearn.datasets import load_svmlight_file

from app.main import create_app
from solver import PGSClassifier
from tests.helpers import JOB_TIMEOUT_S, assert_problem, make_settings, poll, upload

SVG = "{http://www.w3.org/2000/svg}"
TERMINAL = ("succeeded", "failed", "cancelled", "partial")
SEED = 5
RUNS = [
    {"solver": "pgs", "params": {"loss": "logistic", "sigma": 1e-3, "n_iter": 3000}},
    {
        "solver": "pgs",
        "params": {"loss": "logistic", "p": 1.8, "sigma": 1e-3, "n_iter": 3000},
        "label": "PGS p=1.8",
    },
]
SIZES = [40, 90, 180]
TARGETS = [0.7, 0.8]


@pytest.fixture(scope="module")
def app_client(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Iterator[TestClient]:
    settings = make_settings(tmp_path_factory.mktemp("studies"), workers=2)
    with TestClient(create_app(settings)) as c:
        c.heart = upload(c, data_dir / "heart_scale.svm", "heart.svm").json()["id"]  # type: ignore[attr-defined]
        yield c


def _heart(c: TestClient) -> int:
    return c.heart  # type: ignore[attr-defined, no-any-return]


def wait_study(
    c: TestClient,
    study_id: int,
    done: Callable[[dict[str, Any]], bool] | None = None,
    timeout: float = JOB_TIMEOUT_S,
) -> dict[str, Any]:
    done = done or (lambda s: s["status"] in TERMINAL)
    return poll(c, f"/v1/studies/{study_id}", done, timeout, interval=0.1)


def study_jobs(c: TestClient, study_id: int) -> list[dict[str, Any]]:
    return c.get(f"/v1/studies/{study_id}/jobs", params={"limit": 500}).json()["items"]


def svg_ids(body: bytes) -> set[str]:
    root = ET.fromstring(body)  # raises if it is not well-formed XML
    assert root.tag == f"{SVG}svg"
    return {el.attrib["id"] for el in root.iter() if "id" in el.attrib}


@pytest.fixture(scope="module")
def finished(app_client: TestClient) -> dict[str, Any]:
    """2 runs x 3 sizes x 2 repeats on heart (189 training rows after a 30 % split), done."""
    c = app_client
    r = c.post(
        "/v1/studies",
        json={
            "name": "heart",
            "dataset_id": _heart(c),
            "test_fraction": 0.3,
            "runs": RUNS,
            "sizes": SIZES,
            "repeats": 2,
            "targets": TARGETS,
            "seed": SEED,
        },
    )
    assert r.status_code == 202, r.text
    assert r.headers["location"] == f"/v1/studies/{r.json()['id']}"
    created = r.json()
    assert created["progress"]["total"] == 12 and created["n_train"] == 189
    assert created["runs"][0]["label"] == "pgs (loss=logistic)"
    assert created["runs"][1]["label"] == "PGS p=1.8"
    study = wait_study(c, created["id"])
    return {"study": study, "jobs": study_jobs(c, study["id"])}


def test_study_fans_out_into_seeded_subsample_jobs(finished: dict[str, Any], data_dir: Path):
    study, jobs = finished["study"], finished["jobs"]
    assert study["status"] == "succeeded", study
    assert study["progress"] | {"fraction": 1.0} == {
        "total": 12,
        "done": 12,
        "fraction": 1.0,
        "queued": 0,
        "running": 0,
        "succeeded": 12,
        "failed": 0,
        "cancelled": 0,
    }
    assert study["finished_at"] is not None
    cells = defaultdict(list)
    for j in jobs:
        assert j["study_id"] == study["id"] and j["split_seed"] == SEED
        assert j["test_fraction"] == 0.3 and j["status"] == "succeeded"
        cells[(j["study_run"], j["train_size"])].append(j)
    assert sorted(cells) == [(r, m) for r in (0, 1) for m in SIZES]
    seeds_by_repeat: dict[int, set[int]] = defaultdict(set)
    for cell in cells.values():
        assert sorted(j["study_repeat"] for j in cell) == [0, 1]
        for j in cell:
            seeds_by_repeat[j["study_repeat"]].add(j["subsample_seed"])
            # A run without random_state gets the repeat's seed: reruns reproduce the solver too.
            assert j["params"]["random_state"] == j["subsample_seed"]
    # One seed per repeat (nested subsamples over m), different between repeats.
    assert all(len(s) == 1 for s in seeds_by_repeat.values())
    assert seeds_by_repeat[0] != seeds_by_repeat[1]

    # The documented sampling, redone here: the same split as a job, then the first m rows of a
    # permutation seeded with subsample_seed; the same fit gives the job's accuracy exactly.
    from tests.helpers import one_shard_split

    X, y = load_svmlight_file(str(data_dir / "heart_scale.svm"))
    train, test = one_shard_split(X.shape[0], 0.3, SEED)
    for j in (cells[(0, 40)][1], cells[(1, 180)][0]):
        rows = train[
            np.sort(np.random.default_rng(j["subsample_seed"]).permutation(len(train))[: j["train_size"]])
        ]
        est = PGSClassifier(**j["params"]).fit(X[rows], y[rows])
        assert j["metrics"]["test_accuracy"] == pytest.approx(est.score(X[test], y[test]), abs=1e-12)


def _median_inf(values: list[float | None]) -> float | None:
    med = float(np.median([np.inf if v is None else v for v in values]))
    return med if np.isfinite(med) else None


def test_table_agrees_with_the_jobs_own_time_to_target(app_client: TestClient, finished: dict[str, Any]):
    c, study, jobs = app_client, finished["study"], finished["jobs"]
    table = study["table"]
    assert len(table) == 2 * len(SIZES) * len(TARGETS)
    assert [(r["run"], r["m"], r["target"]) for r in table] == [
        (run, m, t) for run in (0, 1) for m in SIZES for t in TARGETS
    ]
    for row in table:
        cell = [j for j in jobs if (j["study_run"], j["train_size"]) == (row["run"], row["m"])]
        assert row["repeats"] == 2 and row["solver"] == "pgs"
        seconds = [j["metrics"]["time_to_target"][repr(row["target"])] for j in cell]
        iterations = []
        for j in cell:
            points = c.get(f"/v1/jobs/{j['id']}/trace").json()["points"]
            hit = next((p for p in points if p["test_score"] >= row["target"]), None)
            iterations.append(None if hit is None else hit["iteration"])
            assert (hit is None) == (j["metrics"]["time_to_target"][repr(row["target"])] is None)
        reached = [s for s in seconds if s is not None]
        assert row["reached"] == len(reached)
        assert row["median_seconds"] == _median_inf(seconds)
        assert row["median_iterations"] == _median_inf(iterations)
        assert row["min_seconds"] == (min(reached) if reached else None)
        assert row["max_seconds"] == (max(reached) if reached else None)
        assert row["selected_sigmas"] is None
    # Heart is easy at 70 %: every run of the largest size gets there.
    assert all(r["reached"] == 2 for r in table if r["m"] == 180 and r["target"] == 0.7)

    listed = c.get("/v1/studies").json()["items"]
    mine = next(s for s in listed if s["id"] == study["id"])
    assert mine["table"] is None and mine["status"] == "succeeded"


def test_plots_are_svg_with_one_line_per_run_and_target(app_client: TestClient, finished: dict[str, Any]):
    c, study = app_client, finished["study"]
    r = c.get(f"/v1/studies/{study['id']}/plot")
    assert r.status_code == 200 and r.headers["content-type"] == "image/svg+xml"
    ids = svg_ids(r.content)
    assert {f"ttt-run{i}-target{j}" for i in (0, 1) for j in (0, 1)} <= ids
    # Fastest to slowest repeat as a filled band (a path), as the console draws it.
    assert {f"band-run{i}-target{j}" for i in (0, 1) for j in (0, 1)} <= ids
    assert re.search(rb'<g id="band-run0-target0">\s*<defs>\s*<path id="\w+" d="M', r.content)
    assert b"training-set size m" in r.content and b"PGS p=1.8" in r.content
    r = c.get(f"/v1/studies/{study['id']}/plot", params={"y": "iterations", "format": "png"})
    assert r.status_code == 200 and r.headers["content-type"] == "image/png"
    assert r.content.startswith(b"\x89PNG")

    job = finished["jobs"][0]
    r = c.get(f"/v1/jobs/{job['id']}/plot")
    assert r.status_code == 200 and r.headers["content-type"] == "image/svg+xml"
    assert {"trace-test-score", "trace-objective", "target-0", "target-1"} <= svg_ids(r.content)

    assert_problem(c.get("/v1/studies/999999/plot"), 404)
    assert_problem(c.get("/v1/jobs/999999/plot"), 404)
    assert_problem(c.get(f"/v1/studies/{study['id']}/plot", params={"y": "joules"}), 422, "query.y")
    # Finished studies cannot be cancelled.
    assert_problem(c.post(f"/v1/studies/{study['id']}/cancel"), 409)


LONG = {"loss": "logistic", "sigma": 1e-4, "n_iter": 10**9, "random_state": 0}


def test_cancel_study_cancels_its_queued_and_running_jobs(app_client: TestClient):
    c = app_client
    r = c.post(
        "/v1/studies",
        json={
            "dataset_id": _heart(c),
            "test_fraction": 0.3,
            "runs": [{"params": LONG}],
            "sizes": [50, 100],
            "repeats": 2,
            "targets": [0.8],
            "time_budget_s": 60,
        },
    )
    assert r.status_code == 202, r.text
    sid = r.json()["id"]
    # Two workers: two jobs run, two wait.
    wait_study(c, sid, lambda s: s["progress"]["running"] == 2, timeout=60)
    running = wait_study(c, sid, lambda s: s["status"] == "running")
    assert running["progress"]["queued"] == 2
    r = c.post(f"/v1/studies/{sid}/cancel")
    assert r.status_code == 202 and r.json()["cancel_requested"] is True
    study = wait_study(c, sid, timeout=30)
    assert study["status"] == "cancelled" and study["progress"]["cancelled"] == 4
    jobs = study_jobs(c, sid)
    assert all(j["status"] == "cancelled" for j in jobs)
    never_ran = [j for j in jobs if j["attempts"] == 0]
    assert len(never_ran) == 2 and all(j["started_at"] is None for j in never_ran)
    assert all(r["repeats"] == 0 and r["median_seconds"] is None for r in study["table"])
    # Asking again is harmless.
    assert c.post(f"/v1/studies/{sid}/cancel").status_code == 200

    # Plots of a study without a finished job and of a job without a trace are still valid SVG.
    r = c.get(f"/v1/studies/{sid}/plot")
    assert r.status_code == 200 and b"no job has succeeded yet" in r.content
    assert {"ttt-run0-target0"} <= svg_ids(r.content)
    r = c.get(f"/v1/jobs/{never_ran[0]['id']}/plot")
    assert r.status_code == 200 and b"no checkpoints recorded yet" in r.content
    assert "trace-objective" not in svg_ids(r.content)
    assert_problem(c.post("/v1/studies/999999/cancel"), 404)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"runs": [{"params": {"p": 2.5}}]}, "body.runs.0.params.p"),
        ({"runs": [{"params": {}}, {"solver": "no-such-solver"}]}, "body.runs.1.solver"),
        ({"runs": [{"params": {"learning_rate": 0.1}}]}, "body.runs.0.params.learning_rate"),
        ({"runs": []}, "body.runs"),
        ({"sizes": [40, 190]}, "body.sizes.1"),
        ({"sizes": [1]}, "body.sizes"),
        ({"sizes": [40, 40]}, "body.sizes"),
        ({"repeats": 0}, "body.repeats"),
        ({"targets": []}, "body.targets"),
        ({"targets": [1.5]}, "body.targets"),
        ({"dataset_id": 999_999}, "body.dataset_id"),
        ({"test_fraction": None}, "body"),
        ({"test_dataset_id": 1}, "body"),
        ({"repeats": 100, "sizes": list(range(2, 34))}, "body"),
        ({"select_sigma": {"grid": []}}, "body.select_sigma.grid"),
        ({"select_sigma": {"grid": [-1.0]}}, "body.select_sigma.grid"),
        (
            {"select_sigma": {"grid": [0.1], "validation_fraction": 1.0}},
            "body.select_sigma.validation_fraction",
        ),
        ({"select_sigma": {"grid": [0.1]}, "runs": [{"params": {"sigma": 0.1}}]}, "body.runs.0.params.sigma"),
        ({"select_sigma": {"grid": [0.1], "validation_fraction": 0.5}, "sizes": [3]}, "body.sizes.0"),
        # 1 % of 40 rows rounds to no validation row (the one rule of a split).
        ({"select_sigma": {"grid": [0.1], "validation_fraction": 0.01}}, "body.sizes.0"),
        # A batch that fits the training part but not the smallest subsample (40 rows), or not
        # the 20 rows a fit gets at size 40 after select_sigma's validation half.
        ({"runs": [{"params": {}}, {"params": {"batch_size": 41}}]}, "body.runs.1.params.batch_size"),
        (
            {
                "select_sigma": {"grid": [0.1], "validation_fraction": 0.5},
                "sizes": [40],
                "runs": [{"params": {"batch_size": 30}}],
            },
            "body.runs.0.params.batch_size",
        ),
        ({"colour": "red"}, "body.colour"),
    ],
)
def test_invalid_studies_are_refused_before_anything_is_queued(
    app_client: TestClient, change: dict[str, Any], field: str
):
    c = app_client
    before = (
        c.get("/v1/jobs", params={"limit": 500}).json()["items"],
        c.get("/v1/studies", params={"limit": 500}).json()["items"],
    )
    body = {
        "dataset_id": _heart(c),
        "test_fraction": 0.3,
        "runs": [{"params": {}}],
        "sizes": [40, 189],
        "repeats": 1,
        "targets": [0.8],
    } | change
    assert_problem(c.post("/v1/studies", json=body), 422, field)
    after = (
        c.get("/v1/jobs", params={"limit": 500}).json()["items"],
        c.get("/v1/studies", params={"limit": 500}).json()["items"],
    )
    assert after == before


def test_a_runs_refused_parameter_keeps_its_rule_and_value(app_client: TestClient):
    c = app_client
    runs = [{"params": {"p": 2.5}}]
    body = {"dataset_id": _heart(c), "test_fraction": 0.3, "runs": runs, "sizes": [40], "targets": [0.8]}
    (error,) = assert_problem(c.post("/v1/studies", json=body), 422, "body.runs.0.params.p")["errors"]
    assert (error["loc"], error["rule"], error["input"]) == (
        ["body", "runs", 0, "params", "p"],
        "float in [1.01, 2]",
        2.5,
    )


def test_study_requests_must_be_json_and_ids_must_exist(app_client: TestClient):
    c = app_client
    assert_problem(c.post("/v1/studies", content=b"x", headers={"content-type": "text/plain"}), 415)
    assert_problem(c.get("/v1/studies/999999"), 404)
    assert_problem(c.get("/v1/studies/999999/jobs"), 404)
    assert_problem(c.get("/v1/studies", params={"cursor": "x"}), 422, "query.cursor")


def _split_heart(data_dir: Path) -> tuple[bytes, bytes, bytes]:
    lines = (data_dir / "heart_scale.svm").read_bytes().splitlines(keepends=True)
    flipped = [(b"-1" + ln[2:]) if ln.startswith(b"+1") else (b"+1" + ln[2:]) for ln in lines[180:]]
    return b"".join(lines[:180]), b"".join(lines[180:]), b"".join(flipped)


def test_sigma_is_selected_on_training_rows_only(app_client: TestClient, data_dir: Path):
    """The same study evaluated on a test set and on the same set with every label flipped picks
    the same sigma for every job: the evaluation data play no part in the choice."""
    c = app_client
    train, test, flipped = _split_heart(data_dir)
    ids = [
        upload(c, content, name).json()["id"]
        for content, name in ((train, "tr.svm"), (test, "te.svm"), (flipped, "fl.svm"))
    ]
    grid = [1e-4, 1e-2, 1.0]
    studies = []
    for test_id in ids[1:]:
        r = c.post(
            "/v1/studies",
            json={
                "dataset_id": ids[0],
                "test_dataset_id": test_id,
                "runs": [{"params": {"loss": "logistic", "n_iter": 2000}}],
                "sizes": [60, 180],
                "repeats": 2,
                "targets": [0.75],
                "seed": 3,
                "select_sigma": {"grid": grid, "validation_fraction": 0.25},
            },
        )
        assert r.status_code == 202, r.text
        studies.append(r.json()["id"])
    results = []
    for sid in studies:
        study = wait_study(c, sid)
        assert study["status"] == "succeeded", study
        assert study["select_sigma"] == {"grid": grid, "validation_fraction": 0.25}
        jobs = {(j["train_size"], j["study_repeat"]): j for j in study_jobs(c, sid)}
        for (m, _), j in jobs.items():
            sel = j["metrics"]["sigma_selection"]
            assert j["metrics"]["selected_sigma"] in grid
            assert [g["sigma"] for g in sel["grid"]] == grid
            assert sel["n_fit"] + sel["n_validation"] == m and sel["n_validation"] == m // 4
            assert sel["score_name"] == "accuracy"
            model = c.get(f"/v1/models/{j['model_id']}").json()
            assert model["params"]["sigma"] == j["metrics"]["selected_sigma"]
        for row in study["table"]:
            assert row["selected_sigmas"] == sorted(
                j["metrics"]["selected_sigma"] for (m, _), j in jobs.items() if m == row["m"]
            )
        results.append(jobs)
    plain, flip = results
    for key in plain:
        assert plain[key]["metrics"]["selected_sigma"] == flip[key]["metrics"]["selected_sigma"]
        scores = [
            [(g["sigma"], g["score"]) for g in r[key]["metrics"]["sigma_selection"]["grid"]]
            for r in (plain, flip)
        ]
        assert scores[0] == scores[1]
        # The same model on the same rows with every label flipped: accuracies add up to one.
        total = plain[key]["metrics"]["test_accuracy"] + flip[key]["metrics"]["test_accuracy"]
        assert total == pytest.approx(1.0, abs=1e-12)


def test_a_study_on_text_columns_and_missing_cells_fits_the_default_preprocessing(app_client: TestClient):
    """Each study job one-hot encodes, imputes and scales as a job on the same data set does:
    the raw NA cells never reach the solver."""
    c = app_client
    examples = Path(__file__).resolve().parents[3] / "examples"
    r = upload(c, examples / "credit.csv", "credit.csv", format="csv", label_column="credit_risk")
    assert r.status_code == 201, r.text
    credit = r.json()
    assert credit["n_missing"] > 0 and credit["text_columns"]
    body = {
        "dataset_id": credit["id"],
        "test_fraction": 0.3,
        "seed": SEED,
        "runs": RUNS[:1],
        "sizes": [60, 120],
        "targets": TARGETS,
    }
    r = c.post("/v1/studies", json=body)
    assert r.status_code == 202, r.text
    study = wait_study(c, r.json()["id"])
    assert study["status"] == "succeeded", study
    job = c.post("/v1/jobs", json={"dataset_id": credit["id"], "solver": "pgs", "params": RUNS[0]["params"]})
    assert job.status_code == 202, job.text
    for study_job in study_jobs(c, study["id"]):
        assert study_job["preprocessing"] == job.json()["preprocessing"]
        assert study_job["metrics"]["test_accuracy"] > 0.5
