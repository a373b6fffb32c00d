"""The model registry: names and versions, aliases and their history.

As in MLflow's model registry, a model *name* groups *versions*: a model given a name (by its
job's ``model_name`` or a PATCH) becomes the next version of it, 1, 2, ... An *alias* such as
``news-classifier@production`` points to one version of its name; other services call
``/v1/models/news-classifier@production/predict`` and the team moves the alias to another
version without the callers changing. Every set, move and delete of an alias is an
:class:`~app.db.tables.AliasEvent`. A model an alias points to can neither be deleted nor renamed.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.core.errors import ProblemError, conflict, field_error, invalid, not_found
from app.db.tables import AliasEvent, Model, ModelAlias, utcnow


def next_version(s: Session, owner: str, name: str) -> int:
    """The version number the owner's next model named ``name`` gets (the unique index on
    (owner, name, version) refuses a concurrent duplicate)."""
    latest = select(func.coalesce(func.max(Model.version), 0)).where(Model.owner == owner, Model.name == name)
    return int(s.scalar(latest)) + 1


def aliases_of(s: Session, model_id: int) -> list[str]:
    # A model's aliases are its owner's: an alias points into its own owner's names only.
    return [
        f"{a.name}@{a.alias}"
        for a in s.scalars(
            select(ModelAlias)
            .where(ModelAlias.model_id == model_id)
            .order_by(ModelAlias.name, ModelAlias.alias)
        )
    ]


def rename_model(s: Session, model: Model, name: str | None) -> None:
    """Give ``model`` a name (as its next version) or take it away."""
    if name == model.name:
        return
    held = aliases_of(s, model.id)
    if held:
        raise conflict(
            f"model {model.id} is {', '.join(held)}; move or delete those aliases before renaming it"
        )
    model.name = name
    model.version = None if name is None else next_version(s, model.owner, name)


def split_ref(ref: str) -> tuple[str, str] | None:
    """``name@alias`` -> (name, alias); None for anything else."""
    name, at, alias = ref.partition("@")
    return (name, alias) if at and name and alias else None


def resolve_ref(s: Session, ref: str, owner: str) -> int:
    """The model id a path's ``{model_id}`` names: a number, or ``name@alias`` of ``owner``'s
    names (an admin reaches other owners' models by id)."""
    if ref.isascii() and ref.isdigit() and len(ref) <= 18:
        return int(ref)
    parts = split_ref(ref)
    if parts is None:
        msg = "a model is named by its id or by name@alias"
        raise invalid(msg, [field_error(["path", "model_id"], msg)])
    model_id = s.scalar(
        select(ModelAlias.model_id).where(
            ModelAlias.owner == owner, ModelAlias.name == parts[0], ModelAlias.alias == parts[1]
        )
    )
    if model_id is None:
        raise not_found("model alias", ref)
    return int(model_id)


def get_alias(s: Session, owner: str, name: str, alias: str) -> ModelAlias:
    row = s.get(ModelAlias, (owner, name, alias))
    if row is None:
        raise not_found("model alias", f"{name}@{alias}")
    return row


def set_alias(s: Session, owner: str, name: str, alias: str, model_id: int, principal: str) -> ModelAlias:
    """Point ``owner``'s ``name@alias`` to ``model_id`` (a version of ``name`` of the same owner),
    recording the change."""
    model = s.get(Model, model_id)
    loc = ["body", "model_id"]
    if model is None or model.owner != owner:
        msg = f"model {model_id} does not exist"
        raise invalid(msg, [field_error(loc, msg)])
    if model.name != name:
        msg = (
            f"model {model_id} is not a version of {name!r} (its name is "
            f"{model.name!r}); PATCH the model's name first"
        )
        raise ProblemError(409, msg, kind="conflict", errors=[field_error(loc, msg)])
    row = s.get(ModelAlias, (owner, name, alias), with_for_update=True)
    previous = None if row is None else row.model_id
    if row is None:
        row = ModelAlias(owner=owner, name=name, alias=alias, model_id=model_id, updated_at=utcnow())
        s.add(row)
    elif previous != model_id:
        row.model_id, row.updated_at = model_id, utcnow()
    if previous != model_id:
        s.add(
            AliasEvent(
                owner=owner,
                name=name,
                alias=alias,
                model_id=model_id,
                previous_model_id=previous,
                principal=principal,
            )
        )
    return row


def delete_alias(s: Session, owner: str, name: str, alias: str, principal: str) -> None:
    row = get_alias(s, owner, name, alias)
    s.add(
        AliasEvent(
            owner=owner,
            name=name,
            alias=alias,
            model_id=None,
            previous_model_id=row.model_id,
            principal=principal,
        )
    )
    s.delete(row)


def alias_read(s: Session, row: ModelAlias) -> dict[str, Any]:
    version = s.scalar(select(Model.version).where(Model.id == row.model_id))
    return {
        "name": row.name,
        "alias": row.alias,
        "model_id": row.model_id,
        "version": version,
        "updated_at": row.updated_at,
    }


def list_aliases(s: Session, owner: str, name: str | None) -> list[dict[str, Any]]:
    stmt = select(ModelAlias).where(ModelAlias.owner == owner).order_by(ModelAlias.name, ModelAlias.alias)
    if name is not None:
        stmt = stmt.where(ModelAlias.name == name)
    return [alias_read(s, row) for row in s.scalars(stmt)]


def history(s: Session, owner: str, name: str, alias: str) -> list[AliasEvent]:
    rows = list(
        s.scalars(
            select(AliasEvent)
            .where(AliasEvent.owner == owner, AliasEvent.name == name, AliasEvent.alias == alias)
            .order_by(AliasEvent.id)
        )
    )
    if not rows:
        raise not_found("model alias", f"{name}@{alias}")
    return rows
