"""``pgs batches``: batch predictions of a stored data set or of a file of new rows, run by the
service in the background (no request body limit), and their results."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from pgs_client.cli import EXIT_FINISHED_BADLY, output, predictions
from pgs_client.cli.context import Json, Limit, ModelArg, client
from pgs_client.operations import covers, operations_of
from pgs_client.resources.models import Models

group = typer.Typer(
    help="Predict every row of a stored data set or a file in the background; list, follow, "
    "cancel, download and delete those predictions.",
    no_args_is_help=True,
)

Batch = Annotated[int, typer.Argument(metavar="BATCH", help="The batch prediction's id")]
BATCH_COLUMNS = ["id", "model_id", "dataset_id", "status", "progress", "created_at", "finished_at"]


def _title(model: str, batch: int) -> str:
    return f"model {model}, batch prediction {batch}"


@group.command("create")
@covers(
    "POST /v1/models/{model_id}/predictions",
    "GET /v1/models/{model_id}/predictions/{prediction_id}",
    *operations_of(Models.predict_batch),
)
def batches_create(
    ctx: typer.Context,
    model: ModelArg,
    source: Annotated[
        str,
        typer.Argument(
            metavar="DATASET|FILE",
            help="A stored data set's id, or a file of rows to predict (CSV with a header, "
            "svmlight, Parquet or Arrow; plain or compressed), uploaded as it is without labels",
        ),
    ],
    extra_features: Annotated[
        str, typer.Option(help="fail | ignore: the columns of a data set wider than the model")
    ] = "fail",
    wait: Annotated[
        bool,
        typer.Option("--wait", help="DATASET: follow it until it ends; exit 1 unless it succeeded"),
    ] = False,
    format: Annotated[str, typer.Option(help="FILE: auto | svmlight | csv | parquet | arrow")] = "auto",
    out: Annotated[
        Path | None, typer.Option("-o", "--output", help="FILE: write the predictions here (default: stdout)")
    ] = None,
    keep: Annotated[
        bool, typer.Option("--keep", help="FILE: keep its data set and batch prediction in the service")
    ] = False,
    as_json: Json = False,
) -> None:
    """Predict every row of DATASET or FILE with MODEL in the background.

    DATASET: starts the batch prediction and shows it. FILE: uploads it (a data set without
    labels), follows the batch to its end and writes the predictions as CSV, as pgs predict
    does (prediction in the model's labels, scores, probabilities); the data set and the batch
    prediction are deleted afterwards unless --keep."""
    c = client(ctx)
    if source.isdigit() and not Path(source).exists():
        batch = c.models.predict_dataset(model, int(source), extra_features=extra_features)
        if wait:
            batch = c.models.wait_batch(model, batch)
        output.show(batch, as_json, title=_title(model, batch.id))
        if wait and batch.status != "succeeded":
            output.stderr.print(f"batch prediction {batch.id} {batch.status}: {batch.error or ''}")
            raise typer.Exit(EXIT_FINISHED_BADLY)
        return
    path = Path(source)
    if not path.is_file():
        raise typer.BadParameter(f"{source!r} is neither a data set id nor a file", param_hint="DATASET|FILE")
    pred = c.models.predict_batch(model, path, format=format, extra_features=extra_features, keep=keep)
    if as_json:
        predictions.emit_json(pred)
    elif out is None:
        predictions.write_csv(pred, c.models.get(model).classes, sys.stdout)
    else:
        with out.open("w", newline="") as stream:
            predictions.write_csv(pred, c.models.get(model).classes, stream)
        output.stderr.print(f"wrote {out}")


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
