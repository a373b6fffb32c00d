"""Resumable uploads and imports (``/v1/uploads``), until and after they become data sets."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import (
    BaseModel,
    Field,
)


class UploadError(BaseModel):
    status: int = Field(description="The HTTP status the failure would have had")
    detail: str


class UploadRead(BaseModel):
    """A resumable upload or an import, until (and after) it becomes a data set."""

    id: str
    state: Literal["receiving", "parsing", "done", "failed"] = Field(
        description="receiving: taking bytes (tus PATCH); parsing: being fetched, parsed and "
        "stored; done: dataset_id is the data set; failed: error says why (a failed upload can "
        "be finished again)"
    )
    length: int = Field(
        description="Bytes declared (tus Upload-Length); for an import, its "
        "size once done (a URL's cap while it is fetched)"
    )
    offset: int = Field(description="Bytes received so far")
    filename: str
    source: str | None = Field(default=None, description="An import's path or URL")
    created_at: dt.datetime
    expires_at: dt.datetime = Field(description="When an unfinished upload is deleted")
    dataset_id: int | None = None
    error: UploadError | None = None
