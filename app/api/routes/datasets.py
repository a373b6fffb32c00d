"""/v1/datasets: upload (multipart, streamed to disk), list, read, edit, delete."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from anyio import to_thread
from fastapi import APIRouter, Depends, Query, Request, Response
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy import func, or_, select
from starlette.concurrency import run_in_threadpool

from app.api import examples
from app.api.deps import (
    DatasetDep,
    FactoryDep,
    IdempotencyKeyHeader,
    PrincipalDep,
    SessionDep,
    SettingsDep,
    require_json,
)
from app.api.filters import NameQuery, TagsQuery
from app.api.openapi import BODY_GUARDS, example, problems
from app.api.pagination import CursorQuery, LimitQuery, paginate
from app.core.config import Settings
from app.core.errors import ProblemError, conflict, field_error, invalid
from app.models import Dataset, Job, JobStatus
from app.schemas import DatasetList, DatasetPatch, DatasetRead
from app.services import lineage, registry, shards
from app.services.datasets import task_from_labels
from app.services.idempotency import Idempotency, commit_created, idempotency, replay
from app.services.parse_process import (
    ParseBudget,
    QuotaError,
    StoredDataset,
    StoredSize,
    parse_and_store,
)
from app.services.parsing import ParseError, ParseOptions, TooLargeError
from app.services.uploads import MAX_NAME_CHARS, name_problem, receive_upload

router = APIRouter(prefix="/v1/datasets", tags=["datasets"])


def _printable_name(value: str | None) -> str | None:
    problem = None if value is None else name_problem(value)
    if problem:
        raise ValueError(f"the name {problem}")
    return value


class UploadForm(BaseModel):
    """The text fields of the multipart upload, validated like a body."""

    model_config = ConfigDict(extra="forbid")

    name: Annotated[str | None, AfterValidator(_printable_name)] = Field(
        default=None, max_length=MAX_NAME_CHARS)
    format: Literal["auto", "svmlight", "csv"] = "auto"
    label_column: str | None = Field(
        default=None, description="CSV: column number (0-based, negative from the end) or name"
    )
    header: Literal["auto", "true", "false"] = "auto"
    zero_based: Literal["auto", "true", "false"] = "auto"
    task: Literal["auto", "classification", "regression"] = "auto"
    n_features: int | None = Field(
        default=None, ge=1,
        description="The data set's width (e.g. a test set's: the training set's n_features); "
        "the file's largest feature index may not exceed it")
    description: str | None = Field(default=None, max_length=4000)
    tags: str | None = Field(default=None, description="Comma-separated tags")

    def tag_list(self) -> list[str]:
        tags = [t.strip() for t in (self.tags or "").split(",") if t.strip()]
        return DatasetPatch(tags=tags).tags or []


_UPLOAD_DOC: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "properties": {
                        "file": {"type": "string", "format": "binary",
                                 "description": "svmlight/LIBSVM or CSV, optionally gzip, bzip2 or xz"},
                        **UploadForm.model_json_schema()["properties"],
                    },
                },
                "example": {"file": "(heart_scale.svm)", "name": "heart_scale"},
            }
        },
    }
}


def _form_problem(exc: ValidationError) -> ProblemError:
    errors = [
        field_error(["body", *[str(p) for p in e["loc"]]], e["msg"], e["type"])
        for e in exc.errors()
    ]
    return invalid("invalid form field(s): " + ", ".join(e["field"] for e in errors), errors)


def _parse_options(settings: Settings, form: UploadForm, filename: str) -> ParseOptions:
    return ParseOptions(
        format=form.format, label_column=form.label_column, header=form.header,
        zero_based=form.zero_based, task=form.task, filename=filename,
        max_decompressed_bytes=settings.max_decompressed_bytes,
        max_compression_ratio=settings.max_compression_ratio,
        max_features=settings.max_features, max_label_chars=settings.max_label_chars,
        n_features=form.n_features,
    )


def _insert(factory: Any, idem: Idempotency, form: UploadForm, name: str, key: str,
            stored: StoredDataset, sha256: str, size: int) -> tuple[Dataset, bool]:
    """The new row; or the data set of a concurrent upload with the same Idempotency-Key that
    committed first (True)."""
    with factory() as s:
        ds = Dataset(
            name=name, format=stored.format, compressed=stored.compressed, file_name=key,
            n_samples=stored.n_samples, n_features=stored.n_features, nnz=stored.nnz,
            task=stored.task, classes=stored.classes, label_kind=stored.label_kind,
            index_base=stored.index_base, sha256=sha256, size_bytes=size,
            stored_bytes=stored.stored_bytes,
            feature_names=stored.feature_names, label_name=stored.label_name,
            text_columns=stored.text_columns, n_missing=stored.n_missing,
            description=form.description, tags=form.tag_list(),
            task_source="guessed" if form.task == "auto" else "declared",
        )
        s.add(ds)
        s.flush()
        winner = commit_created(s, idem, ds)
    return (winner, True) if winner is not None else (ds, False)


def _earlier(factory: Any, idem: Idempotency) -> Dataset | None:
    with factory() as s:
        return replay(s, idem, Dataset)


def _stored_size(factory: Any, settings: Settings) -> StoredSize:
    """What a new data set may take in the store: PGS_MAX_DATASET_BYTES, or less when the rest
    of PGS_STORE_QUOTA_BYTES is smaller (data sets not yet converted to shards count by their
    upload's size). Two uploads parsed at once may together pass the quota by up to a data set
    each (at most PGS_MAX_CONCURRENT_PARSES of them)."""
    per_dataset = StoredSize(settings.max_dataset_bytes, "PGS_MAX_DATASET_BYTES")
    if not settings.store_quota_bytes:
        return per_dataset
    with factory() as s:
        used = s.scalar(select(func.coalesce(func.sum(
            func.coalesce(Dataset.stored_bytes, Dataset.size_bytes)), 0))) or 0
    left = settings.store_quota_bytes - int(used)
    if left >= per_dataset.max_bytes:
        return per_dataset
    quota = StoredSize(max(left, 0), f"{used} of PGS_STORE_QUOTA_BYTES="
                       f"{settings.store_quota_bytes} bytes are used", quota=True)
    if left <= 0:
        raise quota.exceeded(0)
    return quota


def _dataset_name(form: UploadForm, filename: str) -> str:
    """The explicit name, else the file's name (held to the same rules as a name)."""
    if form.name:
        return form.name
    problem = name_problem(filename)
    if problem:
        msg = f"the file name {problem}; send a name field"
        raise invalid(msg, [field_error(["body", "file"], msg)])
    return filename or "dataset"


@router.post(
    "",
    status_code=201,
    response_model=DatasetRead,
    openapi_extra=_UPLOAD_DOC,
    summary="Upload a data set (svmlight or CSV, optionally gzip, bzip2 or xz)",
    responses={**example(201, examples.DATASET),
               **problems(*BODY_GUARDS, 409,
                          (413, "The file is over a size, memory or time limit, or the data set "
                                "over PGS_MAX_DATASET_BYTES"),
                          (415, "The body is not multipart/form-data"),
                          (507, "The store's quota (PGS_STORE_QUOTA_BYTES) or its disk is full"))},
)
async def create_dataset(
    request: Request, response: Response, settings: SettingsDep, factory: FactoryDep,
    principal: PrincipalDep, idempotency_key: IdempotencyKeyHeader = None,
) -> Dataset:
    upload = await receive_upload(request, settings.tmp_dir, settings.max_upload_bytes)
    assert upload.path is not None
    store, key = settings.store, shards.new_dataset_key()
    # The file's hash stands for its content: a retry sends the same bytes.
    idem = idempotency(principal, idempotency_key, "POST /v1/datasets",
                       {"sha256": upload.sha256, "filename": upload.filename,
                        "fields": upload.fields})
    try:
        earlier = await run_in_threadpool(_earlier, factory, idem)
        if earlier is not None:  # a retry: nothing to parse or store
            return _created(request, response, earlier, replayed=True)
        try:
            form = UploadForm.model_validate(upload.fields)
            form.tag_list()
        except ValidationError as exc:
            raise _form_problem(exc) from exc
        name = _dataset_name(form, upload.filename)
        budget = ParseBudget(settings.parse_memory_bytes, settings.parse_timeout_s,
                             settings.shard_bytes,
                             await run_in_threadpool(_stored_size, factory, settings))
        # Waiting uploads hold no thread: the limiter admits max_concurrent_parses at a time.
        stored = await to_thread.run_sync(
            parse_and_store, upload.path, _parse_options(settings, form, upload.filename),
            store, key, budget, limiter=request.app.state.parse_limiter,
        )
    except QuotaError as exc:
        raise ProblemError(507, str(exc), kind="insufficient-storage") from exc
    except TooLargeError as exc:
        raise ProblemError(413, str(exc), kind="payload-too-large") from exc
    except ParseError as exc:
        raise invalid(str(exc), [field_error(["body", "file"], str(exc))]) from exc
    finally:
        upload.path.unlink(missing_ok=True)
    try:
        ds, replayed = await run_in_threadpool(_insert, factory, idem, form, name, key, stored,
                                               upload.sha256, upload.size)
    except BaseException:
        shards.delete_dataset(store, key)  # the row is the source of truth: no row, no file
        raise
    if replayed:
        shards.delete_dataset(store, key)  # a concurrent retry stored the same data set first
    return _created(request, response, ds, replayed)


def _created(request: Request, response: Response, ds: Dataset, replayed: bool) -> Dataset:
    if replayed:
        response.headers["Idempotent-Replayed"] = "true"
    response.headers["Location"] = str(request.url_for("get_dataset", dataset_id=ds.id).path)
    return ds


@router.get("", response_model=DatasetList, summary="List data sets, newest first",
            responses=example(200, examples.page(examples.DATASET)))
def list_datasets(session: SessionDep, name: NameQuery = None, tag: TagsQuery = None,
                  limit: LimitQuery = 50, cursor: CursorQuery = None) -> Any:
    stmt = select(Dataset).where(*registry.tag_filter(Dataset.tags, tag or []))
    if name is not None:
        stmt = stmt.where(Dataset.name == name)
    items, next_cursor = paginate(session, stmt, Dataset.id, limit, cursor)
    return {"items": items, "next_cursor": next_cursor}


@router.get("/{dataset_id}", response_model=DatasetRead, summary="One data set",
            responses={**example(200, examples.DATASET), **problems(404)})
def get_dataset(dataset: DatasetDep) -> Dataset:
    return dataset


@router.patch("/{dataset_id}", response_model=DatasetRead, dependencies=[Depends(require_json)],
              summary="Rename, describe, tag a data set, or correct its task",
              responses={**example(200, examples.DATASET),
                         **problems(*BODY_GUARDS, 404,
                                    (409, "A task change while queued or running jobs "
                                          "read the data set"),
                                    (415, "The body is not JSON"))})
def patch_dataset(dataset: DatasetDep, body: DatasetPatch, session: SessionDep,
                  settings: SettingsDep) -> Dataset:
    changes = body.changes()
    task = changes.pop("task", None)
    if task is not None:
        _change_task(session, settings, dataset, task)
    registry.apply_changes(dataset, {k: v for k, v in changes.items()
                                     if k != "name" or v is not None})
    session.commit()
    return dataset


def _change_task(session: Any, settings: Settings, dataset: Dataset, task: str) -> None:
    busy = session.scalars(select(Job.id).where(
        or_(Job.dataset_id == dataset.id, Job.test_dataset_id == dataset.id),
        Job.status.in_(JobStatus.ACTIVE))).all()
    if busy:
        raise conflict(f"dataset {dataset.id} is read by queued or running job(s) {list(busy)}; "
                       "change its task once they finished")
    try:
        dataset.task, dataset.classes = task_from_labels(
            settings.store, dataset.file_name, dataset.label_kind, task)
    except ParseError as exc:
        raise invalid(str(exc), [field_error(["body", "task"], str(exc))]) from exc
    dataset.task_source = "declared"


ForceQuery = Annotated[bool, Query(
    description="Delete even though models or studies come from it (they keep its metadata)")]


@router.delete(
    "/{dataset_id}", status_code=204,
    summary="Delete a data set (409 while models, studies or active jobs use it)",
    responses=problems(*BODY_GUARDS, 404,
                       (409, "Models, studies or queued/running jobs use the data set: "
                             "force=true deletes it under models and studies, never under "
                             "active jobs"), 507),
)
def delete_dataset(dataset: DatasetDep, session: SessionDep, settings: SettingsDep,
                   force: ForceQuery = False) -> Response:
    lineage.check_deletable(session, dataset, force)
    lineage.keep_in_models(session, dataset)
    key = dataset.file_name
    session.delete(dataset)
    session.commit()
    # Files after row: a crash in between leaves orphan files, never a row without its files.
    shards.delete_dataset(settings.store, key)
    return Response(status_code=204)
