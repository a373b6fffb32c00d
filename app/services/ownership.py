"""Which objects exist for a caller (app/core/tenants.py): another owner's object is never found,
whether a path names it (404), a request body does (422 naming the field) or a list would show it."""

from __future__ import annotations

from typing import Any, TypeVar

from sqlalchemy import Select
from sqlalchemy.orm import Session

from app.core.errors import field_error, invalid, not_found
from app.core.tenants import Caller
from app.db.tables import BatchPrediction, Dataset, Job, Model, Study

Owned = TypeVar("Owned", Dataset, Job, Study, Model, BatchPrediction)


def owned_or_404(session: Session, model: type[Owned], ident: int, resource: str, caller: Caller) -> Owned:
    """The ``model`` row ``ident`` if the caller sees it; 404 otherwise, whether it is missing or
    another owner's (a caller learns nothing of what others have)."""
    row = session.get(model, ident)
    if row is None or not caller.sees(row.owner):
        raise not_found(resource, ident)
    return row


def referenced_or_422(
    session: Session, model: type[Owned], ident: int, caller: Caller, loc: list[str | int], resource: str
) -> Owned:
    """The ``model`` row a request body names (a job's data set, ...); 422 naming the field when
    it does not exist for the caller."""
    row = session.get(model, ident)
    if row is None or not caller.sees(row.owner):
        msg = f"{resource} {ident} does not exist"
        raise invalid(msg, [field_error(loc, msg)])
    return row


def visible_to(stmt: Select[Any], model: type[Owned], caller: Caller) -> Select[Any]:
    """A list's rows that exist for the caller: its owner's, or every owner's for an admin."""
    return stmt if caller.is_admin else stmt.where(model.owner == caller.owner)
