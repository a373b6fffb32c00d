"""Service settings, read from the environment with the ``PGS_`` prefix."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.core.clients import TrustedProxies, parse_networks
from app.core.storage.base import Store
from app.core.storage.local import open_store
from app.core.tenants import parse_entries

MIB = 1024 * 1024


class Settings(BaseSettings):
    """Everything the server and its worker processes need to know.

    The object is picklable: the worker entry point receives it as an argument instead of reading
    the environment again, so a pool on another machine would run with the server's settings.
    """

    model_config = SettingsConfigDict(env_prefix="PGS_", extra="ignore")

    # Each field's description is its line in docs/reference/settings.md (python -m
    # tools.reference writes it): what the setting does, for whoever runs the service.

    data_dir: Path = Field(
        default=Path("./var"),
        description="The service's files: data sets (`datasets/<uuid>/`, in shards), models "
        "(`models/*.npz` + `.json`) and batch prediction results (`predictions/*.npy`) when "
        "`PGS_STORE_URL` is empty, the bytes of unfinished uploads (`uploads/`), and the SQLite "
        "file `pgs.db`.",
    )
    database_url: str = Field(
        default="",
        description="The job state: SQLite (WAL mode, one host) or "
        "`postgresql://user:pass@host:5432/db` (psycopg 3), which several API processes and "
        "workers on several hosts share; the schema comes from alembic migrations at start-up. "
        "Empty: `sqlite:///<data dir>/pgs.db`.",
    )
    executor: str = Field(
        default="local",
        description="Where training runs: `local`, a process pool inside the API process, or "
        "`dask://host:8786`, a Dask scheduler (its workers share the store: a remote "
        "`PGS_STORE_URL`, or the data dir mounted at the same path).",
    )
    store_url: str = Field(
        default="",
        description="Where data sets, models and batch results live: empty (or `file:///path`) "
        "for a directory, the data dir by default, or an fsspec URL such as `s3://bucket/prefix`, "
        "which hosts share without a shared file system; the bucket is created at the first "
        "start where the credentials allow it.",
    )
    s3_endpoint_url: str = Field(
        default="",
        description="An S3-compatible server (MinIO, moto, Ceph): `http://host:9000`; empty: AWS. "
        "Credentials come from the usual `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` (or "
        '`~/.aws`, an instance role) on every host. Calls retry in botocore\'s "standard" mode '
        "(3 retries, jittered backoff: an unreachable endpoint fails a call in about 1.5 s) "
        "unless `AWS_RETRY_MODE` names another.",
    )
    cache_dir: Path | None = Field(
        default=None,
        description="A remote store's local copies (what a worker memory-maps), least recently "
        "used out beyond `PGS_CACHE_BYTES`. Unset: `<data dir>/store-cache`. A Dask worker "
        "takes this and `PGS_CACHE_BYTES` from its own environment when it sets them.",
    )
    cache_bytes: int = Field(
        default=8192 * MIB,
        ge=0,
        description="The bound on `PGS_CACHE_DIR`: beyond it, the least recently used copies go.",
    )
    workers: int = Field(
        default_factory=lambda: os.cpu_count() or 1,
        ge=1,
        le=256,
        description="Worker processes of the local pool; by default, the CPU count.",
    )
    api_keys: SecretStr = Field(
        default=SecretStr(""),
        description="Comma-separated bearer keys, each `owner:role:key` (role `admin`, `member` or "
        "`reader`; docs/how-to/auth.md) or a bare key (owner `default`, role `admin`). With keys, "
        "`/v1/*` needs `Authorization: Bearer <key>` (401 without one, 403 for an unknown one), "
        "checked before the request's body is read. Empty, and no `PGS_API_KEYS_FILE`: no "
        "authentication, and the server answers loopback callers only (`PGS_ALLOW_ANONYMOUS`, "
        "`PGS_ALLOWED_HOSTS`).",
    )
    api_keys_file: Path | None = Field(
        default=None,
        description="A file of keys in the form of `PGS_API_KEYS`, one per line (`#` starts a "
        "comment), read again within a second of a change: keys rotate without a restart. A "
        "file that turns malformed or unreadable keeps the last good keys (the log says why).",
    )
    allow_anonymous: bool = Field(
        default=False,
        description="Without keys, the app answers connections to a loopback address only (403 "
        "otherwise, however it is started: `python -m app` also refuses to bind); true lifts that.",
    )
    host: str = Field(default="127.0.0.1", description="The address `python -m app` listens on.")
    port: int = Field(default=8000, ge=0, le=65535, description="The port `python -m app` listens on.")
    log_level: str = Field(default="info", description="The log level of the server and its workers.")

    # -- limits: docs/reference/limits.md says what a caller sees when one is hit --
    max_upload_bytes: int = Field(
        default=64 * 1024 * MIB,
        ge=1,
        description="One upload: a multipart `POST /v1/datasets`, a resumable upload (its "
        "`Upload-Length`) or a URL import. The bytes go to disk as they arrive: a disk limit, not "
        "a memory one.",
    )
    upload_quota_bytes: int = Field(
        default=128 * 1024 * MIB,
        ge=1,
        description="What the unfinished resumable uploads (and URL imports) of one owner "
        "reserve together, by their full lengths, until each is a data set or deleted.",
    )
    upload_expiry_s: float = Field(
        default=24 * 3600.0,
        gt=0,
        description="A resumable upload not finished this long after its creation answers 410, "
        "and is then deleted (bytes and row).",
    )
    import_roots: str = Field(
        default="",
        description="Comma-separated directories and `http(s)` URL roots that "
        "`POST /v1/datasets/import` may read (how a URL matches a root: docs/how-to/"
        "large-uploads.md); empty turns imports off. A malformed root stops the start.",
    )
    import_deadline_s: float = Field(
        default=6 * 3600.0,
        gt=0,
        description="A URL import's whole download, connecting included; beyond, the import fails "
        "(504) and keeps no byte. Six hours take the largest import (`PGS_MAX_UPLOAD_BYTES`, "
        "64 GiB) at 3.2 MB/s (25 Mbit/s), a quarter of a modest 100 Mbit/s link; a source that "
        "trickles is stopped by the rate below long before.",
    )
    import_min_bytes_per_s: int = Field(
        default=64 * 1024,
        ge=1,
        description="The slowest a URL import's download may go, averaged over each window of "
        "`PGS_IMPORT_RATE_WINDOW_S`; slower, it fails (504). 64 KiB/s (0.5 Mbit/s) is far below "
        "any link a data set is fetched over, and far above a source that sends a byte now and "
        "then to hold a download.",
    )
    import_rate_window_s: float = Field(
        default=60.0,
        gt=0,
        description="The windows the download rate is averaged over, from the start: the first is "
        "the grace for connecting and the first bytes. A minute rides out a stall of a few "
        "seconds yet frees a held download within two.",
    )
    max_concurrent_uploads_per_owner: int = Field(
        default=8,
        ge=1,
        description="Upload bodies of one owner received at once (`POST /v1/datasets` and tus "
        "`PATCH /v1/uploads/{id}`); more get a 429 with `Retry-After` before their body is read. "
        "Each holds a connection and a file being written; 8 lets a browser or a tus client "
        "upload several files side by side.",
    )
    max_concurrent_downloads_per_owner: int = Field(
        default=2,
        ge=1,
        description="URL imports of one owner downloading at once (a download holds no parse "
        "slot); more wait for one of them to end. Two keep a link busy while the owner's next "
        "import waits its turn; other owners have their own.",
    )
    max_decompressed_bytes: int = Field(
        default=2048 * MIB,
        ge=1,
        description="What a gzip upload may inflate to; it is inflated once, without parsing, "
        "before anything else.",
    )
    max_compression_ratio: float = Field(
        default=100.0,
        ge=1,
        description="How many times its size a gzip upload may inflate to (any gzip may inflate "
        "to 16 MiB): real data sets stay under 25:1, a gzip bomb does not.",
    )
    parse_memory_bytes: int = Field(
        default=1024 * MIB,
        ge=16 * MIB,
        description="What the child process parsing an upload may allocate beyond what it maps "
        "(`RLIMIT_AS`, Linux). The parse holds a block of lines and a shard whatever the file's "
        "size, so only a pathological single line comes near it.",
    )
    parse_timeout_s: float = Field(
        default=300.0,
        gt=0,
        description="How long an upload's parse may take; its child process is then killed (its "
        "CPU time is capped a little above).",
    )
    parse_threads: int = Field(
        default=2,
        ge=1,
        le=64,
        description="Threads that parse one svmlight upload, each a block of about 4 MiB of lines "
        "at a time (more blocks of text in memory, one per thread); the rows are stored in file "
        "order whatever the count.",
    )
    max_concurrent_parses: int = Field(
        default=2,
        ge=1,
        description="Uploads parsed at once per API process; further ones wait for a slot (their "
        "files are already on disk).",
    )
    shard_bytes: int = Field(
        default=64 * MIB,
        ge=1024,
        description="Data sets are stored as CSR shards cut at whole rows once their arrays reach "
        "this size (12 bytes per non-zero, 8 per row, plus the labels and text): what a parse "
        "holds while it writes, and what a worker maps at a time.",
    )
    max_dataset_bytes: int = Field(
        default=64 * 1024 * MIB,
        ge=1,
        description="What one data set may take in the store (its shards), checked as they are written.",
    )
    store_quota_bytes: int = Field(
        default=0,
        ge=0,
        description="What all data sets together may take in the store (their shards; an "
        "unconverted `.npz` by its upload's size); 0: no quota.",
    )
    min_free_bytes: int = Field(
        default=1024 * MIB,
        ge=0,
        description="`/readyz` answers 503 while the data dir's disk (the database, unfinished "
        "uploads, and the store when it is local) has less free space than this, so a load "
        "balancer stops sending writes that would fail with 507; 0 turns the check off. An "
        "object store's space is not checked.",
    )
    disk_reserve_bytes: int = Field(
        default=64 * MIB,
        ge=0,
        description="Disk space the service holds back in the data dir (a preallocated file, "
        "`disk-reserve`) so that deletes still work when the disk is full: a DELETE that finds "
        "less free space than this releases the reserve first, which gives the database room to "
        "commit the delete; it is put back once the disk has room again. 0: no reserve.",
    )
    worker_memory_bytes: int = Field(
        default=4096 * MIB,
        ge=1,
        description="What a training worker may hold for a job's data, measured as the CSR bytes "
        "of its data sets. A job whose data does not fit trains from the shards when its solver "
        "streams, and is refused (422) before it is queued when it does not. On a Dask cluster, "
        "the API process's value is sent with each job.",
    )
    max_label_chars: int = Field(default=256, ge=1, description="The longest CSV string label.")
    max_predict_bytes: int = Field(
        default=64 * MIB, ge=1, description="The largest body of `POST /v1/models/{id}/predict`."
    )
    max_features: int = Field(
        default=2**24,
        ge=1,
        description="The most columns a data set may have (its largest feature index): a model "
        "holds dense weight vectors.",
    )
    max_predict_rows: int = Field(
        default=100_000,
        ge=1,
        description="The most rows in one `POST /v1/models/{id}/predict`, counted before parsing.",
    )
    max_body_bytes: int = Field(
        default=1 * MIB,
        ge=1024,
        description="The largest JSON body of every other request (jobs, studies, ...).",
    )
    max_json_depth: int = Field(
        default=32,
        ge=4,
        description="How deeply the arrays and objects of a JSON body may nest (strings do not count).",
    )
    header_timeout_s: float = Field(
        default=10.0,
        gt=0,
        description="A request's headers must be complete this long after the connection opened "
        "or the previous response ended (`python -m app` sees to it; with the `uvicorn` command "
        "pass `--http app.core.server:ClientLimitsProtocol`).",
    )
    body_idle_timeout_s: float = Field(
        default=30.0, gt=0, description="How long a request body may pause between two pieces."
    )
    body_timeout_s: float = Field(default=900.0, gt=0, description="How long a whole request body may take.")
    min_body_bytes_per_s: float = Field(
        default=1024.0,
        ge=0,
        description="The slowest average a request body may arrive at, after `PGS_BODY_RATE_GRACE_S` "
        "(408 and the connection closed; 0: no minimum). Only the time spent waiting for the client "
        "counts. 1 KiB/s is a small fraction of what the slowest mobile links still upload (GPRS "
        "some 3 KB/s, EDGE 10-30 KB/s), yet makes a connection held for a minute cost 60 KB.",
    )
    body_rate_grace_s: float = Field(
        default=10.0,
        gt=0,
        description="How far a request body may fall behind `PGS_MIN_BODY_BYTES_PER_S`: its first "
        "seconds (a slow link's start) and, once ahead, a stall.",
    )
    max_connections: int = Field(
        default=1000,
        ge=1,
        description="Open connections served at once, by all clients together; requests past them "
        "get a 503 (uvicorn's `limit_concurrency`). A ceiling for the process's memory and file "
        "descriptors: one client is held well below it by `PGS_MAX_CONNECTIONS_PER_CLIENT`.",
    )
    max_connections_per_client: int = Field(
        default=64,
        ge=1,
        description="Open connections of one client address (an IPv6 client: its /64), and "
        "requests in flight of one client behind `PGS_TRUSTED_PROXIES`; past them a 429 with "
        "`Retry-After`. A browser opens up to 6 connections to a host and a client library's pool "
        "some 10-20, so 64 leaves room for several users behind one NAT, while it takes 16 "
        "addresses to fill the default `PGS_MAX_CONNECTIONS`. Connections are counted by "
        "`python -m app` (with the `uvicorn` command pass `--http "
        "app.core.server:ClientLimitsProtocol`).",
    )
    trusted_proxies: str = Field(
        default="",
        description="Comma-separated addresses or CIDR blocks of the reverse proxies in front of the "
        "server. Only a request from one of them is taken to come from the right-most address of "
        "its `X-Forwarded-For` that is not a trusted proxy; from any other peer the header is "
        "ignored. Empty: every client is the connection's peer.",
    )
    allowed_hosts: str = Field(
        default="",
        description="Without keys, a request's `Host` must be the server's own address, "
        "`localhost`, `127.0.0.1`, `::1` or one of these comma-separated names: a DNS-rebinding "
        "page reaches 127.0.0.1 under its own name.",
    )
    metrics_access: Literal["public", "key", "off"] = Field(
        default="key",
        description="Who may read `/metrics`: `key` (like `/v1`: a key when keys are set), "
        "`public` (anyone who reaches the port; it shows per-route 401/403 counts and the queue "
        "depth) or `off` (404).",
    )
    model_cache_bytes: int = Field(
        default=1024 * MIB,
        ge=0,
        description="Models held in memory for predictions, by the bytes of their weights (least "
        "recently used out first); a model larger than this alone is loaded for each prediction "
        "and not kept.",
    )
    max_model_bytes: int = Field(
        default=256 * MIB,
        ge=1024,
        description="A job is refused (422, before it is queued) when its model could grow past "
        "this: the dense worst case, 8 bytes x (n_features + 1) x outputs (one output for two "
        "classes or regression, one per class beyond), plus a kernel model's support vectors. The "
        "worker allocates that much while it trains. A model import (`POST /v1/models`) is held "
        "to it too: its body, its arrays (as their headers declare them, before any is built), its "
        "parsed JSON and its dense weights each stay under it.",
    )
    max_concurrent_model_imports: int = Field(
        default=2,
        ge=1,
        description="Model imports that read and check their file at once; further ones wait "
        "before reading their body, so at most this many bodies, and the models built from them, "
        "are in memory.",
    )
    max_job_seconds: float = Field(
        default=3600.0,
        gt=0,
        description="The wall-clock time (data loading and evaluation included) a job without "
        "`time_budget_s` may run; a job's own `time_budget_s` is its wall-clock limit instead.",
    )
    max_trace_points: int = Field(
        default=10_000,
        ge=256,
        description="Trace points stored per job; beyond it they are thinned as they come (the "
        "first, the last and each target's first crossing are always kept).",
    )
    max_queued_jobs_per_owner: int = Field(
        default=100,
        ge=1,
        description="Queued jobs per owner (a study counts all its jobs); beyond, a new job is "
        "refused with 429 and `Retry-After`, and one that could never fit with 422.",
    )
    max_queued_jobs: int = Field(
        default=1000, ge=1, description="Queued jobs of every caller together; beyond, the same 429."
    )
    max_long_polls_per_owner: int = Field(
        default=100,
        ge=0,
        description="Long polls (`GET /v1/jobs/{id}?wait=`) of one owner that may wait at once; "
        "one more is answered at once, with the job as it is and `Retry-After`. A waiting poll "
        "holds a connection (of `PGS_MAX_CONNECTIONS`) but no thread or database connection.",
    )
    batch_predict_threads: int = Field(
        default=1,
        ge=1,
        le=64,
        description="Threads of each API process that run batch predictions.",
    )

    sqlite_busy_timeout_s: float = Field(
        default=15.0, gt=0, description="How long a SQLite write waits for the lock."
    )
    progress_interval_s: float = Field(
        default=0.25,
        gt=0,
        description="How often a worker writes progress and looks for a cancel request (plus up to "
        "one solver chunk, about 0.2 s: together they bound the cancel latency).",
    )
    max_attempts: int = Field(
        default=2,
        ge=1,
        description="A job whose worker died is run again until it has been started this many "
        "times, then failed with the reason.",
    )
    heartbeat_s: float = Field(
        default=5.0, gt=0, description="How often a running job's worker refreshes its heartbeat."
    )
    lease_s: float = Field(
        default=30.0,
        gt=0,
        description="A running job without a heartbeat for this long is lost (its worker died or "
        "hangs: re-queued or failed), and a queued job no API process refreshed for this long is "
        "dispatched again; at least twice `PGS_HEARTBEAT_S`.",
    )
    sweep_interval_s: float = Field(
        default=2.0,
        gt=0,
        description="How often each API process looks for lost and undispatched jobs.",
    )
    db_wait_s: float = Field(
        default=60.0,
        ge=0,
        description="How long the API waits for the database at start-up, and the workers retry "
        "their final write through an outage.",
    )
    prestart_workers: bool = Field(
        default=True,
        description="Start a worker process with the server (no compilation: a job loads or "
        "compiles its own kernels); `/readyz` waits for it.",
    )
    numba_cache_dir: Path | None = Field(
        default=None,
        description="Where the compiled kernels are cached. Unset: `$NUMBA_CACHE_DIR`, else "
        "`<data dir>/numba-cache`.",
    )

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
        parse_networks(self.trusted_proxies)  # a malformed entry stops the start, named
        # A malformed key entry stops the start, naming the entry (never the key).
        parse_entries(self.api_keys.get_secret_value(), ",", "PGS_API_KEYS")
        if self.api_keys_file is not None:
            self.api_keys_file = self.api_keys_file.expanduser().resolve()
        if self.numba_cache_dir is None:
            env = os.environ.get("NUMBA_CACHE_DIR")
            self.numba_cache_dir = Path(env) if env else self.data_dir / "numba-cache"
        return self

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")

    @property
    def auth_enabled(self) -> bool:
        """Whether callers must present an API key."""
        return bool(self.api_keys.get_secret_value().strip()) or self.api_keys_file is not None

    @property
    def allowed_host_set(self) -> frozenset[str]:
        return frozenset(h.strip().lower() for h in self.allowed_hosts.split(",") if h.strip())

    @property
    def proxies(self) -> TrustedProxies:
        return TrustedProxies(parse_networks(self.trusted_proxies))

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
