"""From a file on disk to a data set row: the options every way in shares (multipart upload,
resumable upload, server-side import), the parse in its child process, and the insert."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from sqlalchemy import func, select

from app.core.config import Settings
from app.core.errors import ProblemError, field_error, invalid
from app.db.engine import SessionFactory
from app.db.tables import Dataset
from app.schemas.common import MAX_NAME_CHARS, check_printable_name, name_problem
from app.schemas.datasets import DatasetPatch
from app.services.datasets import shards
from app.services.datasets.parse_base import DEFAULT_NA_VALUES, ParseError, ParseOptions, TooLargeError
from app.services.datasets.parse_process import (
    ParseBudget,
    QuotaError,
    StoredDataset,
    StoredSize,
    parse_and_store,
)
from app.services.datasets.shards import new_dataset_key
from app.services.idempotency import Idempotency, commit_created

MAX_NA_CHARS = 100
# As many markers as the form field's 4,000 characters hold (one character and a comma each).
MAX_NA_MARKERS = 2000


class DatasetOptions(BaseModel):
    """How to read a file and label the data set: the upload form's text fields, the body of a
    resumable upload's finish and of an import."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"name": "news", "format": "svmlight", "tags": "text,nightly"}]},
    )

    name: Annotated[str | None, AfterValidator(check_printable_name)] = Field(
        default=None, max_length=MAX_NAME_CHARS
    )
    format: Literal["auto", "svmlight", "csv", "parquet", "arrow"] = "auto"
    labelled: bool = Field(
        default=True,
        description="false: the rows have no labels (new rows to predict in a batch): every CSV, "
        "Parquet or Arrow column is a feature, an svmlight line's leading label is read and not "
        "kept; no job trains on or evaluates the data set",
    )
    label_column: str | None = Field(
        default=None,
        description="CSV: column number (0-based, negative from the end) or name; Parquet and "
        "Arrow: the column's name (default: the last column)",
    )
    header: Literal["auto", "true", "false"] = "auto"
    zero_based: Literal["auto", "true", "false"] = "auto"
    task: Literal["auto", "classification", "regression"] = "auto"
    n_features: int | None = Field(
        default=None,
        ge=1,
        description="The data set's width (e.g. a test set's: the training set's n_features); "
        "the file's largest feature index may not exceed it",
    )
    na_values: str = Field(
        default=",".join(v for v in DEFAULT_NA_VALUES if v),
        max_length=4000,
        description="CSV: the cells that are missing values, comma-separated; an empty cell always is one",
        examples=["NA,-999"],
    )
    description: str | None = Field(default=None, max_length=4000)
    tags: str | None = Field(default=None, description="Comma-separated tags")

    @field_validator("label_column", "task")
    @classmethod
    def _labels_are_wanted(cls, value: str | None, info: ValidationInfo) -> str | None:
        # Declared after ``labelled``, so its value is known here.
        if info.data.get("labelled") is False and value not in (None, "", "auto"):
            raise ValueError(f"{info.field_name} names labels, and labelled=false says the rows have none")
        return value

    @field_validator("tags")
    @classmethod
    def _tags_are_valid(cls, tags: str | None) -> str | None:
        # One comma-separated field (a form's text), checked as the list of tags it holds.
        try:
            DatasetPatch(tags=split_list(tags))
        except ValidationError as exc:
            raise ValueError("; ".join(e["msg"] for e in exc.errors())) from None
        return tags

    @field_validator("na_values")
    @classmethod
    def _na_values_are_short(cls, na_values: str) -> str:
        if any(len(v) > MAX_NA_CHARS for v in split_list(na_values)):
            raise ValueError(f"a missing-value marker is longer than {MAX_NA_CHARS} characters")
        return na_values

    def na_value_list(self) -> tuple[str, ...]:
        """The cells read as missing: the empty cell and the listed ones."""
        return ("", *split_list(self.na_values))

    def tag_list(self) -> list[str]:
        return DatasetPatch(tags=split_list(self.tags)).tags or []


def split_list(text: str | None) -> list[str]:
    """The entries of a comma-separated form field, without surrounding blanks or empty ones."""
    return [t.strip() for t in (text or "").split(",") if t.strip()]


def validate_options(fields: dict[str, Any], loc: str = "body") -> DatasetOptions:
    """The options, or a 422 naming each bad field."""
    try:
        options = DatasetOptions.model_validate(fields)
        options.tag_list()
    except ValidationError as exc:
        errors = [field_error([loc, *[str(p) for p in e["loc"]]], e["msg"], e["type"]) for e in exc.errors()]
        raise invalid("invalid form field(s): " + ", ".join(e["field"] for e in errors), errors) from exc
    return options


def dataset_name(options: DatasetOptions, filename: str) -> str:
    """The explicit name, else the file's name (held to the same rules as a name)."""
    if options.name:
        return options.name
    problem = name_problem(filename)
    if problem:
        msg = f"the file name {problem}; send a name field"
        raise invalid(msg, [field_error(["body", "file"], msg)])
    return filename or "dataset"


def parse_options(settings: Settings, options: DatasetOptions, filename: str) -> ParseOptions:
    return ParseOptions(
        format=options.format,
        label_column=options.label_column,
        labelled=options.labelled,
        header=options.header,
        zero_based=options.zero_based,
        task=options.task,
        filename=filename,
        max_decompressed_bytes=settings.max_decompressed_bytes,
        max_compression_ratio=settings.max_compression_ratio,
        max_features=settings.max_features,
        max_label_chars=settings.max_label_chars,
        threads=settings.parse_threads,
        n_features=options.n_features,
        na_values=options.na_value_list(),
    )


def stored_size(factory: SessionFactory, settings: Settings) -> StoredSize:
    """What a new data set may take in the store: PGS_MAX_DATASET_BYTES, or less when the rest
    of PGS_STORE_QUOTA_BYTES is smaller (data sets not yet converted to shards count by their
    upload's size). Two uploads parsed at once may together pass the quota by up to a data set
    each (at most PGS_MAX_CONCURRENT_PARSES of them)."""
    per_dataset = StoredSize(settings.max_dataset_bytes, "PGS_MAX_DATASET_BYTES")
    if not settings.store_quota_bytes:
        return per_dataset
    with factory() as s:
        used = (
            s.scalar(
                select(func.coalesce(func.sum(func.coalesce(Dataset.stored_bytes, Dataset.size_bytes)), 0))
            )
            or 0
        )
    left = settings.store_quota_bytes - int(used)
    if left >= per_dataset.max_bytes:
        return per_dataset
    quota = StoredSize(
        max(left, 0),
        f"{used} of PGS_STORE_QUOTA_BYTES={settings.store_quota_bytes} bytes are used",
        quota=True,
    )
    if left <= 0:
        raise ProblemError(507, str(quota.exceeded(0)), kind="insufficient-storage")
    return quota


def parse_file(
    path: Path, settings: Settings, options: DatasetOptions, filename: str, key: str, factory: SessionFactory
) -> StoredDataset:
    """Parse ``path`` into the store as the shards of ``key`` (blocking); 413, 422 or 507."""
    budget = ParseBudget(
        settings.parse_memory_bytes,
        settings.parse_timeout_s,
        settings.shard_bytes,
        stored_size(factory, settings),
    )
    try:
        return parse_and_store(path, parse_options(settings, options, filename), settings.store, key, budget)
    except QuotaError as exc:
        raise ProblemError(507, str(exc), kind="insufficient-storage") from exc
    except TooLargeError as exc:
        raise ProblemError(413, str(exc), kind="payload-too-large") from exc
    except ParseError as exc:
        raise invalid(str(exc), [field_error(["body", "file"], str(exc))]) from exc


def insert_dataset(
    factory: SessionFactory,
    options: DatasetOptions,
    name: str,
    key: str,
    stored: StoredDataset,
    sha256: str,
    size: int,
    owner: str,
    idem: Idempotency | None = None,
) -> tuple[Dataset, bool]:
    """The row for a data set parsed into the store under ``key``; or, with an Idempotency-Key,
    the data set of a concurrent request with the same key that committed first (True)."""
    with factory() as s:
        ds = Dataset(
            owner=owner,
            name=name,
            format=stored.format,
            compressed=stored.compressed,
            file_name=key,
            n_samples=stored.n_samples,
            n_features=stored.n_features,
            nnz=stored.nnz,
            task=stored.task,
            classes=stored.classes,
            label_kind=stored.label_kind,
            index_base=stored.index_base,
            sha256=sha256,
            size_bytes=size,
            stored_bytes=stored.stored_bytes,
            feature_names=stored.feature_names,
            label_name=stored.label_name,
            text_columns=stored.text_columns,
            n_missing=stored.n_missing,
            na_values=split_list(options.na_values) if stored.format == "csv" else None,
            description=options.description,
            tags=options.tag_list(),
            task_source="guessed" if options.task == "auto" else "declared",
            labelled=stored.labelled,
        )
        s.add(ds)
        s.flush()
        if idem is None:
            s.commit()
            return ds, False
        winner = commit_created(s, idem, ds)
    return (winner, True) if winner is not None else (ds, False)


def store_dataset(
    factory: SessionFactory,
    settings: Settings,
    path: Path,
    options: DatasetOptions,
    filename: str,
    sha256: str,
    size: int,
    owner: str,
) -> Dataset:
    """Parse ``path`` and record the data set of ``owner`` (blocking): what a finished upload
    becomes."""
    name = dataset_name(options, filename)
    key = new_dataset_key()
    stored = parse_file(path, settings, options, filename, key, factory)
    try:
        return insert_dataset(factory, options, name, key, stored, sha256, size, owner)[0]
    except BaseException:
        shards.delete_dataset(settings.store, key)  # the row is the source of truth
        raise
