"""/v1/jobs (app/api/routes/jobs.py, app/services/jobs/requests.py) and the job life cycle
through the real pool: results equal to an in-process run, cancel, idempotency, validation
before queueing, listing."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sklearn.datasets import load_svmlight_file
from sklearn.pipeline import make_pipeline

from app.main import create_app
from solver import PGSClassifier, PGSRegressor, make_preprocessor
from tests.cluster.harness import wait_until
from tests.helpers import assert_problem, create_job, make_settings, metric, upload, wait_for

LONG = {"loss": "logistic", "sigma": 1e-4, "n_iter": 10**9, "random_state": 0}


@pytest.fixture(scope="module")
def app_client(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Iterator[TestClient]:
    """One app for the module (the pool starts once); data sets uploaded up front."""
    settings = make_settings(tmp_path_factory.mktemp("jobs"), workers=2)
    with TestClient(create_app(settings)) as c:
        c.ids = {  # type: ignore[attr-defined]
            name: upload(c, data_dir / f, f).json()["id"]
            for name, f in [
                ("a9a", "a9a.train.svm"),
                ("heart", "heart_scale.svm"),
                ("abalone", "abalone.svm"),
                ("magic", "magic04.csv"),
            ]
        }
        # a9a's test file never uses its last feature: it is declared with the training width.
        c.ids["a9a_test"] = upload(  # type: ignore[attr-defined]
            c, data_dir / "a9a.test.svm", "a9a.test.svm", n_features="123"
        ).json()["id"]
        yield c


def _ids(c: TestClient) -> dict[str, int]:
    return c.ids  # type: ignore[attr-defined, no-any-return]


def test_job_succeeds_with_the_accuracy_of_the_same_run_in_process(app_client: TestClient, data_dir: Path):
    c, ids = app_client, _ids(app_client)
    params = {"loss": "logistic", "sigma": 1e-4, "n_iter": 40_000, "random_state": 7}
    r = create_job(
        c, dataset_id=ids["a9a"], test_dataset_id=ids["a9a_test"], params=params, targets=[0.8, 0.84, 0.99]
    )
    assert r.status_code == 202, r.text
    assert r.headers["location"] == f"/v1/jobs/{r.json()['id']}"
    assert r.json()["status"] == "queued" and r.json()["task"] == "binary"
    job = wait_for(c, r.json()["id"])
    assert job["status"] == "succeeded", job
    progress = job["progress"]
    assert progress | {"elapsed_s": None} == {
        "phase": None,
        "iteration": 40_000,
        "n_iter": 40_000,
        "fraction": 1.0,
        "samples_seen": 40_000,
        "elapsed_s": None,
        "eta_s": None,
    }
    assert progress["elapsed_s"] > 0
    assert job["stop_reason"] == "completed" and job["attempts"] == 1
    assert job["started_at"] <= job["finished_at"]

    X, y = load_svmlight_file(str(data_dir / "a9a.train.svm"))
    Xt, yt = load_svmlight_file(str(data_dir / "a9a.test.svm"), n_features=X.shape[1])
    est = PGSClassifier(**params).fit(X, y, eval_set=(Xt, yt))
    m = job["metrics"]
    assert m["test_accuracy"] == pytest.approx(est.score(Xt, yt), abs=1e-12)
    assert m["objective"] == pytest.approx(est.trace_[-1].objective, rel=1e-12)
    assert m["test_accuracy"] > 0.8  # a9a's linear models reach ~0.85
    ttt = m["time_to_target"]
    assert set(ttt) == {"0.8", "0.84", "0.99"} and ttt["0.99"] is None
    assert 0 <= ttt["0.8"] <= m["solver_seconds"]

    trace = c.get(f"/v1/jobs/{job['id']}/trace").json()
    assert trace["score_name"] == "accuracy"
    its = [p["iteration"] for p in trace["points"]]
    assert its[0] == 0 and its[-1] == 40_000 and its == sorted(its)
    assert trace["points"][-1]["test_score"] == pytest.approx(m["test_accuracy"], abs=1e-12)

    model = c.get(f"/v1/models/{job['model_id']}").json()
    assert model["job_id"] == job["id"] and model["n_features"] == 123
    assert model["classes"] == [-1, 1] and model["params"]["random_state"] == 7
    assert model["metrics"] == m


OVERHEAD_PARTS = (
    "load_seconds",
    "preprocessing_seconds",
    "compile_seconds",
    "checkpoint_seconds",
    "progress_seconds",
    "final_metrics_seconds",
    "model_write_seconds",
    "other_seconds",
)


def test_the_trace_scores_eval_rows_the_metrics_every_row_and_the_overhead_has_its_parts(
    app_client: TestClient, data_dir: Path
):
    """eval_rows=1000 of a9a's 16,281 test rows: the trace (and time_to_target) score every
    16th-or-so row, the final test_accuracy every row; the run's overhead beside the solver
    comes in parts that sum to it, in the job's metrics and the model's."""
    c, ids = app_client, _ids(app_client)
    params = {"loss": "logistic", "sigma": 1e-4, "n_iter": 20_000, "random_state": 3, "eval_rows": 1000}
    job = wait_for(
        c,
        create_job(c, dataset_id=ids["a9a"], test_dataset_id=ids["a9a_test"], params=params).json()["id"],
    )
    assert job["status"] == "succeeded", job
    X, y = load_svmlight_file(str(data_dir / "a9a.train.svm"))
    Xt, yt = load_svmlight_file(str(data_dir / "a9a.test.svm"), n_features=X.shape[1])
    est = PGSClassifier(**params).fit(X, y)
    rows = np.arange(1000) * Xt.shape[0] // 1000
    last = c.get(f"/v1/jobs/{job['id']}/trace").json()["points"][-1]
    assert last["test_score"] == pytest.approx(est.score(Xt[rows], yt[rows]), abs=1e-12)
    m = job["metrics"]
    assert m["test_accuracy"] == pytest.approx(est.score(Xt, yt), abs=1e-12)

    assert all(m[part] >= 0.0 for part in OVERHEAD_PARTS), m
    assert sum(m[part] for part in OVERHEAD_PARTS) == pytest.approx(m["overhead_seconds"], rel=1e-9)
    assert m["checkpoint_seconds"] > 0.0 and m["model_write_seconds"] > 0.0 and m["load_seconds"] > 0.0
    model = c.get(f"/v1/models/{job['model_id']}").json()
    assert {k: model["metrics"][k] for k in ("overhead_seconds", *OVERHEAD_PARTS)} == {
        k: m[k] for k in ("overhead_seconds", *OVERHEAD_PARTS)
    }


def test_regression_with_seeded_split(app_client: TestClient, data_dir: Path):
    c, ids = app_client, _ids(app_client)
    body = {
        "dataset_id": ids["abalone"],
        "test_fraction": 0.25,
        "split_seed": 3,
        "params": {"loss": "squared", "sigma": 1e-4, "n_iter": 8000, "random_state": 1},
        "targets": [3.0, 0.5],
    }
    first = wait_for(c, create_job(c, **body).json()["id"])
    again = wait_for(c, create_job(c, **body).json()["id"])
    assert first["status"] == again["status"] == "succeeded"
    m = first["metrics"]
    assert "test_accuracy" not in m and m["test_rmse"] > 0
    # Same split seed and random_state: the same model.
    assert again["metrics"]["test_rmse"] == m["test_rmse"]
    assert m["time_to_target"]["0.5"] is None
    # The service's split, redone here: 25 % held out, seeded (abalone is one shard).
    from tests.helpers import one_shard_split

    X, y = load_svmlight_file(str(data_dir / "abalone.svm"))
    tr, te = one_shard_split(X.shape[0], 0.25, 3)
    # The default preprocessing of svmlight data: max-abs scaling fitted on the training rows.
    est = make_pipeline(
        make_preprocessor(X.shape[1], scaling="maxabs", impute=False, sparse=True),
        PGSRegressor(loss="squared", sigma=1e-4, n_iter=8000, random_state=1),
    ).fit(X[tr], y[tr])
    rmse = float(np.sqrt(np.mean((est.predict(X[te]) - y[te]) ** 2)))
    assert m["test_rmse"] == pytest.approx(rmse, rel=1e-12)


def test_string_labels_train_and_predict(app_client: TestClient):
    c, ids = app_client, _ids(app_client)
    job = wait_for(
        c,
        create_job(
            c,
            dataset_id=ids["magic"],
            test_fraction=0.2,
            params={"loss": "squared", "sigma": 1e-3, "n_iter": 5000, "random_state": 0},
        ).json()["id"],
    )
    assert job["status"] == "succeeded", job
    model = c.get(f"/v1/models/{job['model_id']}").json()
    assert model["classes"] == ["g", "h"]
    out = c.post(
        f"/v1/models/{model['id']}/predict",
        json={"instances": [[28.8, 16.0, 2.64, 0.39, 0.2, 27.7, 22.0, -8.2, 40.1, 81.9]]},
    )
    assert out.status_code == 200 and out.json()["predictions"][0] in ("g", "h")


def test_cancel_running_and_queued_jobs(app_client: TestClient):
    c, ids = app_client, _ids(app_client)
    running = create_job(c, dataset_id=ids["heart"], test_fraction=0.3, params=LONG, time_budget_s=120).json()
    job = wait_for(c, running["id"], lambda j: (j["progress"]["iteration"] or 0) > 0)
    assert job["status"] == "running"
    # An estimate from the rate so far, within what the job's time budget leaves.
    assert job["progress"]["elapsed_s"] > 0 and 0 <= job["progress"]["eta_s"] <= 120
    assert job["progress"]["phase"] == "fit"
    # While the job runs, its data set cannot be deleted.
    assert_problem(c.delete(f"/v1/datasets/{ids['heart']}"), 409)

    r = c.post(f"/v1/jobs/{running['id']}/cancel")
    asked = time.monotonic()
    assert r.status_code == 202 and r.json()["cancel_requested"] is True
    job = wait_for(c, running["id"], timeout=30)
    latency = time.monotonic() - asked
    print(f"cancel took {latency:.2f} s")  # reported, not asserted: timing is not a test here
    assert job["status"] == "cancelled" and job["stop_reason"] == "cancelled"
    assert job["finished_at"] is not None
    # The last iterate is kept, marked as partial (issue 16 item 7).
    model = c.get(f"/v1/models/{job['model_id']}").json()
    assert model["partial"] is True and model["partial_reason"] == "cancelled"
    assert 0 < job["progress"]["iteration"] < 10**9
    assert c.get(f"/v1/jobs/{running['id']}/trace").json()["points"]

    # Cancelled again: the same answer. Finished jobs cannot be cancelled.
    assert c.post(f"/v1/jobs/{running['id']}/cancel").status_code == 200
    done = wait_for(
        c, create_job(c, dataset_id=ids["heart"], params={"n_iter": 100, "random_state": 0}).json()["id"]
    )
    assert_problem(c.post(f"/v1/jobs/{done['id']}/cancel"), 409)
    assert_problem(c.post("/v1/jobs/999999/cancel"), 404)


def test_cancel_queued_job_never_runs(app_client: TestClient):
    c, ids = app_client, _ids(app_client)
    # Two workers: two long jobs occupy them, the third waits in the queue.
    blockers = [
        create_job(c, dataset_id=ids["heart"], params=LONG, time_budget_s=60).json() for _ in range(2)
    ]
    queued = create_job(c, dataset_id=ids["heart"], params={"n_iter": 100}).json()
    # The queued job says why it waits from its first answer on, even while the blockers' workers
    # are still starting, and counts only the two jobs that hold the workers, not itself.
    waiting = c.get(f"/v1/jobs/{queued['id']}").json()
    assert waiting["waiting_reason"] == "waiting for a free worker: 2 job(s) hold the 2 worker(s)", waiting
    for b in blockers:
        wait_for(c, b["id"], lambda j: j["status"] == "running")
    waiting = c.get(f"/v1/jobs/{queued['id']}").json()
    assert waiting["waiting_reason"] == "waiting for a free worker: 2 job(s) hold the 2 worker(s)", waiting
    # A running one has no such reason.
    assert c.get(f"/v1/jobs/{blockers[0]['id']}").json()["waiting_reason"] is None
    r = c.post(f"/v1/jobs/{queued['id']}/cancel")
    assert r.status_code == 200 and r.json()["status"] == "cancelled"
    listed = c.get("/v1/jobs", params={"status": "running"}).json()["items"]
    assert {j["id"] for j in listed} == {b["id"] for b in blockers}
    for b in blockers:
        c.post(f"/v1/jobs/{b['id']}/cancel")
    for b in blockers:
        assert wait_for(c, b["id"])["status"] == "cancelled"
    job = c.get(f"/v1/jobs/{queued['id']}").json()
    assert job["status"] == "cancelled" and job["attempts"] == 0 and job["started_at"] is None


def test_a_long_poll_answers_when_the_job_ends(app_client: TestClient):
    c, ids = app_client, _ids(app_client)
    # Ended by its worker (the run this process holds): the answer is the finished job.
    job = create_job(c, dataset_id=ids["heart"], params=LONG, time_budget_s=1).json()
    ended = c.get(f"/v1/jobs/{job['id']}", params={"wait": 30}).json()
    assert ended["status"] == "succeeded" and ended["stop_reason"] == "time_budget", ended

    # Still running when the wait is over: the job as it is then.
    job = create_job(c, dataset_id=ids["heart"], params=LONG, time_budget_s=60).json()
    wait_for(c, job["id"], lambda j: j["status"] == "running")
    assert c.get(f"/v1/jobs/{job['id']}", params={"wait": 0.3}).json()["status"] == "running"

    # Ended in the database alone (cancelled while queued behind two running jobs): seen too.
    blocker = create_job(c, dataset_id=ids["heart"], params=LONG, time_budget_s=60).json()
    wait_for(c, blocker["id"], lambda j: j["status"] == "running")
    queued = create_job(c, dataset_id=ids["heart"], params={"n_iter": 100}).json()
    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(lambda: c.get(f"/v1/jobs/{queued['id']}", params={"wait": 30}))
        # The poll has read the job as queued and waits: the cancel below is news to it.
        wait_until(lambda: metric(c, "pgs_long_polls_waiting") == 1, 30, "the poll waiting")
        assert c.post(f"/v1/jobs/{queued['id']}/cancel").json()["status"] == "cancelled"
        assert waiting.result().json()["status"] == "cancelled"
    assert metric(c, "pgs_long_polls_waiting") == 0
    for running in (job, blocker):
        c.post(f"/v1/jobs/{running['id']}/cancel")
        assert wait_for(c, running["id"])["status"] == "cancelled"

    assert_problem(c.get(f"/v1/jobs/{job['id']}", params={"wait": 31}), 422, "query.wait")
    assert_problem(c.get(f"/v1/jobs/{job['id']}", params={"wait": -1}), 422, "query.wait")
    assert_problem(c.get("/v1/jobs/999999", params={"wait": 5}), 404)


def test_idempotency_key(app_client: TestClient):
    c, ids = app_client, _ids(app_client)
    body = {"dataset_id": ids["heart"], "params": {"n_iter": 200, "random_state": 0}}
    key = {"Idempotency-Key": "retry-me-1"}
    first = create_job(c, headers=key, **body)
    second = create_job(c, headers=key, **body)
    assert first.status_code == second.status_code == 202
    assert second.json()["id"] == first.json()["id"]
    assert second.headers["location"] == first.headers["location"]
    assert second.headers.get("idempotent-replayed") == "true"
    other = create_job(c, headers=key, **{**body, "params": {"n_iter": 300}})
    assert_problem(other, 409)
    fresh = create_job(c, **body)
    assert fresh.json()["id"] != first.json()["id"]
    wait_for(c, first.json()["id"])
    wait_for(c, fresh.json()["id"])


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"params": {"p": 2.5}}, "body.params.p"),
        ({"params": {"sigma": -1}}, "body.params.sigma"),
        ({"params": {"batch_size": 0}}, "body.params.batch_size"),
        ({"params": {"batch_size": 10**20}}, "body.params.batch_size"),
        # heart has 270 rows: half of them leave 135 to train on.
        ({"test_fraction": 0.5, "params": {"batch_size": 200}}, "body.params.batch_size"),
        ({"params": {"n_iter": 10.5}}, "body.params.n_iter"),
        # The service's own bounds (issue 13): a count that runs for ever or overflows int64,
        # and a time budget that means no limit.
        ({"params": {"n_iter": 10**18}}, "body.params.n_iter"),
        ({"params": {"n_iter": 2**63}}, "body.params.n_iter"),
        ({"params": {"time_budget": 1e300}}, "body.params.time_budget"),
        ({"params": {"time_budget": 8 * 86400}}, "body.params.time_budget"),
        ({"params": {"loss": "huber"}}, "body.params.loss"),
        # sigma="auto"'s options are the selection's (tests/app/jobs/test_selection.py).
        ({"params": {"sigma": "auto"}, "selection": {"grid": ["x"]}}, "body.selection.grid.0"),
        ({"params": {"learning_rate": 0.1}}, "body.params.learning_rate"),
        ({"solver": "no-such-solver"}, "body.solver"),
        ({"dataset_id": 999_999}, "body.dataset_id"),
        ({"test_dataset_id": 999_999}, "body.test_dataset_id"),
        ({"test_fraction": 1.5}, "body.test_fraction"),
        # heart has 270 rows: 0.1 % of them rounds to no test row (the one rule of a split).
        ({"test_fraction": 0.001}, "body.test_fraction"),
        ({"test_fraction": 0.2, "test_dataset_id": 1}, "body"),
        ({"targets": [0.9]}, "body.targets"),
        ({"test_fraction": 0.2, "targets": [1.5]}, "body.targets"),
        # The solver stops at a test score, so it needs test data, and an accuracy is in [0, 1].
        ({"params": {"target_score": 0.9}}, "body.params.target_score"),
        ({"test_fraction": 0.2, "params": {"target_score": 85}}, "body.params.target_score"),
        ({"time_budget_s": -1}, "body.time_budget_s"),
        ({"colour": "red"}, "body.colour"),
    ],
)
def test_invalid_jobs_are_refused_before_queueing(app_client: TestClient, body: dict, field: str):
    c, ids = app_client, _ids(app_client)
    before = c.get("/v1/jobs", params={"limit": 500}).json()["items"]
    assert_problem(create_job(c, **{"dataset_id": ids["heart"], **body}), 422, field)
    assert c.get("/v1/jobs", params={"limit": 500}).json()["items"] == before


def test_regression_losses_and_task_mismatch(app_client: TestClient):
    c, ids = app_client, _ids(app_client)
    assert_problem(
        create_job(c, dataset_id=ids["abalone"], params={"loss": "hinge"}), 422, "body.params.loss"
    )
    assert_problem(
        create_job(c, dataset_id=ids["heart"], test_dataset_id=ids["magic"]), 422, "body.test_dataset_id"
    )
    # Job bodies must be JSON.
    r = c.post("/v1/jobs", content=b"dataset_id=1", headers={"content-type": "text/plain"})
    assert_problem(r, 415)
    r = c.post("/v1/jobs", content=b"{not json", headers={"content-type": "application/json"})
    assert_problem(r, 422)


def test_list_jobs_filter_and_pagination(app_client: TestClient):
    c = app_client
    everything = c.get("/v1/jobs", params={"limit": 500}).json()["items"]
    assert len(everything) >= 3
    seen: list[int] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": 2} | ({"cursor": cursor} if cursor else {})
        page = c.get("/v1/jobs", params=params).json()
        seen += [j["id"] for j in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [j["id"] for j in everything] == sorted(seen, reverse=True)
    ok = c.get("/v1/jobs", params={"status": "succeeded"}).json()["items"]
    assert ok and all(j["status"] == "succeeded" for j in ok)
    heart = [j for j in everything if j["dataset_id"] == _ids(c)["heart"]]
    on_heart = c.get("/v1/jobs", params={"dataset_id": _ids(c)["heart"], "limit": 500}).json()
    assert [j["id"] for j in on_heart["items"]] == [j["id"] for j in heart]
    pgs = c.get("/v1/jobs", params={"solver": "pgs", "dataset_id": _ids(c)["heart"]}).json()
    assert heart and [j["id"] for j in pgs["items"]] == [j["id"] for j in heart if j["solver"] == "pgs"]
    assert c.get("/v1/jobs", params={"solver": "no-such-solver"}).json()["items"] == []
    assert_problem(c.get("/v1/jobs", params={"dataset_id": "x"}), 422, "query.dataset_id")
    assert_problem(c.get("/v1/jobs", params={"status": "sleeping"}), 422, "query.status")
    assert_problem(c.get("/v1/jobs", params={"cursor": "abc"}), 422, "query.cursor")
    assert_problem(c.get("/v1/jobs", params={"limit": 0}), 422, "query.limit")
    assert_problem(c.get("/v1/jobs/999999"), 404)
    assert_problem(c.get("/v1/jobs/999999/trace"), 404)


def test_target_score_stop_keeps_the_trace(app_client: TestClient):
    c, ids = app_client, _ids(app_client)
    # Reached at the very first checkpoint: the fit stops before any progress callback.
    job = wait_for(
        c,
        create_job(
            c,
            dataset_id=ids["heart"],
            test_fraction=0.3,
            targets=[0.0],
            params={"target_score": 0.0, "n_iter": 10_000},
        ).json()["id"],
    )
    assert job["status"] == "succeeded" and job["stop_reason"] == "target_score", job
    assert job["progress"]["iteration"] == 0 and job["metrics"]["time_to_target"] == {"0.0": 0.0}
    points = c.get(f"/v1/jobs/{job['id']}/trace").json()["points"]
    assert [p["iteration"] for p in points] == [0]


def _catalogued_solvers() -> list[str]:
    from solver import SOLVERS

    return sorted(SOLVERS)


@pytest.mark.parametrize("solver", _catalogued_solvers())
def test_every_catalogued_solver_trains_and_predicts(app_client: TestClient, solver: str):
    """The catalogue is the only place a solver is listed: each entry works end to end."""
    c, ids = app_client, _ids(app_client)
    r = create_job(
        c,
        dataset_id=ids["heart"],
        test_fraction=0.3,
        solver=solver,
        params={"n_iter": 200, "random_state": 0},
        targets=[0.5],
    )
    assert r.status_code == 202, r.text
    job = wait_for(c, r.json()["id"])
    assert job["status"] == "succeeded", job
    assert 0.0 <= job["metrics"]["test_accuracy"] <= 1.0
    out = c.post(f"/v1/models/{job['model_id']}/predict", json={"instances": [[0.1] * 13]})
    assert out.status_code == 200, out.text
    assert out.json()["predictions"][0] in (-1, 1)
    # Issue 4: every model reports its non-zero weights; the L1 family's traces also count data
    # accesses (the L1 paper's x-axis) and non-zeros (its density plots).
    model = c.get(f"/v1/models/{job['model_id']}").json()
    assert model["nnz_weights"] is None or model["nnz_weights"] >= 0
    points = c.get(f"/v1/jobs/{job['id']}/trace").json()["points"]
    assert points and all(p["nnz_weights"] is not None for p in points)
    if solver in ("scd", "gcd", "smidas", "truncgrad", "lbfgs", "sdca"):
        assert isinstance(model["nnz_weights"], int)
        accesses = [p["data_accesses"] for p in points]
        assert all(a is not None for a in accesses) and accesses == sorted(accesses)
        assert accesses[-1] > 0


def test_lbfgs_job_that_converged_early_is_complete(app_client: TestClient):
    c, ids = app_client, _ids(app_client)
    params = {"loss": "logistic", "sigma": 1e-2, "n_iter": 5000}
    job = wait_for(c, create_job(c, dataset_id=ids["heart"], solver="lbfgs", params=params).json()["id"])
    assert job["status"] == "succeeded" and job["stop_reason"] == "converged", job
    progress = job["progress"]
    assert progress["iteration"] < progress["n_iter"] and progress["fraction"] == 1.0
    assert progress["eta_s"] is None
