"""/v1/models: list, read, edit, delete, and predict (JSON dense/sparse rows or svmlight text).

A path's ``{model_id}`` is a model id or an alias ``name@alias`` (services/model_registry/versions.py)."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request, Response
from sqlalchemy import select, update
from starlette.concurrency import run_in_threadpool

from app.api import examples
from app.api.deps import (
    CacheDep,
    CallerDep,
    FactoryDep,
    ModelRef,
    ModelRowDep,
    SessionDep,
    SettingsDep,
    require_json,
)
from app.api.filters import NameQuery, SearchQuery, SortQuery, TagsQuery, search_filter, sort_columns
from app.api.openapi import BODY_GUARDS, example, problems
from app.api.pagination import CursorQuery, LimitQuery, paginate
from app.core.config import Settings
from app.core.errors import ProblemError, conflict, field_error, invalid, not_found
from app.core.tenants import Caller
from app.db.engine import SessionFactory, transaction
from app.db.tables import BatchPrediction, Job, JobStatus, Model
from app.schemas.coefficients import CoefficientPage
from app.schemas.models import (
    ExtraFeatures,
    ModelList,
    ModelPatch,
    ModelRead,
    PredictRequest,
    PredictResponse,
)
from app.services import labels
from app.services.model_registry import coefficients, versions
from app.services.model_registry.artifacts import (
    LoadedModel,
    ModelCache,
    delete_model_files,
    load_for_prediction,
    load_model_files,
    save_model_files,
)
from app.services.model_registry.batch_predictions import delete_result
from app.services.model_registry.import_read import ImportLimits
from app.services.model_registry.import_rebuild import READERS, import_file
from app.services.model_registry.onnx_graph import NotExportable, to_onnx
from app.services.model_registry.portable import ModelFacts, document, facts_of, to_json, to_npz
from app.services.model_registry.predict import (
    check_row_count,
    csv_to_payload,
    instances_to_matrix,
    predict,
    predictions_csv,
    svmlight_to_matrix,
    too_many_rows,
    unsupported_media_type,
)
from app.services.ownership import visible_to

router = APIRouter(prefix="/v1/models", tags=["models"])

ExtraFeaturesQuery = Annotated[
    ExtraFeatures,
    Query(
        description="Sparse or svmlight rows with feature indices beyond the model's width: fail "
        "(422 naming the index and the width) or ignore those features"
    ),
]

# Bodies up to this size (a few dozen rows) are parsed and predicted on the event loop: a thread
# hop would cost more than the work (a sparse dot product); larger ones go to the thread pool.
INLINE_BYTES = 16 * 1024


DatasetQuery = Annotated[int | None, Query(ge=1, description="Only models trained on this data set")]
MODEL_SORTS = {
    "created_at": Model.created_at,
    "name": Model.name,
    "version": Model.version,
    "estimator": Model.estimator,
    "solver": Model.solver,
}


@router.get(
    "",
    response_model=ModelList,
    summary="List models, newest first",
    responses=example(200, examples.page(examples.MODEL)),
)
def list_models(
    session: SessionDep,
    caller: CallerDep,
    name: NameQuery = None,
    dataset_id: DatasetQuery = None,
    tag: TagsQuery = None,
    q: SearchQuery = None,
    sort: SortQuery = None,
    limit: LimitQuery = 50,
    cursor: CursorQuery = None,
) -> Any:
    """``q`` searches the name and the description; ``sort``: id, created_at, name, version,
    estimator, solver."""
    stmt = visible_to(select(Model), Model, caller).where(*labels.tag_filter(Model.tags, tag or []))
    stmt = stmt.where(*search_filter([Model.name, Model.description], q))
    if name is not None:
        stmt = stmt.where(Model.name == name)  # the versions of a name
    if dataset_id is not None:
        stmt = stmt.where(Model.dataset_id == dataset_id)
    order = sort_columns(sort, MODEL_SORTS, Model.id)
    items, next_cursor = paginate(session, stmt, Model.id, limit, cursor, order)
    return {"items": items, "next_cursor": next_cursor}


EXPORT_TYPES = {
    "npz": "application/octet-stream",
    "json": "application/json",
    "onnx": "application/octet-stream",
}


@router.get(
    "/{model_id}/export",
    summary="Download the model: npz or json (imported back by POST /v1/models), or onnx "
    "(preprocessing and decision in one graph, for onnxruntime)",
    responses={
        200: {
            "content": {
                "application/octet-stream": {"example": "(the npz or onnx file)"},
                "application/json": {
                    "example": {"format": "pgs-model", "version": 1, "model": "...", "arrays": "..."}
                },
            }
        },
        **problems(404, (422, "ONNX export of a model it does not cover (kernel models)")),
    },
)
async def export_model(
    model_id: ModelRef,
    settings: SettingsDep,
    factory: FactoryDep,
    cache: CacheDep,
    caller: CallerDep,
    format: Annotated[Literal["npz", "json", "onnx"], Query(description="File format")] = "npz",
) -> Response:
    model = await _cached_model(model_id, settings, factory, cache, caller)
    body = await run_in_threadpool(_export, model, format, settings, factory)
    return Response(
        body,
        media_type=EXPORT_TYPES[format],
        headers={"content-disposition": f'attachment; filename="model-{model.model_id}.{format}"'},
    )


def _export(model: LoadedModel, format: str, settings: Settings, factory: Any) -> bytes:
    if format == "onnx":
        try:
            return to_onnx(model)
        except NotExportable as exc:
            raise invalid(str(exc), [field_error(["query", "format"], str(exc))]) from exc
    with transaction(factory) as s:
        row = s.get(Model, model.model_id)
        if row is None:
            raise not_found("model", model.model_id)
        stem, facts = row.file_stem, facts_of(row)
    try:
        meta, arrays = load_model_files(settings.store, stem)
    except FileNotFoundError:
        raise not_found("model", model.model_id) from None
    doc = document(facts, meta)
    return to_npz(doc, arrays) if format == "npz" else to_json(doc, arrays)


@router.post(
    "",
    response_model=ModelRead,
    status_code=201,
    summary="Import a model exported as npz (application/octet-stream) or json "
    "(application/json) by GET /v1/models/{id}/export",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/octet-stream": {
                    "schema": {"type": "string", "format": "binary"},
                    "example": "(an npz export)",
                },
                "application/json": {
                    "schema": {"type": "object"},
                    "example": {"format": "pgs-model", "version": 1, "model": "...", "arrays": "..."},
                },
            },
        }
    },
    responses={
        **example(201, examples.MODEL),
        **problems(
            *BODY_GUARDS,
            (413, "The body, its arrays, its parsed JSON or its dense weights over PGS_MAX_MODEL_BYTES"),
            (415, "Neither application/json nor application/octet-stream"),
            (
                422,
                "Not a model export, one whose facts and arrays disagree, with a width over "
                "PGS_MAX_FEATURES, params a job could not have, numbers that are not finite, or "
                "one that does not rebuild and run",
            ),
            507,
        ),
    },
)
async def import_model(
    request: Request, settings: SettingsDep, factory: FactoryDep, caller: CallerDep
) -> Any:
    ctype = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if ctype not in READERS:
        raise ProblemError(
            415,
            "send an npz export as application/octet-stream or a json export as application/json",
            kind="unsupported-media-type",
        )
    # A waiting import has not read its body: at most max_concurrent_model_imports bodies, and
    # what their checks build, are in memory at once.
    async with request.app.state.model_import_limiter:
        body = await _read_body(request, settings.max_model_bytes, "PGS_MAX_MODEL_BYTES")
        return await run_in_threadpool(_import, body, ctype, settings, factory, caller.owner)


def _import(body: bytes, ctype: str, settings: Settings, factory: Any, owner: str) -> Model:
    imported = import_file(body, ctype, ImportLimits.of(settings))
    stem, size = save_model_files(settings.store, imported.files, imported.arrays)
    try:
        return _insert_imported(factory, imported.facts, stem, size, owner)
    except BaseException:  # no files without their row (the database's disk may be full)
        delete_model_files(settings.store, stem)
        raise


def _insert_imported(factory: Any, facts: ModelFacts, stem: str, size: int, owner: str) -> Model:
    with transaction(factory) as s:
        row = Model(
            owner=owner,
            job_id=None,
            dataset_id=None,
            solver=facts.solver,
            task=facts.task,
            estimator=facts.estimator,
            params=facts.params,
            n_features=facts.n_features,
            classes=facts.classes,
            index_base=facts.index_base,
            metrics=facts.metrics,
            file_stem=stem,
            size_bytes=size,
            preprocessing=facts.preprocessing,
            feature_names=facts.feature_names,
        )
        s.add(row)
        s.flush()
        s.expunge(row)
    return row


@router.get(
    "/{model_id}",
    response_model=ModelRead,
    summary="One model (by id or name@alias)",
    responses={**example(200, examples.MODEL), **problems(404)},
)
def get_model(model: ModelRowDep) -> Model:
    return model


@router.get(
    "/{model_id}/coefficients",
    response_model=CoefficientPage,
    summary="The model's weights by name, per unit of the raw columns, a page at a time "
    "(largest |weight| on the scaled features first)",
    responses={
        **example(200, examples.COEFFICIENT_PAGE),
        **problems(
            404,
            (
                422,
                "A kernel model (no weight per feature), a class that is not one of the model's, or "
                "none for a multiclass model",
            ),
        ),
    },
)
def get_model_coefficients(
    model: ModelRowDep,
    settings: SettingsDep,
    offset: Annotated[int, Query(ge=0, description="The first weight to return")] = 0,
    limit: Annotated[int, Query(ge=1, le=1000, description="How many weights")] = 100,
    class_: Annotated[
        str | None,
        Query(alias="class", description="The class whose weights to list (required for multiclass)"),
    ] = None,
) -> Any:
    return _coefficient_page(settings, model, offset, limit, class_)


def _coefficient_page(settings: Settings, model: Model, offset: int, limit: int, asked: str | None) -> Any:
    try:
        _, arrays = load_model_files(settings.store, model.file_stem)
    except FileNotFoundError:
        raise not_found("model", model.id) from None
    space = coefficients.FeatureSpace.of(model)
    outputs = coefficients.raw_weights(arrays, space)
    if outputs is None:
        msg = "a kernel model has no weight per feature (only a linear model does)"
        raise invalid(msg, [field_error(["path", "model_id"], msg)])
    try:
        chosen = coefficients.pick_output(outputs, asked)
    except ValueError as exc:
        raise invalid(str(exc), [field_error(["query", "class"], str(exc))]) from None
    return coefficients.page(chosen, space, offset, limit)


@router.patch(
    "/{model_id}",
    response_model=ModelRead,
    dependencies=[Depends(require_json)],
    summary="Name (as the next version), describe or tag a model",
    responses={
        **example(200, examples.MODEL),
        **problems(
            *BODY_GUARDS,
            404,
            (409, "A new name for a model an alias points to"),
            (415, "The body is not JSON"),
        ),
    },
)
def patch_model(model: ModelRowDep, body: ModelPatch, session: SessionDep) -> Model:
    changes = body.changes()
    if "name" in changes:
        versions.rename_model(session, model, changes.pop("name"))
    labels.apply_changes(model, changes)
    session.commit()
    return model


@router.delete(
    "/{model_id}",
    status_code=204,
    summary="Delete a model and its files",
    responses=problems(*BODY_GUARDS, 404, 409, 507),
)
def delete_model(model: ModelRowDep, session: SessionDep, settings: SettingsDep, cache: CacheDep) -> Response:
    held = versions.aliases_of(session, model.id)
    if held:
        raise conflict(f"model {model.id} is {', '.join(held)}; move or delete those aliases first")
    batches = list(session.scalars(select(BatchPrediction).where(BatchPrediction.model_id == model.id)))
    active = [b.id for b in batches if b.status in JobStatus.ACTIVE]
    if active:
        raise conflict(
            f"model {model.id} has queued or running batch prediction(s) {active}; cancel them first"
        )
    stem = model.file_stem
    session.execute(update(Job).where(Job.model_id == model.id).values(model_id=None))
    for batch in batches:  # their results are reached through the model only
        session.delete(batch)
    session.delete(model)
    session.commit()
    for batch in batches:
        delete_result(settings.store, batch)
    cache.evict(model.id)
    delete_model_files(settings.store, stem)
    return Response(status_code=204)


def _resolve(factory: Any, ref: str, owner: str) -> int:
    with factory() as s:
        return versions.resolve_ref(s, ref, owner)


async def _cached_model(
    ref: ModelRef, settings: SettingsDep, factory: FactoryDep, cache: CacheDep, caller: CallerDep
) -> LoadedModel:
    model = await _cached_or_loaded(ref, settings, factory, cache, caller)
    if not caller.sees(model.owner):
        raise not_found("model", model.model_id)
    return model


async def _cached_or_loaded(
    ref: ModelRef, settings: Settings, factory: SessionFactory, cache: ModelCache, caller: Caller
) -> LoadedModel:
    # An id hit touches neither the database nor the disk; an alias is looked up on every
    # request (so a moved alias takes effect at once), in the thread pool like a miss.
    if ref.isascii() and ref.isdigit() and len(ref) <= 18:
        model_id = int(ref)
    else:
        model_id = await run_in_threadpool(_resolve, factory, ref, caller.owner)
    hit = cache.get(model_id)
    if hit is not None:
        return hit
    return await run_in_threadpool(
        ModelCache.get_or_load,
        cache,
        model_id,
        lambda: load_for_prediction(settings.store, factory, model_id),
    )


async def _read_body(request: Request, limit: int, setting: str = "PGS_MAX_PREDICT_BYTES") -> bytes:
    too_large = ProblemError(413, f"the body exceeds {limit} bytes ({setting})", kind="payload-too-large")
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise too_large
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)


def _to_matrix(body: bytes, media_type: str, model: LoadedModel, ignore_extra: bool) -> Any:
    if media_type == "text/plain":
        if (model.preprocessing or {}).get("categorical"):
            msg = "this model has text columns, which svmlight lines cannot carry: send JSON or CSV"
            raise invalid(msg, [field_error(["body"], msg)])
        return svmlight_to_matrix(body, model.n_features, model.index_base, ignore_extra)
    if media_type == "text/csv":
        return instances_to_matrix(csv_to_payload(body, model), model, ignore_extra)
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError) as exc:
        # ValueError: JSONDecodeError, UnicodeDecodeError, and an integer of more than 4300 digits
        # (Python's int_max_str_digits); RecursionError: nesting deeper than the parser's stack.
        raise invalid(
            f"the body is not valid JSON: {exc}", [field_error(["body"], "JSON decode error", "json_invalid")]
        ) from exc
    return instances_to_matrix(payload, model, ignore_extra)


def _run(
    body: bytes, media_type: str, model: LoadedModel, max_rows: int, as_csv: bool, ignore_extra: bool
) -> bytes:
    check_row_count(body, media_type, max_rows)
    X = _to_matrix(body, media_type, model, ignore_extra)
    if X.shape[0] > max_rows:
        raise too_many_rows(X.shape[0], max_rows)
    try:
        out = predict(model, X)
        if as_csv:
            return predictions_csv(out, model.classes)
        # allow_nan=False: NaN is not JSON; a client would fail to parse the answer.
        return json.dumps(out, allow_nan=False).encode()
    except ValueError as exc:
        msg = "the instances' values are so large that the model's scores are not finite"
        raise invalid(msg, [field_error(["body", "instances"], msg)]) from exc


_PREDICT_DOC: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "required": ["instances"],
                    "properties": {
                        "instances": {
                            "type": "array",
                            "minItems": 1,
                            "items": {
                                "anyOf": [
                                    {
                                        "type": "array",
                                        "items": {"type": ["number", "string", "null"]},
                                        "description": (
                                            "dense: n_features values (strings for text columns, "
                                            "null for a missing value: imputed, or a text "
                                            "column's missing category)"
                                        ),
                                    },
                                    {
                                        "type": "object",
                                        "additionalProperties": {"type": ["number", "string", "null"]},
                                        "description": "named: keyed by the model's feature_names (an absent "
                                        "feature is missing, as null is)",
                                    },
                                    {
                                        "type": "object",
                                        "required": ["indices", "values"],
                                        "properties": {
                                            "indices": {"type": "array", "items": {"type": "integer"}},
                                            "values": {"type": "array", "items": {"type": "number"}},
                                        },
                                        "description": "sparse, 0-based distinct indices",
                                    },
                                ]
                            },
                        }
                    },
                    "description": PredictRequest.__doc__,
                },
                "example": {"instances": [[0.1, 0.0, 1.0], {"indices": [0, 2], "values": [0.1, 1]}]},
            },
            "text/csv": {
                "schema": {"type": "string"},
                "description": "A header row, then one row per instance: columns named "
                "by the model's feature_names (the label column may be present and is "
                "left out; empty cells and NA, NaN, null, ... are missing), or positional without names",
                "example": "fLength,fWidth,colour\n28.8,16.0,red\n",
            },
            "text/plain": {"schema": {"type": "string"}, "example": "1:0.5 3:1.25\n2:1 7:-0.5"},
        },
    },
    "responses": {
        "200": {
            "content": {
                "text/csv": {
                    "schema": {"type": "string"},
                    "description": "With Accept: text/csv: prediction, score (or score_<class>), "
                    "probability_<class> (logistic)",
                    "example": "prediction,score,probability_g,probability_h\ng,-1.2,0.77,0.23\n",
                }
            }
        }
    },
}


@router.post(
    "/{model_id}/predict",
    response_model=PredictResponse,
    summary="Predict: JSON rows (lists, objects keyed by feature name, or sparse), CSV with a "
    "header, or svmlight lines; answered as JSON or, with Accept: text/csv, as CSV",
    openapi_extra=_PREDICT_DOC,
    responses={
        **example(200, examples.PREDICTION),
        **problems(
            *BODY_GUARDS,
            404,
            (413, "Over PGS_MAX_PREDICT_BYTES or PGS_MAX_PREDICT_ROWS"),
            (415, "Not application/json, text/csv or text/plain"),
            507,
        ),
    },
)
async def predict_route(
    request: Request,
    settings: SettingsDep,
    model: Annotated[LoadedModel, Depends(_cached_model)],
    extra_features: ExtraFeaturesQuery = "fail",
) -> Response:
    ctype = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if ctype not in ("application/json", "text/plain", "text/csv"):
        raise unsupported_media_type()
    as_csv = "text/csv" in request.headers.get("accept", "")
    body = await _read_body(request, settings.max_predict_bytes)
    ignore_extra = extra_features == "ignore"
    if len(body) <= INLINE_BYTES:
        out = _run(body, ctype, model, settings.max_predict_rows, as_csv, ignore_extra)
    else:
        out = await run_in_threadpool(
            _run, body, ctype, model, settings.max_predict_rows, as_csv, ignore_extra
        )
    return Response(out, media_type="text/csv" if as_csv else "application/json")
