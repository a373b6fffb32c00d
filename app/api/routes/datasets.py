"""/v1/datasets: upload (multipart, streamed to disk), list, read, edit, delete."""

from __future__ import annotations

from typing import Annotated, Any

from anyio import to_thread
from fastapi import APIRouter, Depends, Query, Request, Response
from sqlalchemy import or_, select
from starlette.concurrency import run_in_threadpool

from app.api import examples
from app.api.deps import (
    CallerDep,
    DatasetDep,
    FactoryDep,
    IdempotencyKeyHeader,
    SessionDep,
    SettingsDep,
    require_json,
)
from app.api.filters import NameQuery, SearchQuery, SortQuery, TagsQuery, search_filter, sort_columns
from app.api.openapi import BODY_GUARDS, example, problems
from app.api.pagination import CursorQuery, LimitQuery, paginate
from app.api.upload_slots import TOO_MANY_UPLOADS
from app.core.config import Settings
from app.core.errors import ProblemError, conflict, field_error, invalid
from app.db.tables import Dataset, Job, JobStatus
from app.schemas.datasets import ColumnPage, DatasetDetail, DatasetList, DatasetPatch, DatasetRead
from app.services import labels
from app.services.datasets import lineage, shards
from app.services.datasets.column_summary import StatsPending, column_page
from app.services.datasets.create import (
    DatasetOptions,
    dataset_name,
    insert_dataset,
    parse_file,
    validate_options,
)
from app.services.datasets.multipart import receive_upload
from app.services.datasets.parse_base import ParseError
from app.services.datasets.splits import task_from_labels
from app.services.datasets.unlabelled import require_labels
from app.services.idempotency import Idempotency, idempotency, replay
from app.services.ownership import visible_to

router = APIRouter(prefix="/v1/datasets", tags=["datasets"])
# How long a client waits before asking again for statistics still being computed.
STATS_RETRY_AFTER_S = 10
# The columns a data set's representation shows; GET /v1/datasets/{id}/columns pages through all.
FIRST_COLUMNS = 20


_UPLOAD_DOC: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "properties": {
                        "file": {
                            "type": "string",
                            "format": "binary",
                            "description": "svmlight/LIBSVM or CSV, optionally gzip, bzip2 or xz; "
                            "or Parquet or Arrow IPC (Feather)",
                        },
                        **DatasetOptions.model_json_schema()["properties"],
                    },
                },
                "example": {"file": "(heart_scale.svm)", "name": "heart_scale"},
            }
        },
    }
}


def _earlier(factory: Any, idem: Idempotency) -> Dataset | None:
    with factory() as s:
        return replay(s, idem, Dataset)


@router.post(
    "",
    status_code=201,
    response_model=DatasetDetail,
    openapi_extra=_UPLOAD_DOC,
    summary="Upload a data set (svmlight or CSV, optionally gzip, bzip2 or xz; Parquet or Arrow)",
    responses={
        **example(201, examples.DATASET_DETAIL),
        **problems(
            *BODY_GUARDS,
            409,
            (
                413,
                "The file is over a size, memory or time limit, or the data set over PGS_MAX_DATASET_BYTES",
            ),
            (415, "The body is not multipart/form-data"),
            TOO_MANY_UPLOADS,
            (507, "The store's quota (PGS_STORE_QUOTA_BYTES) or its disk is full"),
        ),
    },
)
async def create_dataset(
    request: Request,
    response: Response,
    settings: SettingsDep,
    factory: FactoryDep,
    caller: CallerDep,
    idempotency_key: IdempotencyKeyHeader = None,
) -> Any:
    upload = await receive_upload(request, settings.tmp_dir, settings.max_upload_bytes)
    assert upload.path is not None
    key = shards.new_dataset_key()
    # The file's hash stands for its content: a retry sends the same bytes.
    idem = idempotency(
        caller.key_id,
        idempotency_key,
        "POST /v1/datasets",
        {"sha256": upload.sha256, "filename": upload.filename, "fields": upload.fields},
    )
    try:
        earlier = await run_in_threadpool(_earlier, factory, idem)
        if earlier is not None:  # a retry: nothing to parse or store
            return await run_in_threadpool(_created, request, response, settings, earlier, True)
        form = validate_options(upload.fields)
        name = dataset_name(form, upload.filename)
        # Waiting uploads hold no thread: the limiter admits max_concurrent_parses at a time.
        stored = await to_thread.run_sync(
            parse_file,
            upload.path,
            settings,
            form,
            upload.filename,
            key,
            factory,
            limiter=request.app.state.parse_limiter,
        )
    finally:
        upload.path.unlink(missing_ok=True)
    try:
        ds, replayed = await run_in_threadpool(
            insert_dataset, factory, form, name, key, stored, upload.sha256, upload.size, caller.owner, idem
        )
    except BaseException:
        # The row is the source of truth: no row, no file.
        shards.delete_dataset(settings.store, key)
        raise
    if replayed:
        # A concurrent retry stored the same data set first.
        shards.delete_dataset(settings.store, key)
    return await run_in_threadpool(_created, request, response, settings, ds, replayed)


def _created(
    request: Request, response: Response, settings: Settings, ds: Dataset, replayed: bool
) -> dict[str, Any]:
    if replayed:
        response.headers["Idempotent-Replayed"] = "true"
    response.headers["Location"] = str(request.url_for("get_dataset", dataset_id=ds.id).path)
    return _detail(settings, ds)


def _detail(settings: Settings, ds: Dataset) -> dict[str, Any]:
    """The data set as GET shows it: with its first columns' statistics."""
    try:
        columns = column_page(settings.store, ds, 0, FIRST_COLUMNS)
        status = "unavailable" if columns is None else "ready"
    except StatsPending:
        columns, status = None, "pending"
    return DatasetRead.model_validate(ds).model_dump() | {"columns": columns, "columns_status": status}


DATASET_SORTS = {
    "created_at": Dataset.created_at,
    "name": Dataset.name,
    "n_samples": Dataset.n_samples,
    "n_features": Dataset.n_features,
    "size_bytes": Dataset.size_bytes,
}


@router.get(
    "",
    response_model=DatasetList,
    summary="List data sets, newest first",
    responses=example(200, examples.page(examples.DATASET)),
)
def list_datasets(
    session: SessionDep,
    caller: CallerDep,
    name: NameQuery = None,
    tag: TagsQuery = None,
    q: SearchQuery = None,
    sort: SortQuery = None,
    limit: LimitQuery = 50,
    cursor: CursorQuery = None,
) -> Any:
    """``q`` searches the name; ``sort``: id, created_at, name, n_samples, n_features, size_bytes."""
    stmt = visible_to(select(Dataset), Dataset, caller).where(*labels.tag_filter(Dataset.tags, tag or []))
    stmt = stmt.where(*search_filter([Dataset.name], q))
    if name is not None:
        stmt = stmt.where(Dataset.name == name)
    order = sort_columns(sort, DATASET_SORTS, Dataset.id)
    items, next_cursor = paginate(session, stmt, Dataset.id, limit, cursor, order)
    return {"items": items, "next_cursor": next_cursor}


@router.get(
    "/{dataset_id}",
    response_model=DatasetDetail,
    summary="One data set, with its first columns' statistics",
    responses={**example(200, examples.DATASET_DETAIL), **problems(404)},
)
def get_dataset(dataset: DatasetDep, settings: SettingsDep) -> Any:
    return _detail(settings, dataset)


@router.get(
    "/{dataset_id}/columns",
    response_model=ColumnPage,
    summary="The data set's column statistics, a page at a time",
    responses={
        **example(200, examples.DATASET_DETAIL["columns"]),
        **problems(
            404,
            422,
            (
                503,
                "The data set's files cannot be read from the store, or its statistics are still "
                f"being computed (a data set stored before they were): retry after {STATS_RETRY_AFTER_S} s",
            ),
        ),
    },
)
def get_dataset_columns(
    dataset: DatasetDep,
    settings: SettingsDep,
    offset: Annotated[int, Query(ge=0, description="The first listed column to return")] = 0,
    limit: Annotated[int, Query(ge=1, le=1000, description="How many columns")] = 100,
) -> Any:
    try:
        page = column_page(settings.store, dataset, offset, limit)
    except StatsPending:
        raise ProblemError(
            503,
            f"dataset {dataset.id}'s column statistics are still being computed (it was stored "
            "before the service kept them); retry shortly",
            kind="unavailable",
            headers={"Retry-After": str(STATS_RETRY_AFTER_S)},
        ) from None
    if page is None:
        raise ProblemError(
            503, f"dataset {dataset.id}'s files cannot be read from the store", kind="unavailable"
        )
    return page


@router.patch(
    "/{dataset_id}",
    response_model=DatasetRead,
    dependencies=[Depends(require_json)],
    summary="Rename, describe, tag a data set, or correct its task",
    responses={
        **example(200, examples.DATASET),
        **problems(
            *BODY_GUARDS,
            404,
            (409, "A task change while queued or running jobs read the data set"),
            (415, "The body is not JSON"),
        ),
    },
)
def patch_dataset(
    dataset: DatasetDep, body: DatasetPatch, session: SessionDep, settings: SettingsDep
) -> Dataset:
    changes = body.changes()
    task = changes.pop("task", None)
    if task is not None:
        _change_task(session, settings, dataset, task)
    labels.apply_changes(dataset, {k: v for k, v in changes.items() if k != "name" or v is not None})
    session.commit()
    return dataset


def _change_task(session: Any, settings: Settings, dataset: Dataset, task: str) -> None:
    require_labels(dataset, ["body", "task"], "a task is what its labels are")
    busy = session.scalars(
        select(Job.id).where(
            or_(Job.dataset_id == dataset.id, Job.test_dataset_id == dataset.id),
            Job.status.in_(JobStatus.ACTIVE),
        )
    ).all()
    if busy:
        raise conflict(
            f"dataset {dataset.id} is read by queued or running job(s) {list(busy)}; "
            "change its task once they finished"
        )
    try:
        dataset.task, dataset.classes = task_from_labels(
            settings.store, dataset.file_name, dataset.label_kind, task
        )
    except ParseError as exc:
        raise invalid(str(exc), [field_error(["body", "task"], str(exc))]) from exc
    dataset.task_source = "declared"


ForceQuery = Annotated[
    bool, Query(description="Delete even though models or studies come from it (they keep its metadata)")
]


@router.delete(
    "/{dataset_id}",
    status_code=204,
    summary="Delete a data set (409 while models, studies or active jobs use it)",
    responses=problems(
        *BODY_GUARDS,
        404,
        (
            409,
            "Models, studies or queued/running jobs use the data set: "
            "force=true deletes it under models and studies, never under "
            "active jobs",
        ),
        507,
    ),
)
def delete_dataset(
    dataset: DatasetDep, session: SessionDep, settings: SettingsDep, force: ForceQuery = False
) -> Response:
    lineage.check_deletable(session, dataset, force)
    lineage.keep_in_models(session, dataset)
    key = dataset.file_name
    session.delete(dataset)
    session.commit()
    # Files after row: a crash in between leaves orphan files, never a row without its files.
    shards.delete_dataset(settings.store, key)
    return Response(status_code=204)
