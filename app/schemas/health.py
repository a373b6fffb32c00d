"""The answer of GET /healthz."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class Health(BaseModel):
    """The process answers (it says nothing of the database or the workers: /readyz does)."""

    status: Literal["ok"]
    version: str = Field(description="The service's version (of the pgs-solver distribution)")
