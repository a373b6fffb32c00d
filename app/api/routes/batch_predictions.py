"""/v1/models/{model_id}/predictions: batch predictions of a stored data set (create, list,
read, cancel, delete) and their result, streamed as CSV, JSON lines or .npy.

The work runs in the background (services/model_registry/batch_predictions.py); the data set may be far larger
than a /predict body may be.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Header, Path, Query, Request, Response
from fastapi.responses import StreamingResponse
from sqlalchemy import select

from app.api import examples
from app.api.deps import CallerDep, ModelRowDep, SessionDep, SettingsDep, require_json
from app.api.openapi import BODY_GUARDS, example, problems
from app.api.pagination import CursorQuery, LimitQuery, paginate
from app.core.errors import ProblemError, conflict, field_error, invalid
from app.db.tables import BatchPrediction, Dataset, JobStatus
from app.schemas.batch_predictions import BatchPredictionCreate, BatchPredictionList, BatchPredictionRead
from app.services.model_registry import batch_predictions, batch_results
from app.services.model_registry.batch_results import MEDIA_TYPES, ResultFormat
from app.services.ownership import referenced_or_422

router = APIRouter(prefix="/v1/models", tags=["batch predictions"])


def _load(
    model: ModelRowDep, session: SessionDep, prediction_id: Annotated[int, Path(ge=1)]
) -> BatchPrediction:
    row = session.get(BatchPrediction, prediction_id)
    if row is None or row.model_id != model.id:
        raise ProblemError(
            404, f"batch prediction {prediction_id} of model {model.id} does not exist", kind="not-found"
        )
    return row


BatchDep = Annotated[BatchPrediction, Depends(_load)]


@router.post(
    "/{model_id}/predictions",
    status_code=202,
    response_model=BatchPredictionRead,
    dependencies=[Depends(require_json)],
    summary="Predict every row of a stored data set, in the background",
    responses={
        **example(
            202,
            {
                **examples.BATCH_PREDICTION,
                "status": "queued",
                "progress": {"rows_done": 0, "n_rows": 270, "fraction": 0.0},
                "outputs": None,
                "attempts": 0,
                "started_at": None,
                "finished_at": None,
            },
        ),
        **problems(
            *BODY_GUARDS,
            (404, "No such model"),
            (415, "The body is not JSON"),
            (
                422,
                "Invalid body, no such data set, or a data set wider "
                "than the model without extra_features=ignore",
            ),
        ),
    },
)
def create_batch(
    model: ModelRowDep,
    body: BatchPredictionCreate,
    session: SessionDep,
    caller: CallerDep,
    request: Request,
    response: Response,
) -> BatchPrediction:
    dataset = referenced_or_422(session, Dataset, body.dataset_id, caller, ["body", "dataset_id"], "dataset")
    row = batch_predictions.create(session, model, dataset, body.extra_features)
    request.app.state.batch_predictor.wake()
    response.headers["Location"] = request.app.url_path_for(
        "get_batch", model_id=str(model.id), prediction_id=str(row.id)
    )
    return row


@router.get(
    "/{model_id}/predictions",
    response_model=BatchPredictionList,
    summary="The model's batch predictions, newest first",
    responses={**example(200, examples.page(examples.BATCH_PREDICTION)), **problems(404)},
)
def list_batches(
    model: ModelRowDep, session: SessionDep, limit: LimitQuery = 50, cursor: CursorQuery = None
) -> dict[str, Any]:
    stmt = select(BatchPrediction).where(BatchPrediction.model_id == model.id)
    items, next_cursor = paginate(session, stmt, BatchPrediction.id, limit, cursor)
    return {"items": items, "next_cursor": next_cursor}


@router.get(
    "/{model_id}/predictions/{prediction_id}",
    response_model=BatchPredictionRead,
    summary="Status and progress of a batch prediction",
    responses={**example(200, examples.BATCH_PREDICTION), **problems(404)},
)
def get_batch(batch: BatchDep) -> BatchPrediction:
    return batch


@router.post(
    "/{model_id}/predictions/{prediction_id}/cancel",
    response_model=BatchPredictionRead,
    summary="Cancel a queued or running one",
    responses={
        **example(
            200,
            {**examples.BATCH_PREDICTION, "status": "cancelled", "cancel_requested": True, "outputs": None},
        ),
        **problems(*BODY_GUARDS, 404, (409, "It already ended")),
    },
)
def cancel_batch(batch: BatchDep, session: SessionDep) -> BatchPrediction:
    batch_predictions.request_cancel(session, batch)
    return batch


@router.delete(
    "/{model_id}/predictions/{prediction_id}",
    status_code=204,
    summary="Delete a finished batch prediction and its result",
    responses=problems(*BODY_GUARDS, 404, (409, "Queued or running: cancel it first"), 507),
)
def delete_batch(batch: BatchDep, session: SessionDep, settings: SettingsDep) -> Response:
    if batch.status in JobStatus.ACTIVE:
        raise conflict(f"batch prediction {batch.id} is {batch.status}; cancel it first")
    session.delete(batch)
    session.commit()
    batch_predictions.delete_result(settings.store, batch)  # files after the row, as for models
    return Response(status_code=204)


_RESULT_EXAMPLES = {
    "text/csv": "row,prediction,score,probability_-1,probability_1\n0,1,4.13,0.016,0.984\n",
    "application/x-ndjson": '{"row": 0, "prediction": 1, "score": 4.13, "probabilities": [0.016, 0.984]}\n',
    "application/x-npy": "(a NumPy .npy file: one output, one entry per row)",
}

FormatQuery = Annotated[
    ResultFormat | None,
    Query(alias="format", description="csv, jsonl or npy; else from the Accept header; default csv"),
]
# A closed set: a value outside it is a 422 whatever the format, never silently ignored.
OutputQuery = Annotated[
    Literal["predictions", "scores", "probabilities"],
    Query(description="npy only: predictions, scores or probabilities"),
]


@router.get(
    "/{model_id}/predictions/{prediction_id}/result",
    summary="The result, streamed: CSV, JSON lines, or one output as .npy",
    responses={
        200: {"content": {m: {"example": _RESULT_EXAMPLES[m]} for m in MEDIA_TYPES.values()}},
        **problems(
            404, (409, "Not succeeded (yet)"), (422, "An output this model has not, or an invalid format")
        ),
    },
)
def get_result(
    batch: BatchDep,
    model: ModelRowDep,
    settings: SettingsDep,
    result_format: FormatQuery = None,
    output: OutputQuery = "predictions",
    accept: Annotated[str, Header()] = "",
) -> StreamingResponse:
    if batch.status != JobStatus.SUCCEEDED or not batch.result_key or not batch.outputs:
        raise ProblemError(
            409,
            f"batch prediction {batch.id} is {batch.status}; its result exists once it succeeded",
            kind="conflict",
        )
    fmt = result_format or batch_results.format_from_accept(accept) or "csv"
    keys = batch_predictions.result_keys(batch.result_key, batch.outputs)
    filename = f"model-{model.id}-predictions-{batch.id}"
    if fmt == "npy":
        if output not in keys:
            msg = f"output must be one of {', '.join(batch.outputs)} for this model"
            raise invalid(msg, [field_error(["query", "output"], msg)])
        body = batch_results.stream_npy(settings.store, keys[output])
        filename += f"-{output}"
    elif fmt == "jsonl":
        body = batch_results.stream_jsonl(settings.store, keys)
    else:
        body = batch_results.stream_csv(settings.store, keys, model.classes)
    return StreamingResponse(
        body,
        media_type=MEDIA_TYPES[fmt],
        headers={"Content-Disposition": f'attachment; filename="{filename}.{fmt}"'},
    )
