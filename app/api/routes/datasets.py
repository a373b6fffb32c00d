"""/v1/datasets: upload (multipart, streamed to disk), list, read, delete."""

from __future__ import annotations

from pathlib import Path as FsPath
from typing import Any, Literal

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy import or_, select
from starlette.concurrency import run_in_threadpool

from app.api.deps import DatasetDep, FactoryDep, SessionDep, SettingsDep
from app.api.pagination import CursorQuery, LimitQuery, paginate
from app.core.config import Settings
from app.core.db import transaction
from app.core.errors import ProblemError, conflict, field_error, invalid
from app.models import Dataset, Job, JobStatus
from app.schemas import DatasetList, DatasetRead
from app.services.datasets import csr_writer, new_dataset_key
from app.services.parsing import ParseError, ParseOptions, TooLargeError, parse_upload
from app.services.uploads import receive_upload

router = APIRouter(prefix="/v1/datasets", tags=["datasets"])


class UploadForm(BaseModel):
    """The text fields of the multipart upload, validated like a body."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(default=None, max_length=255)
    format: Literal["auto", "svmlight", "csv"] = "auto"
    label_column: str | None = Field(
        default=None, description="CSV: column number (0-based, negative from the end) or name"
    )
    header: Literal["auto", "true", "false"] = "auto"
    zero_based: Literal["auto", "true", "false"] = "auto"
    task: Literal["auto", "classification", "regression"] = "auto"


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
                                 "description": "svmlight/LIBSVM or CSV, optionally gzip"},
                        **UploadForm.model_json_schema()["properties"],
                    },
                }
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


def _store(settings: Settings, factory: Any, upload_path: FsPath, form: UploadForm,
           filename: str, sha256: str, size: int) -> Dataset:
    options = ParseOptions(
        format=form.format, label_column=form.label_column, header=form.header,
        zero_based=form.zero_based, task=form.task, filename=filename,
        max_decompressed_bytes=settings.max_decompressed_bytes,
    )
    parsed = parse_upload(upload_path, options)
    if parsed.X.shape[1] > settings.max_features:
        # A single huge index (e.g. "1 2147483647:1") would make every model that size.
        msg = (f"{parsed.X.shape[1]} features (the largest feature index); the limit is "
               f"{settings.max_features} (PGS_MAX_FEATURES)")
        raise invalid(msg, [field_error(["body", "file"], msg)])
    store, rel = settings.store, new_dataset_key()
    store.write(rel, csr_writer(parsed.X, parsed.y))
    try:
        with transaction(factory) as s:
            ds = Dataset(
                name=form.name or filename or "dataset", format=parsed.format,
                compressed=parsed.compressed, file_name=rel, n_samples=parsed.X.shape[0],
                n_features=parsed.X.shape[1], nnz=int(parsed.X.nnz), task=parsed.task,
                classes=parsed.classes, label_kind=parsed.label_kind,
                index_base=parsed.index_base, sha256=sha256, size_bytes=size,
            )
            s.add(ds)
        return ds
    except BaseException:
        store.delete(rel)  # the row is the source of truth: no row, no file
        raise


@router.post(
    "",
    status_code=201,
    response_model=DatasetRead,
    openapi_extra=_UPLOAD_DOC,
    summary="Upload a data set (svmlight or CSV, optionally gzip)",
    responses={413: {"description": "File over the limit"}, 415: {"description": "Not multipart"}},
)
async def create_dataset(
    request: Request, response: Response, settings: SettingsDep, factory: FactoryDep
) -> Dataset:
    upload = await receive_upload(request, settings.tmp_dir, settings.max_upload_bytes)
    assert upload.path is not None
    try:
        try:
            form = UploadForm.model_validate(upload.fields)
        except ValidationError as exc:
            raise _form_problem(exc) from exc
        ds = await run_in_threadpool(
            _store, settings, factory, upload.path, form, upload.filename, upload.sha256,
            upload.size,
        )
    except TooLargeError as exc:
        raise ProblemError(413, str(exc), kind="payload-too-large") from exc
    except ParseError as exc:
        raise invalid(str(exc), [field_error(["body", "file"], str(exc))]) from exc
    finally:
        upload.path.unlink(missing_ok=True)
    response.headers["Location"] = str(request.url_for("get_dataset", dataset_id=ds.id).path)
    return ds


@router.get("", response_model=DatasetList, summary="List data sets, newest first")
def list_datasets(session: SessionDep, limit: LimitQuery = 50, cursor: CursorQuery = None) -> Any:
    items, next_cursor = paginate(session, select(Dataset), Dataset.id, limit, cursor)
    return {"items": items, "next_cursor": next_cursor}


@router.get("/{dataset_id}", response_model=DatasetRead, summary="One data set")
def get_dataset(dataset: DatasetDep) -> Dataset:
    return dataset


@router.delete("/{dataset_id}", status_code=204, summary="Delete a data set (409 while in use)")
def delete_dataset(dataset: DatasetDep, session: SessionDep, settings: SettingsDep) -> Response:
    in_use = session.scalars(
        select(Job.id).where(
            or_(Job.dataset_id == dataset.id, Job.test_dataset_id == dataset.id),
            Job.status.in_(JobStatus.ACTIVE),
        )
    ).all()
    if in_use:
        raise conflict(
            f"dataset {dataset.id} is used by queued or running job(s) {list(in_use)}; "
            "cancel them or wait for them to finish"
        )
    key = dataset.file_name
    session.delete(dataset)
    session.commit()
    # File after row: a crash in between leaves an orphan file, never a row without its file.
    settings.store.delete(key)
    return Response(status_code=204)
