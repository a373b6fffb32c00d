"""The service end to end, two measurements (``--measure``):

* ``post``: ``POST /v1/jobs`` to "succeeded" on a 494k-row stored data set, against the
  in-process ``fit()`` on the same rows plus one read of the stored data. Goal: the job's wall
  time at most 1.3 x (fit + read).
* ``files``: svmlight files on disk to a stored model at a target accuracy, against the notebook
  path to the same accuracy. Goal: at most 1.0 x the notebook (stretch 0.5 x). See
  :func:`run_files`.

The data set is the synthetic KDD-Cup-99-shaped set of ``bench/datasets.py`` (494,021 rows x 119
features, 20 non-zeros per row; no set in ../shared/data has this many rows), uploaded once as
svmlight to a real service (``python -m app`` on 127.0.0.1 with its own data dir and the default
settings). Each case is a PGS job (p = ``--p``) on every stored row with a fixed sigma and
iteration count (``--n-iter``: about the budget in which PGS p=2 reaches the target accuracy, the
exact optimum's minus 0.5 points, on this set's 80/20 split at sigma 1e-6, measured by
bench.peers), no evaluation split, and either the raw features (``"preprocessing": null``: what a
bare ``fit()`` gets) or the service's default preprocessing (max-abs scaling of svmlight data,
fitted on the training rows; in this process then ``make_preprocessor(...).fit_transform`` before
the fit, counted with it). Per repeat, the cases interleaved:

* ``job``: the client's time from sending the POST to seeing "succeeded" (a long poll,
  ``GET /v1/jobs/{id}?wait=30``, which answers when the job ends, as the Python client waits),
  and the job's own timestamps: created -> started (dispatch), started -> finished (the worker's
  run), created -> finished;
* ``read``: ``open_dataset`` on the stored data set and its shards copied into one CSR matrix
  (``RowSelection.in_memory``, what the worker does), in this process;
* ``prep`` and ``fit``: the preprocessing the job fits (none: 0) and ``fit(X, y)`` of the
  estimator the job builds (the same params), on those rows.

The first job of each case runs before the repeats (it loads the case's kernels into the worker)
and is reported apart. Then the worker's steps are replayed in this process on the last job of
each case (median of ``--profile-repeats``): its load from the database, the data load (read and
preprocessing), the fit untraced and traced (as the worker fits: ``trace=True``, the objective
over every training row at each checkpoint), the model's export and metrics, the model files
written: what of the job's time is not the fit.

Run: ``NUMBA_CACHE_DIR=var/numba-cache .venv/bin/python -m bench.end_to_end`` (``--measure files``
for the second measurement; it writes its own record, ``end_to_end_files.json``).
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file

from tests.cluster.harness import FINAL, ApiServer

from . import tables
from .datasets import DATA_DIR, kdd_like, rcv1_like, svmlight_text
from .results import add_results_dir, record

GOAL_RATIO = 1.3
SIGMA = 1e-6
# Iterations in which PGS p=2 reaches optimum - 0.5 points on kdd_like at sigma 1e-6 (bench.peers:
# 117,971 on the 80 % training part).
N_ITER = 120_000
# The longest long poll the service grants (app/api/routes/jobs.py).
WAIT_S = 30
# The job's preprocessing: the raw features, or the service's default (the request leaves it out).
PREPROCESSING = {"none": {"preprocessing": None}, "default": {}}


def job_body(dataset_id: int, p: float, n_iter: int, preprocessing: str) -> dict[str, Any]:
    return {
        "dataset_id": dataset_id,
        **PREPROCESSING[preprocessing],
        "params": {"loss": "logistic", "p": p, "sigma": SIGMA, "n_iter": n_iter, "random_state": 0},
    }


def stored_set(path: Path) -> tuple[int, int]:
    """kdd_like's 494,021 rows as an svmlight file (values to 4 decimals, as a user's export
    would have them); returns (rows, features)."""
    X_train, y_train, X_test, y_test = kdd_like()
    X = sp.vstack([X_train, X_test], format="csr")
    X.data = np.round(X.data, 4)
    dump_svmlight_file(X, np.concatenate([y_train, y_test]), str(path), zero_based=False)
    return X.shape


def seconds_between(job: dict[str, Any], start: str, end: str) -> float:
    return (datetime.fromisoformat(job[end]) - datetime.fromisoformat(job[start])).total_seconds()


def run_job(c: httpx.Client, body: dict[str, Any]) -> dict[str, Any]:
    """One job from POST to its end: the client's wall time and the job's own timestamps."""
    sent = time.perf_counter()
    job_id = c.post("/v1/jobs", json=body).raise_for_status().json()["id"]
    job = c.get(f"/v1/jobs/{job_id}").json()
    while job["status"] not in FINAL:
        job = c.get(f"/v1/jobs/{job_id}", params={"wait": WAIT_S}).raise_for_status().json()
    client_s = time.perf_counter() - sent
    if job["status"] != "succeeded":
        raise RuntimeError(f"job {job_id} ended {job['status']}: {job.get('error')}")
    return {
        "job_id": job_id,
        "client_s": client_s,
        "dispatch_s": seconds_between(job, "created_at", "started_at"),
        "run_s": seconds_between(job, "started_at", "finished_at"),
        "server_s": seconds_between(job, "created_at", "finished_at"),
        "solver_s": job["metrics"]["solver_seconds"],
        "preprocessing": job["preprocessing"],
        "stop_reason": job["stop_reason"],
        "metrics": job["metrics"],
    }


def timed(f: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    out = f()
    return time.perf_counter() - started, out


def read_stored(store: Any, key: str, n_features: int) -> tuple[sp.csr_matrix, np.ndarray]:
    """One read of a stored data set, as the worker reads one: its shards into one CSR."""
    from app.services.datasets.shards import open_dataset
    from app.services.jobs.rows import RowSelection

    return RowSelection(open_dataset(store, key), n_features).in_memory()


def preprocess(X: sp.csr_matrix, resolved: dict[str, Any] | None) -> sp.csr_matrix:
    """X through the job's resolved preprocessing, fitted on X (None: X as it is)."""
    if resolved is None:
        return X
    from solver import make_preprocessor

    return make_preprocessor(X.shape[1], **resolved).fit_transform(X)


def median_steps(runs: list[dict[str, float]]) -> dict[str, float]:
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def profile_worker(settings: Any, job_id: int) -> dict[str, float]:
    """The worker's steps for job ``job_id`` (app/training/worker.py, app/training/steps.py),
    replayed and timed one by one in this process; the model files go to a scratch store."""
    from app.core.config import Settings
    from app.training import steps as training

    steps: dict[str, float] = {}
    steps["load_job"], job = timed(lambda: training.load_job(session_factory(settings), job_id))
    steps["load_data"], data = timed(
        lambda: training.load_data(settings.store, job.data, job.estimator.classification)
    )
    steps["fit"], _ = timed(lambda: job.estimator.build().fit(data.X, data.y))
    estimator = job.estimator.build()
    steps["fit_traced"], _ = timed(lambda: estimator.fit(data.X, data.y, eval_set=data.eval_set, trace=True))
    steps["package"], package = timed(lambda: training.package_model(estimator, job, data))
    steps["metrics"], metrics = timed(lambda: training.final_metrics(estimator, job, data, package, {}))
    scratch = Path(tempfile.mkdtemp(prefix="pgs-e2e-models-"))
    try:
        trained = training.Trained(
            estimator,
            package,
            metrics,
            training.jobs.Progress(
                iteration=0, n_iter=None, samples_seen=0, metrics=metrics, points=[], dropped=0
            ),
        )
        steps["store_model"], _ = timed(
            lambda: training.store_model(Settings(data_dir=scratch).store, job, trained)
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return steps


def summary(samples: list[dict[str, Any]]) -> dict[str, float]:
    return {
        k: statistics.median(s[k] for s in samples) for k, v in samples[0].items() if isinstance(v, float)
    }


def one_repeat(
    c: httpx.Client, body: dict[str, Any], spec: Any, store: Any, key: str, n_features: int
) -> dict[str, Any]:
    """The job through the service, then one read, the preprocessing and the fit here."""
    sample = run_job(c, body)
    sample["read_s"], (X, y) = timed(lambda: read_stored(store, key, n_features))
    sample["prep_s"], X = timed(lambda: preprocess(X, sample["preprocessing"]))
    estimator = spec.build()
    sample["fit_s"], _ = timed(lambda: estimator.fit(X, y))
    return sample


def session_factory(settings: Any) -> Any:
    from app.db.engine import make_engine, make_session_factory

    return make_session_factory(make_engine(settings.database_url, 5.0))


def train_key(settings: Any, job_id: int) -> str:
    """The store key of the data set job ``job_id`` trained on."""
    from app.training import steps as training

    return training.load_job(session_factory(settings), job_id).data.train_key


def measure(
    api: ApiServer,
    settings: Any,
    cases: list[dict[str, Any]],
    n_iter: int,
    repeats: int,
    dataset_id: int,
    n_features: int,
) -> None:
    from app.services.solvers.estimators import EstimatorSpec

    def body(case: dict[str, Any]) -> dict[str, Any]:
        return job_body(dataset_id, case["p"], n_iter, case["preprocessing"])

    with api.client() as c:
        for case in cases:
            case["first_job"] = run_job(c, body(case))
            case["samples"] = []
        key = train_key(settings, cases[0]["first_job"]["job_id"])
        spec = {
            case["p"]: EstimatorSpec("pgs", "classification", body(case)["params"], None) for case in cases
        }
        X, y = read_stored(settings.store, key, n_features)
        for s in spec.values():  # the kernels into this process, off the clock
            s.build().fit(X, y)
        for _ in range(repeats):
            for case in cases:
                case["samples"].append(
                    one_repeat(c, body(case), spec[case["p"]], settings.store, key, n_features)
                )
    for case in cases:
        case["median"] = summary(case["samples"])


@contextlib.contextmanager
def service(root: Path) -> Iterator[tuple[ApiServer, Any]]:
    """A real service (``python -m app``) on its own data dir under ``root``, with the service's
    defaults, and the Settings that read its data dir; stopped when the block ends."""
    from app.core.config import Settings

    # The service's defaults, except the harness's quicker progress writes (restored here).
    default_interval = Settings.model_fields["progress_interval_s"].default
    api = ApiServer(root / "var", root / "api.log", PGS_PROGRESS_INTERVAL_S=str(default_interval))
    api.start()
    try:
        yield api, Settings(data_dir=root / "var")
    finally:
        api.stop()


def upload(c: httpx.Client, path: Path, **fields: str) -> dict[str, Any]:
    """One svmlight file uploaded as a data set (its parse done when the answer comes)."""
    with path.open("rb") as fh:
        return (
            c.post("/v1/datasets", files={"file": (path.name, fh)}, data=fields, timeout=1800)
            .raise_for_status()
            .json()
        )


def run(
    ps: list[float], preprocessings: list[str], n_iter: int, repeats: int, profile_repeats: int
) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="pgs-e2e-"))
    try:
        svm = root / "kdd_like.svm"
        m, n = stored_set(svm)
        cases: list[dict[str, Any]] = [{"p": p, "preprocessing": pre} for pre in preprocessings for p in ps]
        with service(root) as (api, settings):
            with api.client() as c:
                upload_s, ds = timed(lambda: upload(c, svm))
            measure(api, settings, cases, n_iter, repeats, ds["id"], n)
        for case in cases:  # the server is stopped: the replay has the cores to itself
            if profile_repeats:
                case["worker_steps"] = median_steps(
                    [profile_worker(settings, case["samples"][-1]["job_id"]) for _ in range(profile_repeats)]
                )
        return {
            "set": "kdd_like",
            "m": m,
            "n": n,
            "nnz": ds["nnz"],
            "sigma": SIGMA,
            "n_iter": n_iter,
            "repeats": repeats,
            "profile_repeats": profile_repeats,
            "upload_s": upload_s,
            "cases": cases,
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)


# -- files on disk to a stored model --------------------------------------------------------------

FILES_SIGMA = 1e-6
# The target test accuracy of each set: the exact optimum's at sigma 1e-6 on raw features
# (bench.peers' record) less 0.5 points, rounded down to a multiple of 0.005.
FILES_TARGETS = {"a9a": 0.845, "kdd_like": 0.94, "rcv1_like": 0.805}
# Enough epochs for either path to reach the target (the target stops both before).
FILES_EPOCHS = 30


def files_of(name: str, directory: Path) -> tuple[Path, Path]:
    """The set's train and test svmlight files on disk: a9a's from the shared data, the synthetic
    sets written once (values to 6 decimals, as a user's export would have them)."""
    if name == "a9a":
        return DATA_DIR / "a9a.train.svm", DATA_DIR / "a9a.test.svm"
    X, y, X_test, y_test = {"kdd_like": kdd_like, "rcv1_like": rcv1_like}[name]()
    paths = directory / f"{name}.train.svm", directory / f"{name}.test.svm"
    for path, (X_part, y_part) in zip(paths, [(X, y), (X_test, y_test)], strict=True):
        path.write_bytes(svmlight_text(sp.csr_matrix(X_part), y_part, decimals=6))
    return paths


def files_params(target: float, m: int, seed: int) -> dict[str, Any]:
    """The estimator's parameters on both paths: stop at the target's first checkpoint."""
    return {
        "loss": "logistic",
        "sigma": FILES_SIGMA,
        "n_iter": FILES_EPOCHS * m,
        "target_score": target,
        "random_state": seed,
    }


def notebook(train: Path, test: Path, target: float, seed: int) -> dict[str, Any]:
    """The notebook path, timed: scikit-learn's reader for both files, MaxAbsScaler fitted on the
    training rows, ``PGSClassifier.fit`` with the test set as ``eval_set`` to the target."""
    from sklearn.datasets import load_svmlight_file
    from sklearn.preprocessing import MaxAbsScaler

    from solver import PGSClassifier

    started = time.perf_counter()
    sample: dict[str, Any] = {}
    sample["read_train_s"], (X, y) = timed(lambda: load_svmlight_file(str(train)))
    sample["read_test_s"], (X_test, y_test) = timed(
        lambda: load_svmlight_file(str(test), n_features=X.shape[1])
    )

    def scale() -> tuple[Any, Any]:
        scaler = MaxAbsScaler().fit(X)
        return scaler.transform(X), scaler.transform(X_test)

    sample["scale_s"], (X, X_test) = timed(scale)
    estimator = PGSClassifier(**files_params(target, X.shape[0], seed))
    sample["fit_s"], _ = timed(lambda: estimator.fit(X, y, eval_set=(X_test, y_test)))
    sample["total_s"] = time.perf_counter() - started
    sample["solver_s"] = estimator.solver_seconds_
    sample["checkpoint_s"] = estimator.checkpoint_seconds_
    sample["reached"] = estimator.stop_reason_ == "target_score"
    sample["m"], sample["n"], sample["m_test"] = X.shape[0], X.shape[1], X_test.shape[0]
    return sample


# The job's metrics that say where its run went (app/training/timing.py), kept per repeat.
RUN_PARTS = (
    "load_seconds",
    "preprocessing_seconds",
    "compile_seconds",
    "solver_seconds",
    "checkpoint_seconds",
    "progress_seconds",
    "final_metrics_seconds",
    "model_write_seconds",
    "other_seconds",
    "overhead_seconds",
)


def through_service(c: httpx.Client, train: Path, test: Path, target: float, seed: int) -> dict[str, Any]:
    """The service path, timed from the first byte of the first upload: both files uploaded (the
    test set declared with the training set's width, as the notebook reads it), the job posted
    with the default preprocessing and the target, and waited for until succeeded (its model
    stored)."""
    started = time.perf_counter()
    sample: dict[str, Any] = {}
    sample["upload_train_s"], ds = timed(lambda: upload(c, train))
    sample["upload_test_s"], ds_test = timed(lambda: upload(c, test, n_features=str(ds["n_features"])))
    body = {
        "dataset_id": ds["id"],
        "test_dataset_id": ds_test["id"],
        "targets": [target],
        "params": files_params(target, ds["n_samples"], seed),
    }
    job = run_job(c, body)
    sample["total_s"] = time.perf_counter() - started
    sample["job_s"] = job["client_s"]
    sample["dispatch_s"], sample["run_s"] = job["dispatch_s"], job["run_s"]
    sample.update({part: float(job["metrics"][part]) for part in RUN_PARTS})
    sample["reached"] = job["stop_reason"] == "target_score"
    for dataset in (ds, ds_test):  # the next repeat uploads its own copies
        c.delete(f"/v1/datasets/{dataset['id']}")
    return sample


def files_case(c: httpx.Client, name: str, root: Path, repeats: int) -> dict[str, Any]:
    """One set: a warm-up of each path (kernels loaded in both processes, the files in the page
    cache for both), then ``repeats`` of each, interleaved."""
    train, test = files_of(name, root)
    target = FILES_TARGETS[name]
    notebook(train, test, target, seed=0)
    through_service(c, train, test, target, seed=0)
    case: dict[str, Any] = {
        "set": name,
        "target": target,
        "train_mb": train.stat().st_size / 1e6,
        "test_mb": test.stat().st_size / 1e6,
        "notebook": [],
        "service": [],
    }
    for seed in range(1, repeats + 1):
        case["notebook"].append(notebook(train, test, target, seed))
        case["service"].append(through_service(c, train, test, target, seed))
        print(
            f"  {name} repeat {seed}: notebook {case['notebook'][-1]['total_s']:.2f} s, "
            f"service {case['service'][-1]['total_s']:.2f} s",
            flush=True,
        )
    first = case["notebook"][0]
    case.update(m=first["m"], n=first["n"], m_test=first["m_test"])
    case["median_notebook"] = summary(case["notebook"])
    case["median_service"] = summary(case["service"])
    return case


def run_files(sets: list[str], repeats: int) -> dict[str, Any]:
    """Files on disk to a stored model at a target accuracy, the service against the notebook.

    The notebook path (one process): ``load_svmlight_file`` of the train and test files,
    ``MaxAbsScaler`` fitted on the training rows, ``PGSClassifier.fit`` with the test set as
    ``eval_set`` and ``target_score`` the target. The service path: a real service (``python -m
    app``, its defaults) on loopback; both files uploaded, the job posted with the target and the
    service's default preprocessing (max-abs scaling of svmlight data), waited for with the long
    poll until succeeded, which is when its model is stored. Both fit the same estimator
    (sigma ``FILES_SIGMA``, seeds per repeat alike) and stop at the first checkpoint whose test
    accuracy (on the ``eval_rows`` sample of the test set, the same rule on both sides) reaches
    the target. Each repeat's ratio is service / notebook; the job's own metrics say where its
    run went (``overhead_seconds`` and its parts)."""
    root = Path(tempfile.mkdtemp(prefix="pgs-e2e-files-"))
    try:
        with service(root) as (api, _), api.client() as c:
            cases = [files_case(c, name, root, repeats) for name in sets]
        return {"measure": "files", "sigma": FILES_SIGMA, "repeats": repeats, "cases": cases}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--p", default="2,1.8", help="the PGS p of each case (comma-separated)")
    ap.add_argument(
        "--preprocessing",
        default="none,default",
        help="the jobs' preprocessing: none (raw features), default (the service's)",
    )
    ap.add_argument("--n-iter", type=int, default=N_ITER)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument(
        "--profile-repeats", type=int, default=3, help="replays of the worker's steps per case (0: none)"
    )
    ap.add_argument(
        "--measure",
        choices=("post", "files"),
        default="post",
        help="post: POST to succeeded on stored rows; files: files on disk to a stored model",
    )
    ap.add_argument(
        "--sets", default=",".join(FILES_TARGETS), help="the sets of --measure files (comma-separated)"
    )
    add_results_dir(ap)
    args = ap.parse_args(argv)
    recording = record("end_to_end", argv)
    if args.measure == "files":
        files = run_files(args.sets.split(","), args.repeats)
        path = recording.save(files, args.results_dir, name="end_to_end_files")
        print(tables.end_to_end_files(files))
        print(f"wrote {path}")
        return
    results = run(
        [float(p) for p in args.p.split(",")],
        args.preprocessing.split(","),
        args.n_iter,
        args.repeats,
        args.profile_repeats,
    )
    path = recording.save(results, args.results_dir)
    print(tables.end_to_end(results))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
