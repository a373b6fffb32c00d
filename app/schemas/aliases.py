"""Model aliases (``name@alias``) and their history."""

from __future__ import annotations

import datetime as dt

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    computed_field,
)

# -- aliases -------------------------------------------------------------------------------------


class AliasPut(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"model_id": 3}]})

    model_id: int = Field(ge=1, description="A version of the alias's model name")


class AliasRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    name: str
    alias: str
    model_id: int
    version: int | None = Field(description="The model's version within the name")
    updated_at: dt.datetime

    @computed_field(description="The reference to call: /v1/models/{ref}/predict")
    def ref(self) -> str:
        return f"{self.name}@{self.alias}"


class AliasList(BaseModel):
    items: list[AliasRead]


class AliasEventRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str
    alias: str
    model_id: int | None = Field(description="The model it points to since; null: deleted")
    previous_model_id: int | None
    principal: str = Field(description="Who changed it (the API key's principal)")
    at: dt.datetime


class AliasHistory(BaseModel):
    items: list[AliasEventRead] = Field(description="Oldest first")
