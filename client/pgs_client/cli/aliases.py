"""``pgs aliases``: a model name's aliases (``name@alias``) set, moved, shown and deleted."""

from __future__ import annotations

from typing import Annotated

import typer

from pgs_client.cli import output
from pgs_client.cli.context import Json, ModelArg, client
from pgs_client.operations import covers

group = typer.Typer(
    help="Point name@alias at a model version, move it, list and delete it.", no_args_is_help=True
)

Ref = Annotated[str, typer.Argument(metavar="NAME@ALIAS", help="The alias, e.g. heart@prod")]
ALIAS_COLUMNS = ["name", "alias", "model_id", "version", "updated_at"]
EVENT_COLUMNS = ["at", "model_id", "previous_model_id", "principal"]


@group.command("ls")
@covers("GET /v1/aliases")
def aliases_ls(
    ctx: typer.Context,
    name: Annotated[str | None, typer.Option(help="Only the aliases of this model name")] = None,
    as_json: Json = False,
) -> None:
    """List aliases."""
    output.show(list(client(ctx).aliases.list(name)), as_json, ALIAS_COLUMNS)


@group.command("show")
@covers("GET /v1/aliases/{ref}")
def aliases_show(ctx: typer.Context, ref: Ref, as_json: Json = False) -> None:
    """The model version an alias points to."""
    output.show(client(ctx).aliases.get(ref), as_json, title=ref)


@group.command("set")
@covers("PUT /v1/aliases/{ref}")
def aliases_set(ctx: typer.Context, ref: Ref, model: ModelArg, as_json: Json = False) -> None:
    """Point NAME@ALIAS at MODEL (a version of NAME; another alias, e.g. heart@staging, promotes
    the version it points to); moves the alias if it exists."""
    output.show(client(ctx).aliases.set(ref, model), as_json, title=ref)


@group.command("rm")
@covers("DELETE /v1/aliases/{ref}")
def aliases_rm(ctx: typer.Context, ref: Ref) -> None:
    """Delete an alias (the model stays)."""
    client(ctx).aliases.delete(ref)
    output.stderr.print(f"deleted alias {ref}")


@group.command("history")
@covers("GET /v1/aliases/{ref}/history")
def aliases_history(ctx: typer.Context, ref: Ref, as_json: Json = False) -> None:
    """Every change of an alias, oldest first (model_id -: deleted)."""
    output.show(client(ctx).aliases.history(ref), as_json, EVENT_COLUMNS, title=ref)
