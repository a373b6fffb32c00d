"""``/v1/uploads``: the resumable uploads that :meth:`Datasets.upload` and
:meth:`Datasets.import_source` make, read and dropped by id."""

from __future__ import annotations

from pgs_client.convert import from_json
from pgs_client.operations import covers
from pgs_client.resumable import TUS
from pgs_client.schemas import UploadRead
from pgs_client.transport import Transport


class Uploads:
    def __init__(self, transport: Transport):
        self._t = transport

    @covers("GET /v1/uploads/{upload_id}")
    def get(self, upload_id: str) -> UploadRead:
        """Its state (receiving, parsing, done, failed), bytes received and, once done, its data set."""
        return from_json(UploadRead, self._t.get(f"/v1/uploads/{upload_id}"))

    @covers("DELETE /v1/uploads/{upload_id}")
    def delete(self, upload_id: str) -> None:
        """Drop an upload and the bytes received (a data set made from it stays)."""
        self._t.request("DELETE", f"/v1/uploads/{upload_id}", safe=True, headers=TUS)
