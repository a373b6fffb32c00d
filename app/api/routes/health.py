"""/healthz (alive), /readyz (database and worker pool usable), /metrics (Prometheus)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy import text
from starlette.concurrency import run_in_threadpool

from app.api.deps import FactoryDep, RunnerDep
from app.api.openapi import example, problems
from app.core.errors import problem_response
from app.core.security import metrics_access

router = APIRouter(tags=["health"])


@router.get("/healthz", summary="The process answers", responses=example(200, {"status": "ok"}))
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


def _db_ok(factory: Any) -> tuple[bool, str]:
    try:
        with factory() as s:
            s.execute(text("SELECT 1"))
        return True, "ok"
    except Exception as exc:  # any failure means "not ready", with the reason
        return False, f"{type(exc).__name__}: {exc}"


@router.get(
    "/readyz",
    summary="Database and worker pool usable",
    responses={**example(200, {"status": "ready",
                               "checks": {"database": "ok", "workers": "ok"}}),
               **problems((503, "Not ready: the problem's detail says which check failed"))},
)
async def readyz(request: Request, factory: FactoryDep, runner: RunnerDep) -> Any:
    db_ok, db_msg = await run_in_threadpool(_db_ok, factory)
    pool_ok, pool_msg = runner.ready()
    checks = {"database": db_msg, "workers": pool_msg}
    if db_ok and pool_ok:
        return {"status": "ready", "checks": checks}
    return problem_response(
        request, 503, "; ".join(f"{k}: {v}" for k, v in checks.items() if v != "ok"),
        kind="not-ready",
    )


@router.get(
    "/metrics", summary="Prometheus metrics (PGS_METRICS_ACCESS)", response_class=Response,
    dependencies=[Depends(metrics_access)],
    responses={**example(200, "# TYPE pgs_jobs gauge\npgs_jobs{status=\"queued\"} 0.0\n",
                         media_type="text/plain"),
               **problems(401, (404, "Metrics are turned off (PGS_METRICS_ACCESS=off)"))},
)
async def metrics(request: Request) -> Response:
    registry = request.app.state.metrics.registry
    body = await run_in_threadpool(generate_latest, registry)
    return Response(body, media_type=CONTENT_TYPE_LATEST)
