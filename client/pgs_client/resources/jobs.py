"""``/v1/jobs``: create (idempotent), list, read, wait, cancel, trace, plot."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

from pgs_client.convert import from_json, params_json, to_frame
from pgs_client.errors import JobCancelled, JobFailed
from pgs_client.operations import covers
from pgs_client.progress import bar, wanted
from pgs_client.resources import ident, labels, model_ref
from pgs_client.schemas import DatasetRead, JobRead, ModelRead, TracePointRead, TraceRead
from pgs_client.transport import Transport

FINAL = ("succeeded", "failed", "cancelled")
# The longest long poll the service grants (GET /v1/jobs/{id}?wait=).
MAX_WAIT_S = 30.0


def score_text(metrics: dict[str, Any] | None) -> str:
    """A job's or model's test score, e.g. ``test_accuracy 0.8421`` (empty before the first)."""
    for key in ("test_accuracy", "test_rmse"):
        value = (metrics or {}).get(key)
        if value is not None:
            return f"{key} {value:.4f}"
    return ""


def poll(fetch: Any, done: Any, timeout: float | None, poll_s: float, what: str) -> Any:
    """Call ``fetch()`` until ``done(result)``, every 0.1 s at first, then every ``poll_s``;
    ``TimeoutError`` after ``timeout`` seconds."""
    deadline = None if timeout is None else time.monotonic() + timeout
    pause = 0.1
    while True:
        result = fetch()
        if done(result):
            return result
        if deadline is not None and time.monotonic() > deadline:
            raise TimeoutError(f"{what} not finished after {timeout} s")
        time.sleep(pause)
        pause = min(pause * 2, poll_s)


class Jobs:
    def __init__(self, transport: Transport):
        self._t = transport

    @covers("POST /v1/jobs")
    def create(
        self,
        dataset: int | DatasetRead,
        *,
        solver: str = "pgs",
        params: Any = None,
        selection: Any = None,
        test_dataset: int | DatasetRead | None = None,
        test_fraction: float | None = None,
        split_seed: int = 0,
        targets: Sequence[float] = (),
        target_metric: str | None = None,
        threshold: Any = None,
        time_budget_s: float | None = None,
        name: str | None = None,
        description: str | None = None,
        tags: Sequence[str] | None = None,
        model_name: str | None = None,
        init_model: int | str | ModelRead | None = None,
        weight_column: str | None = None,
        preprocessing: Any = None,
        idempotency_key: str | None = None,
    ) -> JobRead:
        """Queue a training job. ``params`` is a dict, or the solver's typed parameters
        (``pgs_client.schemas.PGSParams(sigma=1e-4)``, ...; see ``convert.params_json``). The
        request carries an ``Idempotency-Key`` (a fresh one unless given): a retry after a lost
        connection returns the first job instead of a second.
        Pass your own key to make a retry from another process safe too. ``model_name``:
        the model is registered as the next version of that name. ``selection``: with
        ``params`` sigma "auto", how the regularisation path chooses sigma, a dict or
        ``pgs_client.schemas.Selection(folds=3, grid=[1e-3, 1e-4])`` (None: the defaults).
        ``init_model``: a stored model (its id, ``name@alias`` or the model) the fit starts from,
        to refresh it on new rows; the job reuses its fitted preprocessing.
        ``target_metric``: the metric ``targets`` are values of (None: accuracy or RMSE).
        ``threshold``: a binary classifier's decision threshold, a number, or a dict
        (``{"metric": "f1"}`` chooses it on validation rows).
        ``weight_column``: a numeric column of a CSV/Parquet data set (its header name) whose
        values weigh the rows in the loss and the test score; classes are weighted by the
        classifier's ``class_weight`` parameter (``"balanced"`` or ``{label: weight}``).
        ``preprocessing``: how the features are scaled, imputed and which columns are left out,
        a dict or ``pgs_client.schemas.Preprocessing(scaling="none", ignore=["id"])`` (None: the
        service's default)."""
        body: dict[str, Any] = {
            "dataset_id": ident(dataset),
            "solver": solver,
            "params": params_json(params),
            "split_seed": split_seed,
            "targets": list(targets)
            if target_metric is None
            else {"metric": target_metric, "values": list(targets)},
            **labels(description, tags, name=name, model_name=model_name),
        }
        if test_dataset is not None:
            body["test_dataset_id"] = ident(test_dataset)
        if test_fraction is not None:
            body["test_fraction"] = test_fraction
        if time_budget_s is not None:
            body["time_budget_s"] = time_budget_s
        if selection is not None:
            body["selection"] = params_json(selection)
        if init_model is not None:
            body["init_model"] = init_model if isinstance(init_model, int) else model_ref(init_model)
        if threshold is not None:
            body["threshold"] = (
                {"value": threshold} if isinstance(threshold, (int, float)) else params_json(threshold)
            )
        if weight_column is not None:
            body["weight_column"] = weight_column
        if preprocessing is not None:
            body["preprocessing"] = params_json(preprocessing)
        key = idempotency_key or str(uuid.uuid4())
        response = self._t.request("POST", "/v1/jobs", safe=False, idempotency_key=key, json=body)
        return from_json(JobRead, response.json())

    @covers("GET /v1/jobs/{job_id}")
    def get(self, job: int | JobRead) -> JobRead:
        return from_json(JobRead, self._t.get(f"/v1/jobs/{ident(job)}"))

    @covers("GET /v1/jobs")
    def list(
        self,
        limit: int | None = None,
        *,
        status: str | None = None,
        dataset: int | DatasetRead | None = None,
        test_dataset: int | DatasetRead | None = None,
        solver: str | None = None,
        name: str | None = None,
        tag: str | Sequence[str] | None = None,
        search: str | None = None,
        sort: str | None = None,
        page_size: int = 100,
    ) -> Iterator[JobRead]:
        """Jobs, newest first (or in ``sort``'s order: ``name``, ``-finished_at``, ...), a page
        at a time; only those in ``status``, trained on ``dataset``, evaluated on
        ``test_dataset``, of ``solver``, named ``name``, with every tag of ``tag``, whose name
        or model name contains ``search`` (any case) when given (the service filters)."""
        return self._t.pages(
            "/v1/jobs",
            lambda j: from_json(JobRead, j),
            limit,
            page_size,
            status=status,
            dataset_id=None if dataset is None else ident(dataset),
            test_dataset_id=None if test_dataset is None else ident(test_dataset),
            solver=solver,
            name=name,
            tag=tag,
            q=search,
            sort=sort,
        )

    @covers("PATCH /v1/jobs/{job_id}")
    def update(
        self,
        job: int | JobRead,
        *,
        name: str | None = None,
        description: str | None = None,
        tags: Sequence[str] | None = None,
    ) -> JobRead:
        response = self._t.request(
            "PATCH", f"/v1/jobs/{ident(job)}", safe=True, json=labels(description, tags, name=name)
        )
        return from_json(JobRead, response.json())

    @covers("POST /v1/jobs/{job_id}/cancel")
    def cancel(self, job: int | JobRead) -> JobRead:
        """Stop a queued job now, a running one within about a second."""
        response = self._t.request("POST", f"/v1/jobs/{ident(job)}/cancel", safe=True)
        return from_json(JobRead, response.json())

    @covers("GET /v1/jobs/{job_id}")
    def wait(
        self, job: int | JobRead, *, progress: bool = False, timeout: float | None = None, poll_s: float = 1.0
    ) -> JobRead:
        """Wait until the job ends; returns it if it succeeded.

        Each request is a long poll (``GET /v1/jobs/{id}?wait=``): the service answers as soon
        as the job ends, so its end is seen when it happens, or after ``poll_s`` seconds (at
        most 30) with the progress that the bar shows.

        Raises :class:`~pgs_client.errors.JobFailed` (``.job.error`` is the reason) or
        :class:`~pgs_client.errors.JobCancelled`; ``TimeoutError`` after ``timeout`` seconds.
        ``progress``: a bar on stderr with the iteration fraction and the latest test score.
        """
        job_id = ident(job)
        deadline = None if timeout is None else time.monotonic() + timeout
        final = self.get(job_id)  # a job that does not exist fails before any bar is drawn
        if final.status not in FINAL:
            with bar(f"job {job_id}", 1.0, enabled=wanted(progress, True)) as bar_:
                while final.status not in FINAL:
                    wait = min(poll_s, MAX_WAIT_S)
                    if deadline is not None:
                        wait = min(wait, deadline - time.monotonic())
                        if wait <= 0:
                            raise TimeoutError(f"job {job_id} not finished after {timeout} s")
                    final = from_json(JobRead, self._t.get(f"/v1/jobs/{job_id}", params={"wait": wait}))
                    bar_.update(final.progress.fraction or 0.0, f"{final.status} {score_text(final.metrics)}")
        if final.status == "failed":
            raise JobFailed(final)
        if final.status == "cancelled":
            raise JobCancelled(final)
        return final

    @covers("GET /v1/jobs/{job_id}/trace")
    def trace(self, job: int | JobRead, *, as_frame: bool = False) -> Any:
        """The run's checkpoints (iteration, samples_seen, solver_seconds, objective,
        test_score, ...): a list of :class:`TracePointRead`, or a DataFrame with ``as_frame``."""
        trace = from_json(TraceRead, self._t.get(f"/v1/jobs/{ident(job)}/trace"))
        points: list[TracePointRead] = trace.points
        return to_frame(points) if as_frame else points

    @covers("GET /v1/jobs/{job_id}/plot")
    def plot(self, job: int | JobRead, format: str = "svg", kind: str = "trace") -> bytes:
        """A figure (SVG or PNG bytes): the trace, or with ``kind="path"`` the regularisation
        path of a job whose sigma was "auto" (the score against sigma, the chosen one marked)."""
        return self._t.request(
            "GET", f"/v1/jobs/{ident(job)}/plot", safe=True, params={"format": format, "kind": kind}
        ).content
