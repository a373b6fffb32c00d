"""``pgs me``, ``pgs audit``, ``pgs health``, ``pgs metrics``: who the key is, the log of
writes, and the service's own state."""

from __future__ import annotations

import datetime as dt
from typing import Annotated

import typer

from pgs_client.cli import output
from pgs_client.cli.context import Json, Limit, client
from pgs_client.operations import covers

AUDIT_COLUMNS = ["id", "at", "owner", "actor_owner", "actor_role", "action", "resource", "resource_id"]


@covers("GET /v1/me")
def me(ctx: typer.Context, as_json: Json = False) -> None:
    """Who the API key is: its owner and role."""
    output.show(client(ctx).account.me(), as_json, title="me")


@covers("GET /v1/audit")
def audit(
    ctx: typer.Context,
    owner: Annotated[str | None, typer.Option(help="Only writes to this owner's objects")] = None,
    since: Annotated[dt.datetime | None, typer.Option(help="Only writes at or after this time (UTC)")] = None,
    until: Annotated[dt.datetime | None, typer.Option(help="Only writes before this time (UTC)")] = None,
    resource: Annotated[str | None, typer.Option(help="Only writes to this kind: job, model, ...")] = None,
    action: Annotated[str | None, typer.Option(help="Only this action: create | update | delete")] = None,
    limit: Limit = 50,
    as_json: Json = False,
) -> None:
    """The audit log of writes, newest first (admin keys only)."""
    events = client(ctx).account.audit(
        limit, owner=owner, since=since, until=until, resource=resource, action=action
    )
    output.show(list(events), as_json, AUDIT_COLUMNS)


@covers("GET /healthz", "GET /readyz")
def health(ctx: typer.Context, as_json: Json = False) -> None:
    """Whether the service is alive (its version) and ready (database, store, disk, workers);
    exit 6 when it is not ready."""
    c = client(ctx)
    alive = c.service.health()
    ready = c.service.ready()
    output.show(
        {"version": alive.version, "status": ready["status"], **ready["checks"]}, as_json, title=c.url
    )


@covers("GET /metrics")
def metrics(ctx: typer.Context) -> None:
    """The service's Prometheus metrics, as its /metrics writes them."""
    print(client(ctx).service.metrics(), end="")
