"""``pgs models export`` and ``pgs models import``: a model as a file, to move it between
installations (npz, json) or to serve it elsewhere (ONNX)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from pgs_client.cli import output
from pgs_client.cli.context import Json, ModelArg, client
from pgs_client.operations import covers

FORMATS: dict[str, Literal["npz", "json", "onnx"]] = {"npz": "npz", "json": "json", "onnx": "onnx"}


@covers("GET /v1/models/{model_id}/export")
def models_export(
    ctx: typer.Context,
    model: ModelArg,
    out: Annotated[Path, typer.Option("-o", "--output", help="File to write")],
    format: Annotated[
        str | None, typer.Option(help="npz | json | onnx (default: from the file's extension)")
    ] = None,
) -> None:
    """Save a model: npz or json (for `pgs models import` elsewhere) or onnx (its preprocessing
    and decision, for onnxruntime)."""
    chosen = format or out.suffix.lstrip(".").lower()
    if chosen not in FORMATS:
        raise typer.BadParameter(f"{chosen!r} is not npz, json or onnx", param_hint="--format")
    client(ctx).models.export(model, FORMATS[chosen], out)
    output.stderr.print(f"wrote {out}")


@covers("POST /v1/models")
def models_import(
    ctx: typer.Context,
    file: Annotated[
        Path, typer.Argument(exists=True, dir_okay=False, help="An npz or json file of `pgs models export`")
    ],
    as_json: Json = False,
) -> None:
    """Create a model from an exported npz or json file."""
    model = client(ctx).models.import_file(file)
    output.show(model, as_json, title=f"model {model.id}")
