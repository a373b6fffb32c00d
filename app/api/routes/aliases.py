"""/v1/aliases: model aliases ``name@alias`` (set, move, delete, list) and their history.

An alias points to a version of its model name; callers use it in place of a model id
(``/v1/models/news-classifier@production/predict``). services/model_registry/versions.py has the rules.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Response

from app.api import examples
from app.api.deps import CallerDep, SessionDep, require_json
from app.api.filters import NameQuery
from app.api.openapi import BODY_GUARDS, example, problems
from app.core.errors import field_error, invalid
from app.schemas.aliases import AliasEventRead, AliasHistory, AliasList, AliasPut, AliasRead
from app.services.model_registry import versions

router = APIRouter(prefix="/v1/aliases", tags=["aliases"])

_REF = re.compile(r"^(?![0-9]+@)([A-Za-z0-9][A-Za-z0-9_.-]{0,127})@([A-Za-z][A-Za-z0-9_-]{0,63})$")


def _parse_ref(ref: Annotated[str, Path(max_length=200, description="name@alias")]) -> tuple[str, str]:
    match = _REF.match(ref)
    if match is None:
        msg = (
            "an alias is name@alias: a model name (letters, digits, '_', '.', '-'; not all "
            "digits) and an alias starting with a letter (letters, digits, '_', '-')"
        )
        raise invalid(msg, [field_error(["path", "ref"], msg)])
    return match.group(1), match.group(2)


RefDep = Annotated[tuple[str, str], Depends(_parse_ref)]


@router.get(
    "",
    response_model=AliasList,
    summary="List aliases (of one model name)",
    responses=example(200, {"items": [examples.ALIAS]}),
)
def list_aliases(session: SessionDep, caller: CallerDep, name: NameQuery = None) -> dict[str, Any]:
    return {"items": versions.list_aliases(session, caller.owner, name)}


@router.get(
    "/{ref}",
    response_model=AliasRead,
    summary="Where an alias points",
    responses={**example(200, examples.ALIAS), **problems(404)},
)
def get_alias(ref: RefDep, session: SessionDep, caller: CallerDep) -> dict[str, Any]:
    return versions.alias_read(session, versions.get_alias(session, caller.owner, *ref))


@router.put(
    "/{ref}",
    response_model=AliasRead,
    dependencies=[Depends(require_json)],
    summary="Set or move an alias to a version of its model name",
    responses={
        **example(200, examples.ALIAS),
        **problems(
            *BODY_GUARDS,
            (404, "No such model"),
            (409, "The model is not a version of that name"),
            (415, "The body is not JSON"),
        ),
    },
)
def put_alias(ref: RefDep, body: AliasPut, session: SessionDep, caller: CallerDep) -> dict[str, Any]:
    row = versions.set_alias(session, caller.owner, ref[0], ref[1], body.model_id, caller.key_id)
    session.commit()
    return versions.alias_read(session, row)


@router.delete(
    "/{ref}",
    status_code=204,
    summary="Delete an alias (recorded in its history)",
    responses=problems(*BODY_GUARDS, 404),
)
def delete_alias(ref: RefDep, session: SessionDep, caller: CallerDep) -> Response:
    versions.delete_alias(session, caller.owner, ref[0], ref[1], caller.key_id)
    session.commit()
    return Response(status_code=204)


@router.get(
    "/{ref}/history",
    response_model=AliasHistory,
    summary="Every change of an alias, oldest first",
    responses={**example(200, examples.ALIAS_HISTORY), **problems(404)},
)
def alias_history(ref: RefDep, session: SessionDep, caller: CallerDep) -> dict[str, Any]:
    events = versions.history(session, caller.owner, *ref)
    return {"items": [AliasEventRead.model_validate(e) for e in events]}
