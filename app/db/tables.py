"""SQLAlchemy 2.0 ORM models: the database is the source of truth for metadata and job state."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    TypeDecorator,
    text,
    true,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from app.core.tenants import DEFAULT_OWNER
from app.services.jobs.progress import job_progress


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class UTCDateTime(TypeDecorator[dt.datetime]):
    """Stores naive UTC (SQLite has no time zones) and hands back aware UTC datetimes."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: dt.datetime | None, dialect: Dialect) -> dt.datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetimes are ambiguous; pass an aware UTC datetime")
        return value.astimezone(dt.UTC).replace(tzinfo=None)

    def process_result_value(self, value: Any, dialect: Dialect) -> dt.datetime | None:
        return None if value is None else value.replace(tzinfo=dt.UTC)


class Base(DeclarativeBase):
    pass


class JobStatus:
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"
    ALL = (QUEUED, RUNNING, SUCCEEDED, FAILED, CANCELLED)
    ACTIVE = (QUEUED, RUNNING)
    TERMINAL = (SUCCEEDED, FAILED, CANCELLED)


class Dataset(Base):
    __tablename__ = "datasets"
    # AUTOINCREMENT: ids of deleted rows are never reused, so a stale id can never name new data.
    __table_args__ = (Index("ix_datasets_owner", "owner"), {"sqlite_autoincrement": True})

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # The owner it belongs to (app/core/tenants.py; migration 0012).
    owner: Mapped[str] = mapped_column(String(64), default=DEFAULT_OWNER, server_default=DEFAULT_OWNER)
    name: Mapped[str] = mapped_column(String(255))
    format: Mapped[str] = mapped_column(String(16))
    compressed: Mapped[bool] = mapped_column(Boolean, default=False)
    # The data set's store key: the prefix of its shards' keys (app/services/datasets/shards.py), or the
    # key of the single .npz of a data set stored before shards and not converted yet.
    file_name: Mapped[str] = mapped_column(String(255))
    n_samples: Mapped[int] = mapped_column(Integer)
    n_features: Mapped[int] = mapped_column(Integer)
    # 64-bit on PostgreSQL (migration 0010); SQLite's INTEGER is 64-bit already.
    nnz: Mapped[int] = mapped_column(Integer().with_variant(BigInteger(), "postgresql"))
    task: Mapped[str] = mapped_column(String(16))
    classes: Mapped[list[Any] | None] = mapped_column(JSON, nullable=True)
    # "numeric" or "string": how labels are stored (float64 or fixed-width unicode arrays).
    label_kind: Mapped[str] = mapped_column(String(16))
    # 1 when svmlight feature indices in the file were 1-based (the LIBSVM convention), else 0.
    index_base: Mapped[int] = mapped_column(Integer, default=1)
    sha256: Mapped[str] = mapped_column(String(64))
    # 64-bit (migration 0011): uploads pass 2 GiB. SQLite's INTEGER is 64-bit already.
    size_bytes: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"))
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    # A CSV file's header (migration 0009): its feature columns' and its label column's names;
    # null without a header (svmlight, or a CSV whose first row is data).
    feature_names: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)
    label_name: Mapped[str | None] = mapped_column(String(255), nullable=True)
    # Feature columns that hold text (CSV), stored beside the numeric CSR; one-hot encoded by a
    # job's preprocessing.
    text_columns: Mapped[list[int] | None] = mapped_column(JSON, nullable=True)
    # Empty numeric CSV cells, stored as NaN: a job must impute them.
    n_missing: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # The cells a CSV upload read as missing besides the empty one (migration 0022): its models
    # read a CSV prediction body with them. Null: another format, or stored before 0022.
    na_values: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)
    # Migration 0007: labels, and whether the task was "declared" by the upload (or a PATCH) or
    # "guessed" from the labels.
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    tags: Mapped[list[str]] = mapped_column(JSON, default=list, server_default=text("'[]'"))
    task_source: Mapped[str] = mapped_column(String(16), default="guessed", server_default="guessed")
    # Migration 0010: bytes its shards take in the store (PGS_STORE_QUOTA_BYTES counts them);
    # NULL until an old .npz data set is converted.
    stored_bytes: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    # Migration 0019: false for rows without labels (uploaded to be predicted in a batch). Their
    # stored labels are zeros and their task "regression", never read: the answer shows no task,
    # and jobs refuse the data set.
    labelled: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())


class UploadState:
    RECEIVING = "receiving"  # a resumable upload taking bytes
    PARSING = "parsing"  # finished (or imported): being fetched, parsed and stored
    DONE = "done"  # dataset_id is the data set
    FAILED = "failed"  # error says why; a failed finish can be retried
    # States whose bytes are on disk and count against the owner's quota.
    HOLDING = (RECEIVING, PARSING, FAILED)


class Upload(Base):
    """A resumable upload (the tus protocol) or a server-side import, until it is a data set.

    The bytes received are the file under the uploads dir: its size is the upload's offset, so
    whatever a dropped connection delivered counts and nothing else needs writing per chunk.
    """

    __tablename__ = "uploads"
    __table_args__ = (
        Index("ix_uploads_owner_state", "owner", "state"),
        Index("ix_uploads_expires_at", "expires_at"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    # The owner (app/core/tenants.py) whose quota the upload counts against.
    owner: Mapped[str] = mapped_column(String(64))
    # Declared by the client (tus Upload-Length); for a URL import, the cap until it is fetched.
    length: Mapped[int] = mapped_column(BigInteger)
    filename: Mapped[str] = mapped_column(String(255), default="")
    # The tus Upload-Metadata header as sent, answered back on HEAD.
    metadata_header: Mapped[str] = mapped_column(Text, default="")
    # An import's path or URL; None for an upload.
    source: Mapped[str | None] = mapped_column(Text, nullable=True)
    state: Mapped[str] = mapped_column(String(16), default=UploadState.RECEIVING)
    # The finish or import request's data set options (the upload form's fields).
    options: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    dataset_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # {"status": ..., "detail": ...} of a failed parse, answered as the upload's problem.
    error: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[dt.datetime] = mapped_column(UTCDateTime)
    # Refreshed while a process parses it: a parse whose process died is taken over.
    heartbeat_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)


class LearnedFacts:
    """What a fit learned, as its run recorded it in the row's ``metrics`` (a job's and its
    model's alike): the named top weights and the warnings for a degenerate model."""

    metrics: Any

    @property
    def coefficients(self) -> dict[str, Any] | None:
        """The named top weights (schemas.CoefficientSummary; None for older or imported models)."""
        return (self.metrics or {}).get("coefficients")

    @property
    def warnings(self) -> list[dict[str, str]] | None:
        """Warnings for a degenerate model found at the end of its fit (schemas.FitWarning)."""
        return (self.metrics or {}).get("warnings")


class Job(LearnedFacts, Base):
    __tablename__ = "jobs"
    __table_args__ = (
        Index("ix_jobs_status", "status"),
        Index("ix_jobs_owner_status", "owner", "status"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    status: Mapped[str] = mapped_column(String(16), default=JobStatus.QUEUED)
    solver: Mapped[str] = mapped_column(String(32))
    task: Mapped[str] = mapped_column(String(16))
    dataset_id: Mapped[int | None] = mapped_column(
        ForeignKey("datasets.id", ondelete="SET NULL"), nullable=True
    )
    test_dataset_id: Mapped[int | None] = mapped_column(
        ForeignKey("datasets.id", ondelete="SET NULL"), nullable=True
    )
    test_fraction: Mapped[float | None] = mapped_column(Float, nullable=True)
    split_seed: Mapped[int] = mapped_column(Integer, default=0)
    params: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    targets: Mapped[list[float]] = mapped_column(JSON, default=list)
    time_budget_s: Mapped[float | None] = mapped_column(Float, nullable=True)
    # The resolved preprocessing (app/services/jobs/preprocessing.py); null: raw features (migration 0009).
    preprocessing: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)

    # Studies (migration 0002): a job of a time-to-accuracy study trains on a seeded subsample of
    # train_size rows of its training part (drawn with subsample_seed), and with select_sigma its
    # worker first picks sigma on a validation split of those rows. All null for a plain job.
    # No ON DELETE action: SQLite adds it in place only inline, which its reflection cannot read.
    study_id: Mapped[int | None] = mapped_column(ForeignKey("studies.id"), nullable=True, index=True)
    study_run: Mapped[int | None] = mapped_column(Integer, nullable=True)
    study_repeat: Mapped[int | None] = mapped_column(Integer, nullable=True)
    train_size: Mapped[int | None] = mapped_column(Integer, nullable=True)
    subsample_seed: Mapped[int | None] = mapped_column(Integer, nullable=True)
    select_sigma: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)

    # How many times a worker has claimed the job; also the fencing token of the current run:
    # every worker write is conditional on it, so a run that lost its claim writes nothing.
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    worker_pid: Mapped[int | None] = mapped_column(Integer, nullable=True)

    iteration: Mapped[int | None] = mapped_column(Integer, nullable=True)
    n_iter: Mapped[int | None] = mapped_column(Integer, nullable=True)
    samples_seen: Mapped[int | None] = mapped_column(Integer, nullable=True)
    metrics: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    stop_reason: Mapped[str | None] = mapped_column(String(32), nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    # Plain column, not a foreign key: models.job_id already points the other way.
    model_id: Mapped[int | None] = mapped_column(Integer, nullable=True)

    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    started_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    finished_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # Leases (migration 0003; services/jobs/leases.py): the running job's worker refreshes heartbeat_at,
    # the API process holding a queued job in its executor refreshes dispatched_at.
    heartbeat_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    dispatched_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # Limits (migration 0005; services/jobs/limits.py): the owner who queued the job
    # (app/core/tenants.py; its queue quota) and the wall-clock seconds its run may take (its own
    # time_budget_s, or the server's PGS_MAX_JOB_SECONDS when it gave none). Nullable in the
    # database only because SQLite cannot change that in place; every job has an owner.
    owner: Mapped[str] = mapped_column(String(64), nullable=True, default=DEFAULT_OWNER)
    time_limit_s: Mapped[float | None] = mapped_column(Float, nullable=True)
    # Migration 0007: labels, and the model name the job's model is registered under (as the
    # next version of that name).
    name: Mapped[str | None] = mapped_column(String(255), nullable=True)
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    tags: Mapped[list[str]] = mapped_column(JSON, default=list, server_default=text("'[]'"))
    model_name: Mapped[str | None] = mapped_column(String(255), nullable=True)
    # Migration 0013: with params.sigma "auto", the request's selection options with their
    # defaults (app/services/jobs/selection.py); null otherwise.
    selection_options: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # Migration 0018: the stored model the fit starts from (init_model, app/services/jobs/
    # warm_start.py); null for a cold start. A plain id: the lineage outlives that model.
    init_model_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # Migration 0021: how the solver was chosen when the request named "auto" (solver/auto.py):
    # {"requested": "auto", "chosen", "reason"}; null when the request named the solver.
    solver_choice: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # Migration 0015: the request's decision threshold options (app/services/jobs/threshold.py);
    # null: the default threshold.
    threshold_options: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # Migration 0015: the metric ``targets`` name (the trace's test score); null: accuracy or RMSE.
    target_metric: Mapped[str | None] = mapped_column(String(32), nullable=True)

    @property
    def threshold(self) -> dict[str, Any] | None:
        """A binary classifier's decision threshold, as the run recorded it in its metrics."""
        return (self.metrics or {}).get("threshold")

    # Migration 0014: the data set column whose values weigh the rows (its header name); null:
    # every row weighs 1 (app/services/jobs/weights.py).
    weight_column: Mapped[str | None] = mapped_column(String(255), nullable=True)

    @property
    def selection(self) -> dict[str, Any] | None:
        """What sigma "auto" chose, as the run recorded it in its metrics (schemas.SelectionResult)."""
        return (self.metrics or {}).get("selection")

    @property
    def progress(self) -> dict[str, Any]:
        """The run's progress as the API reads it (schemas.JobProgress; app/services/jobs/eta.py)."""
        return job_progress(self, utcnow())


class TracePoint(Base):
    """One checkpoint of a job's run (the solver's TracePoint, stored)."""

    __tablename__ = "job_trace"

    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    iteration: Mapped[int] = mapped_column(Integer)
    samples_seen: Mapped[int] = mapped_column(Integer)
    solver_seconds: Mapped[float] = mapped_column(Float)
    objective: Mapped[float | None] = mapped_column(Float, nullable=True)
    test_score: Mapped[float | None] = mapped_column(Float, nullable=True)
    score_name: Mapped[str | None] = mapped_column(String(16), nullable=True)
    # Sparsity of the predictor and, for solvers that count them, non-zeros of X read so far
    # (the L1 paper's density plots and x-axis).
    nnz_weights: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    data_accesses: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    # P(w) - D(alpha) for the solvers that keep a dual point (sdca): a bound on objective - optimum.
    duality_gap: Mapped[float | None] = mapped_column(Float, nullable=True)


class Model(LearnedFacts, Base):
    __tablename__ = "models"
    __table_args__ = (
        # Names are per owner: two owners may each have a model "churn".
        Index("ux_models_owner_name_version", "owner", "name", "version", unique=True),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # The owner it belongs to (app/core/tenants.py; migration 0012).
    owner: Mapped[str] = mapped_column(String(64), default=DEFAULT_OWNER, server_default=DEFAULT_OWNER)
    job_id: Mapped[int | None] = mapped_column(ForeignKey("jobs.id", ondelete="SET NULL"), nullable=True)
    dataset_id: Mapped[int | None] = mapped_column(
        ForeignKey("datasets.id", ondelete="SET NULL"), nullable=True
    )
    solver: Mapped[str] = mapped_column(String(32))
    task: Mapped[str] = mapped_column(String(16))
    estimator: Mapped[str] = mapped_column(String(64))
    params: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    n_features: Mapped[int] = mapped_column(Integer)
    classes: Mapped[list[Any] | None] = mapped_column(JSON, nullable=True)
    index_base: Mapped[int] = mapped_column(Integer, default=1)
    metrics: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # File stem relative to the data dir: <stem>.npz holds the arrays, <stem>.json the metadata.
    file_stem: Mapped[str] = mapped_column(String(255))
    size_bytes: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    # The fitted preprocessing's settings (its arrays are in the model's .npz) and the names of
    # the raw features a prediction row may be keyed by (migration 0009).
    preprocessing: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    feature_names: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)
    # Migration 0007 (services/model_registry/versions.py): a name groups versions 1, 2, ... of a model; both
    # are null for a model without a name.
    name: Mapped[str | None] = mapped_column(String(255), nullable=True)
    version: Mapped[int | None] = mapped_column(Integer, nullable=True)
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    tags: Mapped[list[str]] = mapped_column(JSON, default=list, server_default=text("'[]'"))
    # What the model was trained on, kept when that data set was deleted (services/datasets/lineage.py).
    training_dataset: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # Why the model is the last iterate of a run that did not finish (migration 0005):
    # "cancelled" or "time_limit"; null for a finished run.
    partial_reason: Mapped[str | None] = mapped_column(String(32), nullable=True)
    # Migration 0018: the model this one's fit started from (its job's init_model); null for a
    # cold start.
    init_model_id: Mapped[int | None] = mapped_column(Integer, nullable=True)

    @property
    def partial(self) -> bool:
        return self.partial_reason is not None

    @property
    def threshold(self) -> dict[str, Any] | None:
        """A binary classifier's decision threshold (from its metrics; None for the others)."""
        return (self.metrics or {}).get("threshold")

    @property
    def nnz_weights(self) -> int | None:
        """Non-zero weights of the stored predictor (from its metrics; None for older models)."""
        return (self.metrics or {}).get("nnz_weights")

    @property
    def n_weights(self) -> int | None:
        """The stored linear predictor's weight count (from its metrics; None for a kernel model)."""
        return (self.metrics or {}).get("n_weights")


class IdempotencyKey(Base):
    """Remembers which resource a creating POST with an Idempotency-Key created: a job, a data set
    or a study (exactly one of the three ids is set; app/services/idempotency.py)."""

    __tablename__ = "idempotency_keys"

    # Keys are scoped to the caller, so two clients cannot collide on a key.
    principal: Mapped[str] = mapped_column(String(64), primary_key=True)
    key: Mapped[str] = mapped_column(String(255), primary_key=True)
    request_hash: Mapped[str] = mapped_column(String(64))
    # Cascades: deleting the resource forgets its key (a retry then creates it anew).
    job_id: Mapped[int | None] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), nullable=True)
    dataset_id: Mapped[int | None] = mapped_column(
        ForeignKey("datasets.id", ondelete="CASCADE"), nullable=True
    )
    study_id: Mapped[int | None] = mapped_column(ForeignKey("studies.id", ondelete="CASCADE"), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class Study(Base):
    """A time-to-accuracy study: runs x sizes x repeats ordinary jobs (jobs.study_id).

    Its status, progress and table are derived from its jobs on every read; the row holds only
    the request (migration 0002).
    """

    __tablename__ = "studies"
    __table_args__ = {"sqlite_autoincrement": True}

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # The owner it belongs to (app/core/tenants.py; migration 0012).
    owner: Mapped[str] = mapped_column(String(64), default=DEFAULT_OWNER, server_default=DEFAULT_OWNER)
    name: Mapped[str | None] = mapped_column(String(255), nullable=True)
    task: Mapped[str] = mapped_column(String(16))
    dataset_id: Mapped[int | None] = mapped_column(
        ForeignKey("datasets.id", ondelete="SET NULL"), nullable=True
    )
    test_dataset_id: Mapped[int | None] = mapped_column(
        ForeignKey("datasets.id", ondelete="SET NULL"), nullable=True
    )
    test_fraction: Mapped[float | None] = mapped_column(Float, nullable=True)
    seed: Mapped[int] = mapped_column(Integer, default=0)
    # Rows of the training part the sizes were drawn from (after the test_fraction split).
    n_train: Mapped[int] = mapped_column(Integer)
    # [{"solver", "params", "label"}, ...]; a job's study_run indexes this list.
    runs: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    sizes: Mapped[list[int]] = mapped_column(JSON)
    repeats: Mapped[int] = mapped_column(Integer)
    targets: Mapped[list[float]] = mapped_column(JSON)
    select_sigma: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    time_budget_s: Mapped[float | None] = mapped_column(Float, nullable=True)
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class ModelAlias(Base):
    """``name@alias`` -> one version of the model ``name`` (services/model_registry/versions.py)."""

    __tablename__ = "model_aliases"

    # Aliases are per owner, like the model names they point into.
    owner: Mapped[str] = mapped_column(String(64), primary_key=True, default=DEFAULT_OWNER)
    name: Mapped[str] = mapped_column(String(255), primary_key=True)
    alias: Mapped[str] = mapped_column(String(64), primary_key=True)
    # No ON DELETE: a model an alias points to cannot be deleted (the route answers 409).
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id"))
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class AliasEvent(Base):
    """One change of an alias: set or moved (model_id) or deleted (model_id null)."""

    __tablename__ = "alias_events"
    __table_args__ = (
        Index("ix_alias_events_owner_name_alias", "owner", "name", "alias"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # The owner it belongs to (app/core/tenants.py; migration 0012).
    owner: Mapped[str] = mapped_column(String(64), default=DEFAULT_OWNER, server_default=DEFAULT_OWNER)
    name: Mapped[str] = mapped_column(String(255))
    alias: Mapped[str] = mapped_column(String(64))
    # Plain ids, not foreign keys: the history outlives the models it names.
    model_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    previous_model_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # The key that made the change (app/core/tenants.py's key_id).
    principal: Mapped[str] = mapped_column(String(64))
    at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class BatchPrediction(Base):
    """Predictions of a model for every row of a stored data set, run in the background
    (services/model_registry/batch_predictions.py); the result lives in the store under ``result_key``."""

    __tablename__ = "batch_predictions"
    __table_args__ = {"sqlite_autoincrement": True}

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # The owner it belongs to (app/core/tenants.py; migration 0012).
    owner: Mapped[str] = mapped_column(String(64), default=DEFAULT_OWNER, server_default=DEFAULT_OWNER)
    model_id: Mapped[int | None] = mapped_column(
        ForeignKey("models.id", ondelete="SET NULL"), nullable=True, index=True
    )
    dataset_id: Mapped[int | None] = mapped_column(
        ForeignKey("datasets.id", ondelete="SET NULL"), nullable=True
    )
    # "fail" or "ignore": what to do with features beyond the model's width.
    extra_features: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16), default=JobStatus.QUEUED, index=True)
    # The fencing token of the current run, as for jobs (services/jobs/state.py).
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    n_rows: Mapped[int] = mapped_column(Integer)
    rows_done: Mapped[int] = mapped_column(Integer, default=0)
    # Store key prefix of the result: <result_key>.<output>.npy for each of ``outputs``.
    result_key: Mapped[str | None] = mapped_column(String(255), nullable=True)
    outputs: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)
    # Migration 0015: the predictions' metrics against the data set's labels (app/services/metrics).
    metrics: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # Migration 0019: why a succeeded run has no metrics (no labels, or labels of another kind).
    metrics_note: Mapped[str | None] = mapped_column(Text, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    started_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    finished_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    heartbeat_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)

    @property
    def progress(self) -> dict[str, Any]:
        fraction = min(self.rows_done / self.n_rows, 1.0) if self.n_rows else 1.0
        return {"rows_done": self.rows_done, "n_rows": self.n_rows, "fraction": fraction}


class AuditEvent(Base):
    """One write through the API: who (the key and its owner) created, changed or deleted what,
    and when (migration 0012; app/services/audit.py)."""

    __tablename__ = "audit_events"
    __table_args__ = (
        Index("ix_audit_events_at", "at"),
        Index("ix_audit_events_owner_at", "owner", "at"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    # The owner of the object written (whose log it is), and the caller who wrote it.
    owner: Mapped[str] = mapped_column(String(64))
    actor_owner: Mapped[str] = mapped_column(String(64))
    actor_key: Mapped[str] = mapped_column(String(64))
    actor_role: Mapped[str] = mapped_column(String(16))
    action: Mapped[str] = mapped_column(String(16))  # "create", "update" or "delete"
    resource: Mapped[str] = mapped_column(String(32))  # "dataset", "job", "model", ...
    resource_id: Mapped[str] = mapped_column(String(300))
    detail: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
