"""Every error status the client maps, produced by a real service; retries that never
duplicate work (a real 503 from a locked database, a response lost by a proxy)."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest
from pgs_client import (
    ApiError,
    AuthError,
    Client,
    Conflict,
    ConnectionFailed,
    JobFailed,
    NotFound,
    PayloadTooLarge,
    RetryPolicy,
    ServiceUnavailable,
    Solver,
    SolverParam,
    SolverTask,
    ValidationError,
)

from tests.client.conftest import API_KEY, DroppingProxy
from tests.cluster.harness import ApiServer, free_port

# Against real services (conftest.py): out of make test-fast.
pytestmark = pytest.mark.system

PROBLEM_FIELDS = {"type", "title", "status", "detail", "instance"}


def _jobs_on(client: Client, dataset_id: int) -> list[int]:
    return [j.id for j in client.jobs.list(dataset=dataset_id)]


def test_404_is_not_found_with_the_problem_body(client: Client):
    with pytest.raises(NotFound) as caught:
        client.jobs.get(10**9)
    err = caught.value
    assert isinstance(err, ApiError) and err.status == 404
    assert PROBLEM_FIELDS <= set(err.problem) and err.type == "urn:pgs:problem:not-found"
    assert err.detail == f"job {10**9} does not exist" and "404" in str(err)
    for call in (client.datasets.get, client.models.get, client.studies.get, client.jobs.trace):
        with pytest.raises(NotFound):
            call(10**9)


def test_422_names_the_field(client: Client, heart_job):
    ds, _ = heart_job
    with pytest.raises(ValidationError) as caught:
        client.jobs.create(ds, params={"sigma": -1.0})
    assert caught.value.status == 422
    assert [e["field"] for e in caught.value.errors] == ["body.params.sigma"]
    with pytest.raises(ValidationError, match="targets"):
        client.jobs.create(ds, targets=[0.9])  # targets without evaluation data


def test_409_idempotency_key_reused_with_another_body(client: Client, heart_job):
    ds, _ = heart_job
    first = client.jobs.create(ds, params={"n_iter": 50}, idempotency_key="client-409")
    again = client.jobs.create(ds, params={"n_iter": 50}, idempotency_key="client-409")
    assert again.id == first.id
    with pytest.raises(Conflict) as caught:
        client.jobs.create(ds, params={"n_iter": 51}, idempotency_key="client-409")
    assert caught.value.status == 409 and "Idempotency-Key" in caught.value.detail


def test_401_403_and_a_valid_key(strict_service: ApiServer, heart: Path, monkeypatch):
    monkeypatch.delenv("PGS_API_KEY", raising=False)
    with Client(strict_service.base) as anonymous, pytest.raises(AuthError) as caught:
        list(anonymous.datasets.list())
    assert caught.value.status == 401
    with Client(strict_service.base, api_key="wrong") as wrong, pytest.raises(AuthError) as caught:
        wrong.datasets.get(1)
    assert caught.value.status == 403
    monkeypatch.setenv("PGS_API_KEY", API_KEY)  # the default when api_key is not given
    with Client(strict_service.base) as c:
        assert c.datasets.upload(heart).n_samples == 270


def test_413_upload_over_the_limit(strict_service: ApiServer, data_dir: Path):
    with Client(strict_service.base, api_key=API_KEY) as c, pytest.raises(PayloadTooLarge) as caught:
        c.datasets.upload(data_dir / "a9a.test.svm")
    assert caught.value.status == 413 and "limit" in caught.value.detail


def test_503_is_retried_after_retry_after_and_creates_one_job(strict_service: ApiServer, heart: Path):
    """A real 503: the test holds SQLite's write lock, the service's busy timeout (0.5 s)
    expires and it answers 503 with Retry-After; without retries that is ServiceUnavailable,
    with them the job is created once the lock is released."""
    database = Path(strict_service.env["PGS_DATA_DIR"]) / "pgs.db"
    with Client(strict_service.base, api_key=API_KEY) as c:
        ds = c.datasets.upload(heart)
        lock = sqlite3.connect(database, isolation_level=None, check_same_thread=False)
        try:
            lock.execute("BEGIN EXCLUSIVE")
            with Client(strict_service.base, api_key=API_KEY, retry=RetryPolicy(max_retries=0)) as impatient:
                with pytest.raises(ServiceUnavailable) as caught:
                    impatient.jobs.create(ds, params={"n_iter": 10})
            assert caught.value.status == 503 and caught.value.retry_after == 2
            release = threading.Timer(1.0, lock.execute, ["COMMIT"])
            release.start()
            started = time.monotonic()
            job = c.jobs.create(ds, params={"n_iter": 10})
            assert time.monotonic() - started >= 2.0  # waited the service's Retry-After
            release.join()
        finally:
            lock.close()
        assert _jobs_on(c, ds.id) == [job.id]


def test_a_lost_response_to_post_jobs_is_retried_and_creates_one_job(
    service: ApiServer, client: Client, heart: Path
):
    ds = client.datasets.upload(heart)
    proxy = DroppingProxy(service.port, b"POST /v1/jobs")
    try:
        with Client(proxy.url) as through_proxy:
            job = through_proxy.jobs.create(ds, params={"n_iter": 10})
    finally:
        proxy.close()
    assert proxy.dropped == 1
    assert _jobs_on(client, ds.id) == [job.id]


def test_a_lost_response_to_an_upload_is_retried_and_stores_one_data_set(
    service: ApiServer, client: Client, heart: Path
):
    """The upload carries an Idempotency-Key: the retry sends the file again and the service
    answers with the data set the first attempt stored."""
    before = {d.id for d in client.datasets.list()}
    proxy = DroppingProxy(service.port, b"POST /v1/datasets")
    try:
        with Client(proxy.url) as through_proxy:
            ds = through_proxy.datasets.upload(heart, name="lost answer")
    finally:
        proxy.close()
    created = [d for d in client.datasets.list() if d.id not in before]
    assert proxy.dropped == 1 and [d.id for d in created] == [ds.id]


def test_a_lost_response_to_a_study_is_retried_and_starts_one_study(
    service: ApiServer, client: Client, heart: Path
):
    ds = client.datasets.upload(heart)
    before = {s.id for s in client.studies.list()}
    proxy = DroppingProxy(service.port, b"POST /v1/studies")
    try:
        with Client(proxy.url) as through_proxy:
            study = through_proxy.studies.create(
                ds, runs=[{"params": {"n_iter": 10}}], sizes=[40], repeats=1, targets=[0.5], test_fraction=0.3
            )
    finally:
        proxy.close()
    created = [s.id for s in client.studies.list() if s.id not in before]
    assert proxy.dropped == 1 and created == [study.id]
    assert len(list(client.studies.jobs(study))) == 1


def test_an_unreachable_service_is_retried_then_raised():
    with Client(f"http://127.0.0.1:{free_port()}", retry=RetryPolicy(max_retries=2, backoff_s=0.01)) as c:
        with pytest.raises(ConnectionFailed) as caught:
            c.jobs.get(1)
    assert "ConnectError" in str(caught.value)


def test_a_failed_job_raises_job_failed_with_the_reason(strict_service: ApiServer, heart: Path):
    """A real failure: the data set's file is gone from the store when the job runs."""
    store = Path(strict_service.env["PGS_DATA_DIR"]) / "datasets"
    before = set(store.iterdir())
    with Client(strict_service.base, api_key=API_KEY) as c:
        ds = c.datasets.upload(heart)
        (new_dataset,) = set(store.iterdir()) - before
        (new_dataset / "manifest.json").unlink()
        with pytest.raises(JobFailed) as caught:
            c.jobs.wait(c.jobs.create(ds, params={"n_iter": 10}))
    assert caught.value.job.status == "failed" and caught.value.job.error
    assert caught.value.job.error in str(caught.value)


def test_solvers_catalogue(client: Client):
    """``GET /v1/solvers`` as typed objects; an unknown name is the service's 404."""
    solvers = {s.name: s for s in client.solvers()}
    pgs = solvers["pgs"]
    assert isinstance(pgs, Solver) and pgs.paper and pgs.algorithm
    classification = pgs.tasks[0]
    assert isinstance(classification, SolverTask) and classification.estimator == "PGSClassifier"
    p = next(param for param in classification.params if param.name == "p")
    assert isinstance(p, SolverParam) and p.default == 2.0 and p.range is not None
    assert (p.range.min, p.range.max) == (1.01, 2.0)
    assert client.solvers.get("pgs") == pgs
    with pytest.raises(NotFound, match="solver no-such-solver does not exist"):
        client.solvers.get("no-such-solver")
