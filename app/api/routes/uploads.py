"""The ways data gets in besides a multipart POST: resumable uploads (the tus 1.0 protocol:
core, creation, termination, checksum, expiration) and server-side imports.

tus (https://tus.io/protocols/resumable-upload): POST /v1/uploads with Upload-Length creates an
upload (201, Location); HEAD gives Upload-Offset; PATCH (application/offset+octet-stream) appends
at Upload-Offset; DELETE drops it. Any tus client (tus-js-client, tuspy, Uppy) can upload and
resume. POST /v1/uploads/{id}/dataset then turns the received bytes into a data set, off the
request: 202 and the upload to poll (GET) until it is "done" with its dataset_id.

Written here rather than with a tus server library: tuspyserver (the maintained one;
fastapi-tusd is abandoned) keeps its state in JSON files beside the bytes and has no notion of
an owner, a quota over several uploads or our problem+json errors; ownership, quota, expiry and
the parse hand-off are most of this module, the protocol itself is four small handlers.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Coroutine
from email.utils import format_datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Request, Response
from fastapi.routing import APIRoute
from pydantic import BeforeValidator, ConfigDict, Field
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect

from app.api.deps import CallerDep, FactoryDep, SettingsDep, require_json
from app.api.openapi import BODY_GUARDS, Responses, example, problems
from app.api.upload_slots import TOO_MANY_UPLOADS
from app.core.errors import ProblemError, conflict, not_found
from app.core.storage.base import STORAGE_ERRNOS
from app.db.tables import Upload, UploadState
from app.schemas.uploads import UploadRead
from app.services.datasets import finish, imports, resumable
from app.services.datasets.create import DatasetOptions

log = logging.getLogger(__name__)

TUS_VERSION = "1.0.0"
TUS_EXTENSIONS = "creation,termination,checksum,expiration"
OFFSET_STREAM = "application/offset+octet-stream"


class TusRoute(APIRoute):
    """Every answer of a tus route, errors included, carries Tus-Resumable (tus 1.0 core)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def tus_handler(request: Request) -> Response:
            try:
                response = await handler(request)
            except ProblemError as exc:
                exc.headers = {**(exc.headers or {}), "Tus-Resumable": TUS_VERSION}
                raise
            response.headers["Tus-Resumable"] = TUS_VERSION
            return response

        return tus_handler


router = APIRouter(prefix="/v1/uploads", tags=["uploads"], route_class=TusRoute)
import_router = APIRouter(prefix="/v1/datasets", tags=["datasets"])


def _tus_problems(*statuses: int) -> Responses:
    texts = {
        400: "Bad header (metadata, checksum), or the client left before the body ended",
        404: "No such upload (for this owner)",
        409: "Upload-Offset is not the upload's offset, another request is writing to it, or "
        "its state does not allow this",
        410: "The upload expired",
        412: "Tus-Resumable is not 1.0.0",
        413: "Over the upload's length, PGS_MAX_UPLOAD_BYTES or PGS_UPLOAD_QUOTA_BYTES",
        408: "The body paused, took too long or arrived too slowly (what arrived is kept)",
        429: TOO_MANY_UPLOADS[1],
        415: "Not the content type this operation reads",
        460: "Upload-Checksum does not match the body",
        507: "The disk is full: nothing of this PATCH was kept, the offset is unchanged",
    }
    return problems(*[(status, texts[status]) for status in statuses])


def _headers(status: int, description: str, **headers: str) -> Responses:
    """A tus answer: its meaning is in headers, with no body."""
    return {
        status: {
            "description": description,
            "headers": {
                name.replace("_", "-"): {"description": text, "schema": {"type": "string"}}
                for name, text in headers.items()
            },
        }
    }


UPLOAD_EXAMPLE: dict[str, Any] = {
    "id": "3f2a9c",
    "state": "parsing",
    "length": 2_147_483_648,
    "offset": 2_147_483_648,
    "filename": "big.svm.gz",
    "source": None,
    "created_at": "2026-01-15T09:30:00Z",
    "expires_at": "2026-01-16T09:30:00Z",
    "dataset_id": None,
    "error": None,
}


def tus_version(tus_resumable: Annotated[str | None, Header()] = None) -> None:
    if tus_resumable != TUS_VERSION:
        raise ProblemError(
            412,
            f"send 'Tus-Resumable: {TUS_VERSION}' (the tus protocol version this server speaks)",
            kind="tus-version",
            headers={"Tus-Version": TUS_VERSION},
        )


def own_upload(upload_id: str, request: Request, factory: FactoryDep, caller: CallerDep) -> Upload:
    """The caller's upload in any state, or 404 (another owner's upload does not exist for this
    caller). Read in a session of its own: the routes write in short transactions."""
    with factory() as session:
        upload = session.get(Upload, upload_id)
        if upload is not None:
            session.expunge(upload)
    if upload is None or not caller.sees(upload.owner):
        raise not_found("upload", upload_id)
    request.state.object_owner = upload.owner  # whose object a write changes (app/api/audit.py)
    return upload


def load_upload(upload: Annotated[Upload, Depends(own_upload)]) -> Upload:
    """The caller's upload, or 410 once it expired (the sweep deletes it soon)."""
    if upload.state == UploadState.RECEIVING and upload.expires_at < dt.datetime.now(dt.UTC):
        raise ProblemError(410, f"upload {upload.id} expired at {upload.expires_at.isoformat()}", kind="gone")
    return upload


UploadDep = Annotated[Upload, Depends(load_upload)]


def _digits(value: object) -> object:
    """tus sizes and offsets are plain decimal digits: not "1_000", "+5" or " 7" (which int()
    would take)."""
    if isinstance(value, str) and not (value.isascii() and value.isdigit()):
        raise ValueError("expected decimal digits (0-9) only")
    return value


# A tus size or offset header (Upload-Length, Upload-Offset).
TusSize = Annotated[int, BeforeValidator(_digits)]
TusDep = Depends(tus_version)


def _expires(upload: Upload) -> str:
    return format_datetime(upload.expires_at, usegmt=True)


@router.options(
    "",
    status_code=204,
    summary="tus discovery: version, extensions, maximum size",
    responses=_headers(
        204,
        "The server's tus support",
        Tus_Version="1.0.0",
        Tus_Extension=TUS_EXTENSIONS,
        Tus_Max_Size="bytes",
        Tus_Checksum_Algorithm="sha1,md5,...",
    ),
)
def tus_options(settings: SettingsDep) -> Response:
    return Response(
        status_code=204,
        headers={
            "Tus-Version": TUS_VERSION,
            "Tus-Extension": TUS_EXTENSIONS,
            "Tus-Max-Size": str(settings.max_upload_bytes),
            "Tus-Checksum-Algorithm": ",".join(resumable.CHECKSUM_ALGORITHMS),
        },
    )


@router.post(
    "",
    status_code=201,
    dependencies=[TusDep],
    response_class=Response,
    summary="Create a resumable upload (tus creation): Upload-Length bytes",
    responses={
        **_headers(
            201,
            "Created: PATCH its Location",
            Location="The upload's URL",
            Upload_Expires="When an unfinished upload is deleted",
        ),
        **_tus_problems(*BODY_GUARDS, 400, 412, 413),
    },
)
async def create_upload(
    request: Request,
    settings: SettingsDep,
    factory: FactoryDep,
    caller: CallerDep,
    upload_length: Annotated[TusSize, Header(ge=0, description="The file's size in bytes")],
    upload_metadata: Annotated[
        str, Header(description="tus metadata: 'filename <base64>' names the data set's file")
    ] = "",
) -> Response:
    upload = await run_in_threadpool(
        resumable.create, factory, settings, caller.owner, upload_length, upload_metadata
    )
    location = request.url_for("head_upload", upload_id=upload.id).path
    return Response(status_code=201, headers={"Location": location, "Upload-Expires": _expires(upload)})


@router.head(
    "/{upload_id}",
    status_code=200,
    dependencies=[TusDep],
    response_class=Response,
    summary="The upload's offset (tus core): where to resume",
    responses={
        **_headers(
            200,
            "The upload's progress",
            Upload_Offset="Bytes received",
            Upload_Length="Bytes declared",
            Upload_Expires="When an unfinished upload is deleted",
        ),
        **_tus_problems(404, 410, 412),
    },
)
def head_upload(upload: UploadDep, settings: SettingsDep) -> Response:
    headers = {
        "Upload-Offset": str(resumable.offset_of(settings, upload)),
        "Upload-Length": str(upload.length),
        "Cache-Control": "no-store",
        "Upload-Expires": _expires(upload),
    }
    if upload.metadata_header:
        headers["Upload-Metadata"] = upload.metadata_header
    return Response(status_code=200, headers=headers)


@router.patch(
    "/{upload_id}",
    status_code=204,
    dependencies=[TusDep],
    summary="Append bytes at Upload-Offset (tus core; Upload-Checksum optional)",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                OFFSET_STREAM: {
                    "schema": {"type": "string", "format": "binary"},
                    "example": "(the next bytes of the file)",
                }
            },
        }
    },
    responses={
        **_headers(204, "Appended", Upload_Offset="Bytes received now"),
        **_tus_problems(400, 404, 408, 409, 410, 412, 413, 415, 429, 460, 507),
    },
)
async def patch_upload(
    request: Request,
    upload: UploadDep,
    settings: SettingsDep,
    upload_offset: Annotated[TusSize, Header(ge=0)],
    upload_checksum: Annotated[str | None, Header()] = None,
) -> Response:
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != OFFSET_STREAM:
        raise ProblemError(415, f"send the bytes as {OFFSET_STREAM}", kind="unsupported-media-type")
    if upload.state != UploadState.RECEIVING:
        raise conflict(f"the upload is {upload.state}: it takes no more bytes")
    checksum = resumable.Checksum(upload_checksum) if upload_checksum else None
    with resumable.exclusive(resumable.upload_path(settings, upload.id)) as fh:
        if upload_offset != fh.tell():
            raise conflict(
                f"Upload-Offset is {upload_offset} but the upload has {fh.tell()} bytes: resume from there"
            )
        try:
            await resumable.append(fh, request.stream(), upload.length - fh.tell(), checksum)
        except OSError as exc:
            if exc.errno not in STORAGE_ERRNOS:
                raise
            log.error("upload %s: a PATCH at offset %d failed: %s", upload.id, upload_offset, exc)
            raise ProblemError(
                507,
                f"the server cannot store data right now ({exc.strerror}); none of this PATCH's "
                f"bytes were kept: the upload is still at offset {upload_offset}, resume from there later",
                kind="insufficient-storage",
            ) from None
        except ClientDisconnect:
            # Not a server error: the bytes that arrived are kept, a HEAD tells the client.
            log.info("upload %s: the client left mid-PATCH at offset %d", upload.id, fh.tell())
            raise ProblemError(
                400, "the client closed the connection before the body ended", kind="client-disconnected"
            ) from None
        offset = fh.tell()
    return Response(
        status_code=204, headers={"Upload-Offset": str(offset), "Upload-Expires": _expires(upload)}
    )


@router.delete(
    "/{upload_id}",
    status_code=204,
    dependencies=[TusDep],
    summary="Delete an upload and its bytes (tus termination), in any state",
    description="Works in every state. An upload being parsed is deleted at once: its parse "
    "ends without a data set. A data set the upload became stays (delete it on its own).",
    responses=_tus_problems(*BODY_GUARDS, 404, 412),
)
def delete_upload(
    upload: Annotated[Upload, Depends(own_upload)], settings: SettingsDep, factory: FactoryDep
) -> Response:
    resumable.remove(factory, settings, upload.id)
    return Response(status_code=204)


@router.get(
    "/{upload_id}",
    response_model=UploadRead,
    summary="The upload's state: poll it after finishing until done (dataset_id) or failed",
    responses={**example(200, UPLOAD_EXAMPLE), **_tus_problems(404, 410)},
)
def get_upload(upload: UploadDep, settings: SettingsDep) -> dict[str, Any]:
    return resumable.describe(settings, upload)


def _accepted(request: Request, response: Response, upload_id: str) -> dict[str, Any]:
    """202: the upload service parses it; the Location is the upload to poll."""
    request.app.state.upload_service.submit(upload_id)
    response.headers["Location"] = request.url_for("get_upload", upload_id=upload_id).path
    with request.app.state.session_factory() as s:
        upload = s.get(Upload, upload_id)
        return resumable.describe(request.app.state.settings, upload)


@router.post(
    "/{upload_id}/dataset",
    status_code=202,
    response_model=UploadRead,
    dependencies=[Depends(require_json)],
    summary="Turn a received upload into a data set (parsed off the request: poll the Location)",
    responses={**example(202, UPLOAD_EXAMPLE), **_tus_problems(*BODY_GUARDS, 404, 409, 410, 415)},
)
def finish_upload(
    request: Request,
    response: Response,
    upload: UploadDep,
    options: DatasetOptions,
    settings: SettingsDep,
    factory: FactoryDep,
) -> dict[str, Any]:
    options.tag_list()
    finish.start(factory, settings, upload, options)
    return _accepted(request, response, upload.id)


class ImportRequest(DatasetOptions):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [{"source": "/srv/data/big.svm.gz", "name": "big", "task": "classification"}]
        },
    )

    source: str = Field(
        max_length=4096,
        description="An absolute path, a file:// URL or an "
        "http(s) URL under one of the operator's PGS_IMPORT_ROOTS",
    )


@import_router.post(
    "/import",
    status_code=202,
    response_model=UploadRead,
    dependencies=[Depends(require_json)],
    summary="Import a data set from a path or URL the operator allows (PGS_IMPORT_ROOTS)",
    responses={
        **example(202, {**UPLOAD_EXAMPLE, "source": "/srv/data/big.svm.gz", "length": 0, "offset": 0}),
        **problems(
            *BODY_GUARDS,
            (403, "Imports are off, or the source is outside the roots"),
            (
                422,
                "The source is malformed (a control character, a bad port, user information, an "
                "encoded '/' or dot segment), a relative path, or not a file",
            ),
            (413, "Over PGS_UPLOAD_QUOTA_BYTES"),
            (415, "The body is not JSON"),
        ),
    },
)
def import_dataset(
    request: Request,
    response: Response,
    body: ImportRequest,
    settings: SettingsDep,
    factory: FactoryDep,
    caller: CallerDep,
) -> dict[str, Any]:
    body.tag_list()
    source = imports.check_source(settings, body.source)
    # A URL's bytes land in the uploads area: the import reserves the room it may fill (its
    # size once fetched). A path is parsed where it is.
    length = 0
    if imports.is_url(source):
        with factory() as s:
            left = settings.upload_quota_bytes - resumable.reserved_bytes(s, caller.owner)
        length = min(settings.max_upload_bytes, left)
        if length <= 0:
            raise ProblemError(
                413,
                "this owner's unfinished uploads fill its upload quota "
                "(PGS_UPLOAD_QUOTA_BYTES); finish or delete some first",
                kind="quota-exceeded",
            )
    name = source.rstrip("/").rsplit("/", 1)[-1]
    upload = resumable.create(
        factory, settings, caller.owner, length, resumable.metadata_header({"filename": name}), source=source
    )
    options = DatasetOptions.model_validate(body.model_dump(exclude={"source"}))
    finish.start(factory, settings, upload, options)
    return _accepted(request, response, upload.id)
