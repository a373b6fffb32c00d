"""create_app(): the FastAPI application, its lifespan (database, migrations, worker pool and the
background services around it)."""

from __future__ import annotations

import functools
import logging
import os
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import IO, Any

from anyio import CapacityLimiter, to_thread
from fastapi import Depends, FastAPI

from app.api.audit import AuditMiddleware
from app.api.deps import reject_unknown_query
from app.api.openapi import API_GUARDS, REQUEST_GUARDS, install_openapi, problems
from app.api.routes import (
    account,
    aliases,
    batch_predictions,
    datasets,
    health,
    jobs,
    models,
    plots,
    solvers,
    studies,
    uploads,
)
from app.api.upload_slots import UploadSlotsMiddleware
from app.background.batch_predictor import BatchPredictor
from app.background.job_ends import RECHECK_S as JOB_ENDS_RECHECK_S
from app.background.job_ends import JobEnds
from app.background.lease_sweeper import LeaseSweeper
from app.background.pool_supervisor import PoolSupervisor
from app.background.upload_service import UploadService
from app.console import install_console
from app.core.clients import ProxiedClientMiddleware
from app.core.config import Settings, get_settings
from app.core.dirlock import DataDirBusy, lock_data_dir
from app.core.disk_reserve import DiskReserve, ReserveForDeletesMiddleware
from app.core.errors import install_error_handlers
from app.core.headers import SecurityHeadersMiddleware
from app.core.limits import BodyLimitMiddleware
from app.core.metrics import MetricsMiddleware, ServiceMetrics
from app.core.security import AuthMiddleware, NetworkGuardMiddleware, current_caller
from app.core.storage.base import Store, install_storage_error_handler
from app.core.tenants import KeyRing
from app.db.engine import (
    SessionFactory,
    install_db_error_handlers,
    make_engine,
    make_session_factory,
    run_migrations,
)
from app.docs_ui import install_docs
from app.services.datasets.dataset_stats import backfill_dataset_stats
from app.services.datasets.imports import ImportRoots
from app.services.datasets.parse_process import start_parser_server
from app.services.datasets.shard_migration import convert_npz_datasets
from app.services.jobs import queue_order
from app.services.jobs import state as job_service
from app.services.model_registry.artifacts import ModelCache, load_for_prediction
from app.services.model_registry.batch_predictions import TMP_PREFIX as BATCH_TMP_PREFIX
from app.training.runner import JobRunner
from app.version import VERSION

log = logging.getLogger("app")


def _prepare_dirs(settings: Settings) -> None:
    for d in (
        settings.data_dir,
        settings.datasets_dir,
        settings.models_dir,
        settings.tmp_dir,
        settings.uploads_dir,
    ):
        d.mkdir(parents=True, exist_ok=True)
    # Uploads interrupted by a crash leave parts behind; nothing else lives in tmp/.
    for pattern in ("upload-*.part", f"{BATCH_TMP_PREFIX}*.npy"):
        for stale in settings.tmp_dir.glob(pattern):
            stale.unlink(missing_ok=True)
    store = settings.store
    try:
        store.ensure()
        # Writes a crash interrupted (old ones only: on a shared store another host may be
        # writing one now).
        store.sweep_partial(older_than_s=3600)
    except Exception as exc:  # a store down at start: the service starts, /readyz says why
        log.warning("the store %r is not usable now: %s", store, exc)


def _lock_data_dir(settings: Settings) -> IO[str]:
    try:
        return lock_data_dir(settings.data_dir)
    except DataDirBusy as exc:
        log.error("not starting: %s", exc)
        raise


def _backfill_stats(factory: SessionFactory, store: Store) -> None:
    try:
        done = backfill_dataset_stats(factory, store)
    except Exception:  # the next start tries again; GET keeps saying pending meanwhile
        log.exception("computing the column statistics of older data sets failed")
        return
    if done:
        log.info("column statistics computed for %d older data set(s)", done)


@asynccontextmanager
async def _service(app: FastAPI, settings: Settings) -> AsyncIterator[None]:
    """The database, the worker pool and the background services, for the life of the app."""
    ImportRoots.of(settings)  # a malformed PGS_IMPORT_ROOTS stops the start, not each import
    _prepare_dirs(settings)
    await to_thread.run_sync(app.state.disk_reserve.fill)
    if settings.numba_cache_dir is not None:
        os.environ.setdefault("NUMBA_CACHE_DIR", str(settings.numba_cache_dir))
    engine = make_engine(settings.database_url, settings.sqlite_busy_timeout_s)
    await to_thread.run_sync(run_migrations, engine, settings.db_wait_s)
    factory = make_session_factory(engine)
    # Data sets stored before shards, converted before any job of this server can read them.
    await to_thread.run_sync(convert_npz_datasets, factory, settings.store, settings.shard_bytes)
    # Data sets stored before column statistics get them in the background: the service serves
    # meanwhile (GET shows their columns as pending; a job computes what it needs itself).
    threading.Thread(
        target=_backfill_stats, args=(factory, settings.store), name="stats-backfill", daemon=True
    ).start()
    runner = JobRunner(settings, functools.partial(queue_order.fair_order, factory))
    supervisor = PoolSupervisor(runner, factory, settings)
    job_ends = JobEnds(factory, JOB_ENDS_RECHECK_S, settings.max_long_polls_per_owner)
    runner.on_finished(job_ends.ended)
    sweeper = LeaseSweeper(runner, factory, settings)
    cache = ModelCache(settings.model_cache_bytes)
    batch_predictor = BatchPredictor(
        factory,
        settings,
        lambda model_id: cache.get_or_load(
            model_id, lambda: load_for_prediction(settings.store, factory, model_id)
        ),
    )
    app.state.engine = engine
    app.state.session_factory = factory
    app.state.runner = runner
    app.state.job_ends = job_ends
    app.state.model_cache = cache
    app.state.batch_predictor = batch_predictor
    upload_service = UploadService(factory, settings, app.state.disk_reserve)
    app.state.upload_service = upload_service
    # Import the solver now (Numba takes a moment) rather than in the first request.
    await to_thread.run_sync(__import__, "solver")
    await to_thread.run_sync(runner.start)
    supervisor.start()
    job_ends.start()
    await to_thread.run_sync(sweeper.start)  # first recovers what a previous server left
    await to_thread.run_sync(batch_predictor.start)
    upload_service.start()
    await to_thread.run_sync(start_parser_server)
    log.info(
        "PGS service ready: data dir %s, %s executor, %d worker(s)",
        settings.data_dir,
        runner.backend_name,
        runner.worker_count(),
    )
    try:
        yield
    finally:
        log.info("shutting down: stopping running jobs (they return to the queue)")
        # Sweeper first (it submits), supervisor last (it settles what the stop ends).
        await to_thread.run_sync(sweeper.stop)
        await to_thread.run_sync(upload_service.stop)
        await to_thread.run_sync(batch_predictor.stop)
        await to_thread.run_sync(runner.stop)
        await to_thread.run_sync(supervisor.stop)
        await to_thread.run_sync(job_ends.stop)
        engine.dispose()


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app; nothing starts until the lifespan runs (no work at import or build time)."""
    settings = settings or get_settings()
    metrics = ServiceMetrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        # Before anything touches the data dir or the jobs (app/core/dirlock.py says why).
        dir_lock = _lock_data_dir(settings) if settings.is_sqlite else None
        try:
            async with _service(app, settings):
                yield
        finally:
            if dir_lock is not None:
                dir_lock.close()

    app = FastAPI(
        title="PGS training and inference service",
        version=VERSION,
        description="Upload data sets, train p-norm linear models with the Primal Gradient "
        "Solver, follow time-to-accuracy, and predict. Errors are RFC 9457 problem+json.",
        lifespan=lifespan,
        # Served from the package instead (app/docs_ui): FastAPI's own pages load a CDN.
        docs_url=None,
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.metrics = metrics
    app.state.parse_limiter = CapacityLimiter(settings.max_concurrent_parses)
    app.state.model_import_limiter = CapacityLimiter(settings.max_concurrent_model_imports)

    def snapshot() -> dict[str, Any]:
        with app.state.session_factory() as s:
            counts = job_service.count_by_status(s)
        return {
            "jobs": counts,
            "in_flight": app.state.runner.in_flight(),
            "workers": app.state.runner.worker_count(),
            "cache_size": len(app.state.model_cache),
            "cache_bytes": app.state.model_cache.nbytes,
        }

    metrics.add_state_collector(snapshot)
    install_error_handlers(app)
    install_db_error_handlers(app)
    install_storage_error_handler(app)
    app.state.keyring = KeyRing(settings.api_keys.get_secret_value(), settings.api_keys_file)
    app.state.disk_reserve = DiskReserve(settings.data_dir, settings.disk_reserve_bytes)
    app.add_middleware(ReserveForDeletesMiddleware, reserve=app.state.disk_reserve)
    app.add_middleware(BodyLimitMiddleware, settings=settings)
    # Inside the key check (it needs the caller's owner), before any upload's body is read.
    app.add_middleware(UploadSlotsMiddleware, per_owner=settings.max_concurrent_uploads_per_owner)
    # Outside the body limits: a caller without a valid key is answered before its body is read.
    app.add_middleware(AuditMiddleware, factory=lambda: app.state.session_factory)
    app.add_middleware(AuthMiddleware, keyring=app.state.keyring)
    app.add_middleware(NetworkGuardMiddleware, settings=settings)
    app.add_middleware(MetricsMiddleware, metrics=metrics)
    # Outermost: everything after it sees the client's own address (PGS_TRUSTED_PROXIES).
    app.add_middleware(
        ProxiedClientMiddleware, proxies=settings.proxies, per_client=settings.max_connections_per_client
    )
    # Outside that: the answers of every layer inside (401s, 413s, 429s, problems) carry them too.
    app.add_middleware(SecurityHeadersMiddleware)
    # The key first: a caller without one learns nothing about the parameters.
    api = [Depends(current_caller), Depends(reject_unknown_query)]
    app.include_router(health.router, responses=problems(*REQUEST_GUARDS))
    # The import route before the data set routes: /v1/datasets/{dataset_id} must not take it.
    resources = [
        module.router
        for module in (
            uploads,
            datasets,
            jobs,
            models,
            batch_predictions,
            aliases,
            studies,
            plots,
            solvers,
            account,
        )
    ]
    resources.insert(0, uploads.import_router)
    for router in resources:
        app.include_router(router, dependencies=api, responses=problems(*API_GUARDS))
    install_openapi(app, [health.router, *resources])
    install_docs(app)
    install_console(app)
    return app
