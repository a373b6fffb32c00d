"""Figures: ``GET /v1/studies/{id}/plot`` (time to target against m) and ``GET /v1/jobs/{id}/plot``
(a job's trace, or with ``?kind=path`` the regularisation path of its sigma "auto"). SVG by
default, PNG with ``?format=png``.

The handlers are plain ``def``: FastAPI runs them in its thread pool, so the database reads and
the matplotlib rendering (tens of milliseconds) never block the event loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Response

from app.api.deps import JobDep, SessionDep, StudyDep
from app.api.openapi import problems
from app.core.errors import ProblemError, conflict
from app.db.tables import Job
from app.services import plots
from app.services.jobs import state as job_service
from app.services.studies import state as study_service

router = APIRouter(tags=["plots"])

FormatQuery = Annotated[Literal["svg", "png"], Query(description="svg (default) or png")]
_SVG_EXAMPLE = '<svg xmlns="http://www.w3.org/2000/svg" width="640" height="480">...</svg>'
_IMAGE: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The figure",
        "content": {
            "image/svg+xml": {"schema": {"type": "string"}, "example": _SVG_EXAMPLE},
            "image/png": {"schema": {"type": "string", "format": "binary"}},
        },
    },
    **problems(404, (503, "matplotlib is not installed, or the database is unavailable")),
}


def _image(render: Callable[..., bytes], fmt: str, *args: Any) -> Response:
    try:
        body = render(*args)
    except plots.PlottingUnavailable as exc:
        raise ProblemError(503, str(exc), kind="plotting-unavailable") from exc
    # A study or job still running gives another figure a moment later.
    return Response(body, media_type=plots.MEDIA_TYPES[fmt], headers={"Cache-Control": "no-store"})


@router.get(
    "/v1/studies/{study_id}/plot",
    response_class=Response,
    responses=_IMAGE,
    summary="Time to target against training-set size (log-log), per run and target",
)
def study_plot(
    study: StudyDep,
    session: SessionDep,
    y: Annotated[
        Literal["seconds", "iterations"],
        Query(description="solver seconds (Figures 6-8) or iterations (Figure 9)"),
    ] = "seconds",
    format: FormatQuery = "svg",
) -> Response:
    counts = study_service.job_counts(session, [study.id])[study.id]
    progress = study_service.progress(counts)
    data = plots.StudyFigure(
        title=study.name or f"study {study.id}: time to target",
        score_name="rmse" if study.task == "regression" else "accuracy",
        sizes=list(study.sizes),
        targets=list(study.targets),
        labels=[r["label"] for r in study.runs],
        rows=study_service.study_table(session, study),
        done=progress["done"],
        total=progress["total"],
        succeeded=progress["succeeded"],
    )
    return _image(plots.render_study, format, data, y, format)


@router.get(
    "/v1/jobs/{job_id}/plot",
    response_class=Response,
    responses={**_IMAGE, **problems((409, 'kind=path for a job whose params.sigma is not "auto"'))},
    summary="Test score and objective against solver seconds, or the score against sigma",
)
def job_plot(
    job: JobDep,
    session: SessionDep,
    kind: Annotated[
        Literal["trace", "path"],
        Query(
            description="trace (default): test score and objective against solver seconds; path: "
            'the held-out score against sigma of params.sigma "auto", the chosen sigma marked'
        ),
    ] = "trace",
    format: FormatQuery = "svg",
) -> Response:
    if kind == "path":
        return _image(plots.render_path, format, _path_figure(job), format)
    rows = job_service.trace_points(session, job.id)
    score_name = next((r.score_name for r in rows if r.score_name), None)
    data = plots.TraceFigure(
        title=f"job {job.id}: {job.solver}, {job.status}",
        score_name=score_name,
        targets=list(job.targets),
        points=[(r.solver_seconds, r.objective, r.test_score) for r in rows],
    )
    return _image(plots.render_trace, format, data, format)


def _path_figure(job: Job) -> plots.PathFigure:
    """The path a finished job recorded; an empty figure until then."""
    if job.params.get("sigma") != "auto":
        raise conflict(f'job {job.id} has a numeric sigma; only params.sigma "auto" has a path')
    selection = job.selection or {}
    return plots.PathFigure(
        title=f"job {job.id}: {job.solver}, {job.status}, {selection.get('splits', 'path')}",
        metric=selection.get("metric"),
        chosen=selection.get("sigma"),
        points=[(p["sigma"], p["mean"], p["std"]) for p in selection.get("path", [])],
    )
