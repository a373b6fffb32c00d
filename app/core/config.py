"""Service settings, read from the environment with the ``PGS_`` prefix."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.core.storage.base import Store
from app.core.storage.local import open_store

MIB = 1024 * 1024


class Settings(BaseSettings):
    """Everything the server and its worker processes need to know.

    The object is picklable: the worker entry point receives it as an argument instead of reading
    the environment again, so a pool on another machine would run with the server's settings.
    """

    model_config = SettingsConfigDict(env_prefix="PGS_", extra="ignore")

    data_dir: Path = Path("./var")
    # Empty means a SQLite file inside data_dir (filled in by the validator below). A PostgreSQL
    # URL (postgresql://, run with the psycopg driver) lets several API processes and workers on
    # several hosts share the job state; SQLite is for one host.
    database_url: str = ""
    # Where training runs: "local" (a process pool in the API process) or "dask://host:8786" (a
    # Dask distributed scheduler). Workers on other hosts share the store: a remote store_url,
    # or the data dir mounted at the same path.
    executor: str = "local"
    # Where data sets, models and batch results live (app/core/storage/): empty for the data dir,
    # or an fsspec URL such as s3://bucket/prefix, shared by hosts without a shared file system.
    # S3 credentials come from the usual AWS_* variables (or ~/.aws, an instance role);
    # s3_endpoint_url names an S3-compatible server (MinIO, moto), empty for AWS itself.
    store_url: str = ""
    s3_endpoint_url: str = ""
    # A remote store's local copies (what workers memory-map), least recently used out beyond
    # cache_bytes. Empty: <data_dir>/store-cache. Host-local: a worker takes these two from its
    # own environment when it has them (run_job), not from the API's.
    cache_dir: Path | None = None
    cache_bytes: int = Field(default=8192 * MIB, ge=0)
    workers: int = Field(default_factory=lambda: os.cpu_count() or 1, ge=1, le=256)
    # Comma-separated bearer tokens; empty means no authentication.
    api_keys: SecretStr = SecretStr("")
    allow_anonymous: bool = False
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    log_level: str = "info"

    # One upload (a multipart POST /v1/datasets or a resumable upload): the bytes go to disk as
    # they arrive, so this is a disk limit, not a memory one.
    max_upload_bytes: int = Field(default=64 * 1024 * MIB, ge=1)
    # Resumable uploads (/v1/uploads, the tus protocol): the uploads of one API key that are not
    # yet a data set reserve their full length against this quota; one not finished within
    # upload_expiry_s (from its creation) is deleted by the upload service.
    upload_quota_bytes: int = Field(default=128 * 1024 * MIB, ge=1)
    upload_expiry_s: float = Field(default=24 * 3600.0, gt=0)
    # Server-side imports (POST /v1/datasets/import): comma-separated directories and http(s)
    # URL prefixes the service may read data sets from; empty turns imports off.
    import_roots: str = ""
    # Guard against gzip bombs: the decompressed stream may not grow past this, nor past
    # max_compression_ratio times the compressed size (real data sets stay under 25:1; any gzip
    # may inflate to 16 MiB). Both are checked by inflating once before parsing.
    max_decompressed_bytes: int = Field(default=2048 * MIB, ge=1)
    max_compression_ratio: float = Field(default=100.0, ge=1)
    # An upload is parsed in a child process with these limits: the memory it may allocate
    # beyond the parser's own (an address-space limit) and the wall-clock time (the CPU time is
    # capped a little above it); at most max_concurrent_parses run at once, further uploads wait.
    # The parse holds a block of lines and a shard, whatever the file's size: the memory limit
    # is a guard against a pathological single line, not a bound on the data.
    parse_memory_bytes: int = Field(default=1024 * MIB, ge=16 * MIB)
    parse_timeout_s: float = Field(default=300.0, gt=0)
    max_concurrent_parses: int = Field(default=2, ge=1)
    # Data sets are stored as CSR shards cut at whole rows once their arrays reach shard_bytes
    # (app/services/datasets/shards.py): what a parse holds while it writes and a worker maps at a time.
    shard_bytes: int = Field(default=64 * MIB, ge=1024)
    # Disk quotas of the store: what one data set may take (its shards: 12 bytes per non-zero,
    # 8 per row, plus its labels) and what all data sets together may take (0: no quota). An
    # upload past either is refused (413 and 507) and leaves nothing stored.
    max_dataset_bytes: int = Field(default=64 * 1024 * MIB, ge=1)
    store_quota_bytes: int = Field(default=0, ge=0)
    # Memory a training worker may use for a job's data. Streaming solvers read one shard at a
    # time and stay well under it; the others (the registry's streams=False) need the whole CSR
    # matrix, and a job whose data set's CSR is larger than this is refused (422) at submission.
    worker_memory_bytes: int = Field(default=4096 * MIB, ge=1)
    # CSV string labels: the longest label (distinct labels are capped at 1000 classes).
    max_label_chars: int = Field(default=256, ge=1)
    max_predict_bytes: int = Field(default=64 * MIB, ge=1)
    # Columns of a data set (its largest feature index): a model holds dense weight vectors.
    max_features: int = Field(default=2**24, ge=1)
    # Rows in one prediction request.
    max_predict_rows: int = Field(default=100_000, ge=1)
    # JSON bodies of every other route (uploads and predictions have the limits above), and how
    # deeply they may nest.
    max_body_bytes: int = Field(default=1 * MIB, ge=1024)
    max_json_depth: int = Field(default=32, ge=4)
    # Slow clients: a request's headers must be complete this long after the connection opened
    # (or the previous response ended); a body may pause this long between two pieces, and take
    # this long in all; at most max_connections connections are served (more get a 503).
    header_timeout_s: float = Field(default=10.0, gt=0)
    body_idle_timeout_s: float = Field(default=30.0, gt=0)
    body_timeout_s: float = Field(default=900.0, gt=0)
    max_connections: int = Field(default=1000, ge=1)
    # Without API keys the server answers loopback connections only, and only requests whose Host
    # is the server's own address, localhost, or one of these names (comma-separated).
    allowed_hosts: str = ""
    # Who may read /metrics: "public" (anyone who reaches the port), "key" (like /v1: a bearer
    # key when PGS_API_KEYS is set) or "off" (404).
    metrics_access: Literal["public", "key", "off"] = "key"
    # Models held in memory for predictions, by the bytes of their weights (least recently used
    # first out); a model larger than this alone is served from disk on each request.
    model_cache_bytes: int = Field(default=1024 * MIB, ge=0)
    # A job is refused (422, before it is queued) when its model could grow past this: the dense
    # worst case, 8 bytes per weight, n_features x n_outputs (one output per class beyond two),
    # plus the support vectors of a kernel model. The worker holds that much while it trains.
    # A model import (POST /v1/models) is held to it too: its body, its arrays (as their headers
    # declare them, before any is built), its parsed JSON and its dense weights each stay under it.
    max_model_bytes: int = Field(default=256 * MIB, ge=1024)
    # Model imports that read and check their file at once; further ones wait before reading
    # their body, so at most this many bodies, and the models built from them, are in memory.
    max_concurrent_model_imports: int = Field(default=2, ge=1)
    # Wall-clock time a job may run (data loading and evaluation included) when it gives no
    # time_budget_s; a job's own time_budget_s is its wall-clock limit too.
    max_job_seconds: float = Field(default=3600.0, gt=0)
    # Trace points stored per job; beyond it they are thinned as they come (the first, the last
    # and each target's first crossing are always kept).
    max_trace_points: int = Field(default=10_000, ge=256)
    # Queued jobs: at most this many per API key (or for all anonymous callers together) and on
    # the whole server; beyond either a new job is refused with 429 and Retry-After.
    max_queued_jobs_per_key: int = Field(default=100, ge=1)
    max_queued_jobs: int = Field(default=1000, ge=1)
    # Threads of each API process that run batch predictions (app/background/batch_predictor.py).
    batch_predict_threads: int = Field(default=1, ge=1, le=64)

    sqlite_busy_timeout_s: float = Field(default=15.0, gt=0)
    # How often a worker writes progress and looks for a cancel request (plus up to one solver
    # chunk, ~0.2 s): together they bound the cancel latency.
    progress_interval_s: float = Field(default=0.25, gt=0)
    # A job whose worker died is run again until it has been started this many times.
    max_attempts: int = Field(default=2, ge=1)
    # A running job's worker refreshes the job's heartbeat this often; a job whose heartbeat is
    # older than lease_s is taken as lost (its worker died or hangs) and re-queued or failed. A
    # queued job that no live API process has refreshed for lease_s is dispatched again.
    heartbeat_s: float = Field(default=5.0, gt=0)
    lease_s: float = Field(default=30.0, gt=0)
    # How often each API process looks for lost and undispatched jobs.
    sweep_interval_s: float = Field(default=2.0, gt=0)
    # At start-up, wait this long for the database to answer; workers retry their final write
    # this long through a database outage.
    db_wait_s: float = Field(default=60.0, ge=0)
    # Start one worker (process and imports, no compilation) when the app starts instead of at
    # the first job.
    prestart_workers: bool = True
    numba_cache_dir: Path | None = None

    @model_validator(mode="after")
    def _resolve_paths(self) -> Settings:
        # Absolute paths, so worker processes and a changed cwd see the same files.
        self.data_dir = self.data_dir.expanduser().resolve()
        if not self.database_url:
            self.database_url = f"sqlite:///{self.data_dir / 'pgs.db'}"
        self.database_url = normalize_database_url(self.database_url)
        if self.executor != "local" and not self.executor.startswith(("dask://", "tcp://")):
            raise ValueError(f"PGS_EXECUTOR must be 'local' or 'dask://host:port', got {self.executor!r}")
        if self.lease_s < 2 * self.heartbeat_s:
            raise ValueError("PGS_LEASE_S must be at least twice PGS_HEARTBEAT_S")
        if self.cache_dir is None:
            self.cache_dir = self.data_dir / "store-cache"
        self.cache_dir = self.cache_dir.expanduser().resolve()
        if self.numba_cache_dir is None:
            env = os.environ.get("NUMBA_CACHE_DIR")
            self.numba_cache_dir = Path(env) if env else self.data_dir / "numba-cache"
        return self

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")

    @property
    def api_key_set(self) -> frozenset[str]:
        raw = self.api_keys.get_secret_value()
        return frozenset(k.strip() for k in raw.split(",") if k.strip())

    @property
    def allowed_host_set(self) -> frozenset[str]:
        return frozenset(h.strip().lower() for h in self.allowed_hosts.split(",") if h.strip())

    @property
    def store(self) -> Store:
        """Where data sets and models live (shared by every host in a cluster)."""
        assert self.cache_dir is not None
        options = {"endpoint_url": self.s3_endpoint_url} if self.s3_endpoint_url else {}
        return open_store(self.store_url, self.data_dir, self.cache_dir, self.cache_bytes, options)

    def on_this_host(self) -> Settings:
        """These settings (the API's, sent to a worker) with this host's own PGS_CACHE_DIR and
        PGS_CACHE_BYTES where its environment sets them: a Dask worker on another machine keeps
        its store cache on its own disk."""
        local = {
            name: os.environ[f"PGS_{name.upper()}"]
            for name in ("cache_dir", "cache_bytes")
            if f"PGS_{name.upper()}" in os.environ
        }
        if not local:
            return self
        return self.model_validate({**self.model_dump(), **local})

    @property
    def datasets_dir(self) -> Path:
        return self.data_dir / "datasets"

    @property
    def models_dir(self) -> Path:
        return self.data_dir / "models"

    @property
    def tmp_dir(self) -> Path:
        return self.data_dir / "tmp"

    @property
    def uploads_dir(self) -> Path:
        """The bytes of resumable uploads and URL imports until they become data sets."""
        return self.data_dir / "uploads"


def normalize_database_url(url: str) -> str:
    """``postgresql://`` and ``postgres://`` mean the psycopg (3) driver, the one installed."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


@lru_cache
def get_settings() -> Settings:
    """The process-wide settings; tests build their own ``Settings`` and pass it to create_app."""
    return Settings()
