"""RFC 9457 problem details: the body of every error answer (app/core/errors.py builds them)."""

from __future__ import annotations

from typing import Any

from pydantic import (
    BaseModel,
    Field,
)

# -- errors: RFC 9457 problem details (app/core/errors.py builds them) ----------------------------


class FieldError(BaseModel):
    loc: list[str | int] = Field(description="Where: body, query, path or header, then the names")
    field: str = Field(description="loc joined with dots, e.g. body.params.sigma")
    msg: str
    type: str = Field(description="Machine-readable kind, e.g. missing, value_error")
    rule: str | None = Field(
        default=None,
        description="For a solver parameter (body.params.<name>): the values it accepts, in words, "
        "e.g. float in [1.01, 2]; for an unknown one, the parameters there are",
    )
    input: Any = Field(
        default=None,
        description="For a solver parameter: the value received (a number that is not finite as "
        '"nan", "inf" or "-inf")',
    )


class Problem(BaseModel):
    """Every error the service answers, as ``application/problem+json``."""

    type: str = Field(description="urn:pgs:problem:<kind>, or about:blank")
    title: str = Field(description="The status's reason phrase")
    status: int
    detail: str | None = Field(description="What went wrong and what to do, for a human")
    instance: str = Field(description="The request's path")


class ValidationProblem(Problem):
    """A 422: the problem, with the fields at fault when it is about named fields."""

    errors: list[FieldError] | None = Field(
        default=None, description="One entry per field at fault (absent when no field is)"
    )
