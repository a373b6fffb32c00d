"""``/v1/aliases``: model aliases (``"name@alias"``) set, moved, deleted, and their history."""

from __future__ import annotations

import builtins
from collections.abc import Iterator

from pgs_client.convert import from_json
from pgs_client.operations import covers
from pgs_client.resources import ident
from pgs_client.schemas import AliasEventRead, AliasRead, ModelRead
from pgs_client.transport import Transport


class Aliases:
    def __init__(self, transport: Transport):
        self._t = transport

    @covers("PUT /v1/aliases/{ref}")
    def set(self, ref: str, model: int | str | ModelRead) -> AliasRead:
        """Point ``name@alias`` to ``model`` (a version of ``name``: its id, the model, or
        another alias such as ``"name@staging"`` to promote what it points to); moves it if it
        exists."""
        response = self._t.request(
            "PUT", f"/v1/aliases/{ref}", safe=True, json={"model_id": self._model_id(model)}
        )
        return from_json(AliasRead, response.json())

    @covers("GET /v1/aliases/{ref}")
    def get(self, ref: str) -> AliasRead:
        return from_json(AliasRead, self._t.get(f"/v1/aliases/{ref}"))

    @covers("GET /v1/aliases")
    def list(self, name: str | None = None) -> Iterator[AliasRead]:
        params = {} if name is None else {"name": name}
        for item in self._t.get("/v1/aliases", params=params)["items"]:
            yield from_json(AliasRead, item)

    @covers("DELETE /v1/aliases/{ref}")
    def delete(self, ref: str) -> None:
        self._t.request("DELETE", f"/v1/aliases/{ref}", safe=True)

    # builtins.list: inside the class body, `list` names the method above.
    @covers("GET /v1/aliases/{ref}/history")
    def history(self, ref: str) -> builtins.list[AliasEventRead]:
        """Every change of the alias, oldest first (``model_id`` None: deleted)."""
        return [from_json(AliasEventRead, e) for e in self._t.get(f"/v1/aliases/{ref}/history")["items"]]

    def _model_id(self, model: int | str | ModelRead) -> int:
        """The id the alias body takes: an alias given as ``name@alias`` is resolved first."""
        if isinstance(model, str) and not model.isdigit():
            return from_json(ModelRead, self._t.get(f"/v1/models/{model}")).id
        return int(model) if isinstance(model, str) else ident(model)
