"""``pgs datasets|jobs|models edit``: rename, describe and tag (PATCH), the one command shape for
all three."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from pgs_client.cli import output
from pgs_client.cli.context import DatasetId, JobId, Json, ModelArg, client
from pgs_client.operations import covers

NewName = Annotated[str | None, typer.Option("--name", help="The new name")]
Description = Annotated[str | None, typer.Option(help="The new description")]
NewTags = Annotated[
    list[str] | None,
    typer.Option("--tag", metavar="TAG", help="The tags, replacing the present ones (repeat it)"),
]
ClearTags = Annotated[bool, typer.Option("--clear-tags", help="Remove every tag")]


def _tags(tag: list[str] | None, clear_tags: bool) -> list[str] | None:
    """The tags to send: the given ones, none (clear), or None to leave them as they are."""
    if clear_tags and tag:
        raise typer.BadParameter("give --tag or --clear-tags, not both", param_hint="--clear-tags")
    return [] if clear_tags else tag


def _changes(
    name: str | None, description: str | None, tags: list[str] | None, **more: Any
) -> dict[str, Any]:
    """The PATCH's fields; a usage error (exit 2) when none was given."""
    changes = {"name": name, "description": description, "tags": tags, **more}
    if all(v is None for v in changes.values()):
        raise typer.BadParameter("nothing to change: give --name, --description, --tag or --clear-tags")
    return changes


@covers("PATCH /v1/datasets/{dataset_id}")
def datasets_edit(
    ctx: typer.Context,
    dataset_id: DatasetId,
    name: NewName = None,
    description: Description = None,
    tag: NewTags = None,
    clear_tags: ClearTags = False,
    task: Annotated[str | None, typer.Option(help="Correct the task: classification | regression")] = None,
    as_json: Json = False,
) -> None:
    """Rename, describe or tag a data set, or correct its task."""
    changes = _changes(name, description, _tags(tag, clear_tags), task=task)
    ds = client(ctx).datasets.update(dataset_id, **changes)
    output.show(ds, as_json, title=f"dataset {ds.id}")


@covers("PATCH /v1/jobs/{job_id}")
def jobs_edit(
    ctx: typer.Context,
    job_id: JobId,
    name: NewName = None,
    description: Description = None,
    tag: NewTags = None,
    clear_tags: ClearTags = False,
    as_json: Json = False,
) -> None:
    """Rename, describe or tag a job."""
    job = client(ctx).jobs.update(job_id, **_changes(name, description, _tags(tag, clear_tags)))
    output.show(job, as_json, title=f"job {job.id}")


@covers("PATCH /v1/models/{model_id}")
def models_edit(
    ctx: typer.Context,
    model: ModelArg,
    name: Annotated[
        str | None, typer.Option("--name", help="Register it as the next version of this name")
    ] = None,
    description: Description = None,
    tag: NewTags = None,
    clear_tags: ClearTags = False,
    as_json: Json = False,
) -> None:
    """Name (as a new version), describe or tag a model."""
    updated = client(ctx).models.update(model, **_changes(name, description, _tags(tag, clear_tags)))
    output.show(updated, as_json, title=f"model {updated.id}")
