"""What every command module shares: the connected client and the common arguments."""

from __future__ import annotations

from typing import Annotated

import typer

from pgs_client.client import Client

Json = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
Limit = Annotated[int, typer.Option(help="At most this many, newest first.")]
# The service resolves name@alias in every path that names a model, so commands pass it on as is.
ModelArg = Annotated[str, typer.Argument(metavar="MODEL", help="A model id or name@alias")]
DatasetId = Annotated[int, typer.Argument(metavar="DATASET", help="A data set id")]
JobId = Annotated[int, typer.Argument(metavar="JOB", help="A job id")]
StudyId = Annotated[int, typer.Argument(metavar="STUDY", help="A study id")]


def client(ctx: typer.Context) -> Client:
    """The client the root command connected (``--url``, ``--api-key``)."""
    connected: Client = ctx.find_root().obj
    return connected
