"""``pgs batches``: batch predictions of a stored data set, run by the service in the background
(no request body limit), and their results."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pgs_client.cli import EXIT_FINISHED_BADLY, output
from pgs_client.cli.context import Json, Limit, ModelArg, client
from pgs_client.operations import covers

group = typer.Typer(
    help="Predict every row of a stored data set in the background; list, follow, cancel, "
    "download and delete those predictions.",
    no_args_is_help=True,
)

Batch = Annotated[int, typer.Argument(metavar="BATCH", help="The batch prediction's id")]
BATCH_COLUMNS = ["id", "model_id", "dataset_id", "status", "progress", "created_at", "finished_at"]


def _title(model: str, batch: int) -> str:
    return f"model {model}, batch prediction {batch}"


@group.command("create")
@covers("POST /v1/models/{model_id}/predictions", "GET /v1/models/{model_id}/predictions/{prediction_id}")
def batches_create(
    ctx: typer.Context,
    model: ModelArg,
    dataset: Annotated[int, typer.Argument(metavar="DATASET", help="The data set whose rows to predict")],
    extra_features: Annotated[
        str, typer.Option(help="fail | ignore: the columns of a data set wider than the model")
    ] = "fail",
    wait: Annotated[
        bool, typer.Option("--wait", help="Follow it until it ends; exit 1 unless it succeeded")
    ] = False,
    as_json: Json = False,
) -> None:
    """Start predicting every row of DATASET with MODEL."""
    c = client(ctx)
    batch = c.models.predict_dataset(model, dataset, extra_features=extra_features)
    if wait:
        batch = c.models.wait_batch(model, batch)
    output.show(batch, as_json, title=_title(model, batch.id))
    if wait and batch.status != "succeeded":
        output.stderr.print(f"batch prediction {batch.id} {batch.status}: {batch.error or ''}")
        raise typer.Exit(EXIT_FINISHED_BADLY)


@group.command("ls")
@covers("GET /v1/models/{model_id}/predictions")
def batches_ls(ctx: typer.Context, model: ModelArg, limit: Limit = 20, as_json: Json = False) -> None:
    """The model's batch predictions, newest first."""
    output.show(list(client(ctx).models.batches(model, limit)), as_json, BATCH_COLUMNS)


@group.command("show")
@covers("GET /v1/models/{model_id}/predictions/{prediction_id}")
def batches_show(ctx: typer.Context, model: ModelArg, batch: Batch, as_json: Json = False) -> None:
    """A batch prediction: status, progress, metrics (a labelled data set's)."""
    output.show(client(ctx).models.batch(model, batch), as_json, title=_title(model, batch))


@group.command("cancel")
@covers("POST /v1/models/{model_id}/predictions/{prediction_id}/cancel")
def batches_cancel(ctx: typer.Context, model: ModelArg, batch: Batch, as_json: Json = False) -> None:
    """Cancel a queued or running batch prediction."""
    output.show(client(ctx).models.cancel_batch(model, batch), as_json, title=_title(model, batch))


@group.command("rm")
@covers("DELETE /v1/models/{model_id}/predictions/{prediction_id}")
def batches_rm(ctx: typer.Context, model: ModelArg, batch: Batch) -> None:
    """Delete an ended batch prediction and its result."""
    client(ctx).models.delete_batch(model, batch)
    output.stderr.print(f"deleted batch prediction {batch}")


@group.command("result")
@covers("GET /v1/models/{model_id}/predictions/{prediction_id}/result")
def batches_result(
    ctx: typer.Context,
    model: ModelArg,
    batch: Batch,
    out: Annotated[Path, typer.Option("-o", "--output", help="File to write")],
    format: Annotated[str, typer.Option(help="csv | jsonl | npy")] = "csv",
    column: Annotated[
        str, typer.Option(help="npy: the one output to write (predictions, scores, probabilities)")
    ] = "predictions",
) -> None:
    """Download a finished batch prediction's result (streamed to the file)."""
    client(ctx).models.download_batch(model, batch, out, format=format, output=column)
    output.stderr.print(f"wrote {out}")
