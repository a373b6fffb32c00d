"""/healthz (alive, and its version), /readyz (database, store and worker pool usable), /metrics
(Prometheus)."""

from __future__ import annotations

import asyncio
import shutil
from typing import Any

from fastapi import APIRouter, Depends, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy import text
from starlette.concurrency import run_in_threadpool

from app.api.deps import FactoryDep, RunnerDep, SettingsDep, reject_unknown_query
from app.api.openapi import example, problems
from app.core.config import Settings
from app.core.errors import problem_response
from app.core.security import metrics_access
from app.core.storage.base import Store
from app.schemas.health import Health
from app.version import VERSION

router = APIRouter(tags=["health"])
# Per route, not for the router: on /metrics the key is checked first (as on /v1), so a caller
# without one learns nothing about the parameters.
_KNOWN_QUERY_ONLY = Depends(reject_unknown_query)


@router.get(
    "/healthz",
    summary="The process answers, with the service's version",
    dependencies=[_KNOWN_QUERY_ONLY],
    responses=example(200, {"status": "ok", "version": VERSION}),
)
async def healthz() -> Health:
    return Health(status="ok", version=VERSION)


def _db_ok(factory: Any) -> tuple[bool, str]:
    try:
        with factory() as s:
            s.execute(text("SELECT 1"))
        return True, "ok"
    except Exception as exc:  # any failure means "not ready", with the reason
        return False, f"{type(exc).__name__}: {exc}"


# An unreachable object store can keep a request retrying for long; readiness answers sooner.
STORE_CHECK_TIMEOUT_S = 5.0


async def _store_ok(store: Store) -> tuple[bool, str]:
    try:
        await asyncio.wait_for(run_in_threadpool(store.ping), STORE_CHECK_TIMEOUT_S)
        return True, "ok"
    except TimeoutError:
        return False, f"{store!r} did not answer in {STORE_CHECK_TIMEOUT_S:g} s"
    except Exception as exc:  # any failure means "not ready", with the reason
        return False, f"{store!r}: {type(exc).__name__}: {exc}"


def _disk_ok(settings: Settings) -> tuple[bool, str]:
    """Free space where the data dir is (the database, uploads and, by default, the store): a
    full disk fails writes, and a server that says ready then answers every upload with 507."""
    free = shutil.disk_usage(settings.data_dir).free
    if free >= settings.min_free_bytes:
        return True, "ok"
    return False, (
        f"{free} bytes free on {settings.data_dir}, below {settings.min_free_bytes} (PGS_MIN_FREE_BYTES)"
    )


@router.get(
    "/readyz",
    summary="Database, store, free disk and worker pool usable",
    dependencies=[_KNOWN_QUERY_ONLY],
    responses={
        **example(
            200,
            {"status": "ready", "checks": {"database": "ok", "store": "ok", "disk": "ok", "workers": "ok"}},
        ),
        **problems((503, "Not ready: the problem's detail says which check failed")),
    },
)
async def readyz(request: Request, factory: FactoryDep, runner: RunnerDep, settings: SettingsDep) -> Any:
    (db_ok, db_msg), (store_ok, store_msg) = await asyncio.gather(
        run_in_threadpool(_db_ok, factory), _store_ok(settings.store)
    )
    pool_ok, pool_msg = runner.ready()
    disk_ok, disk_msg = _disk_ok(settings)
    checks = {"database": db_msg, "store": store_msg, "disk": disk_msg, "workers": pool_msg}
    if db_ok and store_ok and disk_ok and pool_ok:
        return {"status": "ready", "checks": checks}
    return problem_response(
        request,
        503,
        "; ".join(f"{k}: {v}" for k, v in checks.items() if v != "ok"),
        kind="not-ready",
    )


@router.get(
    "/metrics",
    summary="Prometheus metrics (PGS_METRICS_ACCESS)",
    response_class=Response,
    dependencies=[Depends(metrics_access), _KNOWN_QUERY_ONLY],
    responses={
        **example(200, '# TYPE pgs_jobs gauge\npgs_jobs{status="queued"} 0.0\n', media_type="text/plain"),
        **problems(401, (404, "Metrics are turned off (PGS_METRICS_ACCESS=off)")),
    },
)
async def metrics(request: Request) -> Response:
    registry = request.app.state.metrics.registry
    body = await run_in_threadpool(generate_latest, registry)
    return Response(body, media_type=CONTENT_TYPE_LATEST)
