"""``pgs uploads``: the resumable uploads and imports behind data sets, by id."""

from __future__ import annotations

from typing import Annotated

import typer

from pgs_client.cli import output
from pgs_client.cli.context import Json, client
from pgs_client.operations import covers

group = typer.Typer(
    help="Resumable uploads and imports by id: their state, or drop one.", no_args_is_help=True
)

Upload = Annotated[str, typer.Argument(metavar="UPLOAD", help="The upload's id (its Location's last part)")]


@group.command("show")
@covers("GET /v1/uploads/{upload_id}")
def uploads_show(ctx: typer.Context, upload_id: Upload, as_json: Json = False) -> None:
    """An upload's state, bytes received and, once done, its data set."""
    output.show(client(ctx).uploads.get(upload_id), as_json, title=f"upload {upload_id}")


@group.command("rm")
@covers("DELETE /v1/uploads/{upload_id}")
def uploads_rm(ctx: typer.Context, upload_id: Upload) -> None:
    """Drop an upload and its bytes (a data set made from it stays)."""
    client(ctx).uploads.delete(upload_id)
    output.stderr.print(f"deleted upload {upload_id}")
