"""``/v1/studies``: time-to-accuracy studies (create, list, read, jobs, wait, cancel, plot)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from typing import Any

from pgs_client.convert import from_json, params_json
from pgs_client.operations import covers
from pgs_client.progress import bar, wanted
from pgs_client.resources import ident
from pgs_client.resources.jobs import poll
from pgs_client.schemas import DatasetRead, JobRead, StudyRead
from pgs_client.transport import Transport


class Studies:
    def __init__(self, transport: Transport):
        self._t = transport

    @covers("POST /v1/studies")
    def create(
        self,
        dataset: int | DatasetRead,
        *,
        runs: Sequence[dict[str, Any]],
        sizes: Sequence[int],
        targets: Sequence[float],
        test_dataset: int | DatasetRead | None = None,
        test_fraction: float | None = None,
        repeats: int = 3,
        seed: int = 0,
        name: str | None = None,
        time_budget_s: float | None = None,
        select_sigma: dict[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> StudyRead:
        """Start a study: every run (``{"solver", "params", "label"}``, its params a dict or the
        solver's typed parameters, as for a job) at every training-set size, ``repeats`` times,
        each an ordinary job. Give ``test_dataset`` or ``test_fraction``. The request carries an
        ``Idempotency-Key`` (a fresh one unless given): a retry after a lost connection returns
        the first study instead of starting a second."""
        body: dict[str, Any] = {
            "dataset_id": ident(dataset),
            "runs": [{**run, "params": params_json(run.get("params"))} for run in runs],
            "sizes": list(sizes),
            "targets": list(targets),
            "repeats": repeats,
            "seed": seed,
        }
        optional = {
            "test_dataset_id": None if test_dataset is None else ident(test_dataset),
            "test_fraction": test_fraction,
            "name": name,
            "time_budget_s": time_budget_s,
            "select_sigma": select_sigma,
        }
        body.update({k: v for k, v in optional.items() if v is not None})
        key = idempotency_key or str(uuid.uuid4())
        response = self._t.request("POST", "/v1/studies", safe=False, idempotency_key=key, json=body)
        return from_json(StudyRead, response.json())

    @covers("GET /v1/studies/{study_id}")
    def get(self, study: int | StudyRead) -> StudyRead:
        """The study with its time-to-target table (``.table``)."""
        return from_json(StudyRead, self._t.get(f"/v1/studies/{ident(study)}"))

    @covers("GET /v1/studies")
    def list(
        self,
        limit: int | None = None,
        *,
        search: str | None = None,
        sort: str | None = None,
        page_size: int = 100,
    ) -> Iterator[StudyRead]:
        """Studies, newest first (or in ``sort``'s order: ``name``, ``-created_at``), without
        their tables; only those whose name contains ``search`` (any case) when given."""
        return self._t.pages(
            "/v1/studies", lambda s: from_json(StudyRead, s), limit, page_size, q=search, sort=sort
        )

    @covers("GET /v1/studies/{study_id}/jobs")
    def jobs(
        self, study: int | StudyRead, limit: int | None = None, *, page_size: int = 100
    ) -> Iterator[JobRead]:
        """The study's jobs, newest first."""
        return self._t.pages(
            f"/v1/studies/{ident(study)}/jobs", lambda j: from_json(JobRead, j), limit, page_size
        )

    @covers("POST /v1/studies/{study_id}/cancel")
    def cancel(self, study: int | StudyRead) -> StudyRead:
        """Cancel every queued or running job of the study."""
        response = self._t.request("POST", f"/v1/studies/{ident(study)}/cancel", safe=True)
        return from_json(StudyRead, response.json())

    @covers("GET /v1/studies/{study_id}")
    def wait(
        self,
        study: int | StudyRead,
        *,
        progress: bool = False,
        timeout: float | None = None,
        poll_s: float = 2.0,
    ) -> StudyRead:
        """Poll until every job of the study has ended; returns the study with its table
        (whatever its status: a study whose jobs failed still has a table)."""
        study_id = ident(study)

        def done(s: StudyRead) -> bool:
            return s.progress.done == s.progress.total

        current = self.get(study_id)  # a study that does not exist fails before any bar
        if done(current):
            return current
        with bar(f"study {study_id}", 1.0, enabled=wanted(progress, True)) as bar_:

            def fetch() -> StudyRead:
                s = self.get(study_id)
                bar_.update(
                    s.progress.fraction,
                    f"{s.progress.done}/{s.progress.total} jobs, {s.progress.failed} failed",
                )
                return s

            return poll(fetch, done, timeout, poll_s, f"study {study_id}")

    @covers("GET /v1/studies/{study_id}/plot")
    def plot(self, study: int | StudyRead, *, y: str = "seconds", format: str = "svg") -> bytes:
        """Time to target against training-set size (SVG or PNG bytes); ``y`` is ``seconds``
        or ``iterations``."""
        return self._t.request(
            "GET", f"/v1/studies/{ident(study)}/plot", safe=True, params={"y": y, "format": format}
        ).content
