"""``/v1/aliases``: model aliases (``"name@alias"``) set, moved, deleted, and their history."""

from __future__ import annotations

import builtins
from collections.abc import Iterator

from pgs_client.convert import from_json
from pgs_client.resources import ident
from pgs_client.schemas import AliasEventRead, AliasRead, ModelRead
from pgs_client.transport import Transport


class Aliases:
    def __init__(self, transport: Transport):
        self._t = transport

    def set(self, ref: str, model: int | ModelRead) -> AliasRead:
        """Point ``name@alias`` to ``model`` (a version of ``name``); moves it if it exists."""
        response = self._t.request("PUT", f"/v1/aliases/{ref}", safe=True, json={"model_id": ident(model)})
        return from_json(AliasRead, response.json())

    def get(self, ref: str) -> AliasRead:
        return from_json(AliasRead, self._t.get(f"/v1/aliases/{ref}"))

    def list(self, name: str | None = None) -> Iterator[AliasRead]:
        params = {} if name is None else {"name": name}
        for item in self._t.get("/v1/aliases", params=params)["items"]:
            yield from_json(AliasRead, item)

    def delete(self, ref: str) -> None:
        self._t.request("DELETE", f"/v1/aliases/{ref}", safe=True)

    # builtins.list: inside the class body, `list` names the method above.
    def history(self, ref: str) -> builtins.list[AliasEventRead]:
        """Every change of the alias, oldest first (``model_id`` None: deleted)."""
        return [from_json(AliasEventRead, e) for e in self._t.get(f"/v1/aliases/{ref}/history")["items"]]
