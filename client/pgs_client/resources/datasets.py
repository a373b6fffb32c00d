"""``/v1/datasets``: upload files or in-memory (X, y), list, read, edit, delete."""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any, BinaryIO

from pgs_client import data, frames
from pgs_client.convert import from_json
from pgs_client.operations import UPLOAD_OPERATIONS, covers
from pgs_client.progress import Bar, bar, wanted
from pgs_client.resources import ident, labels
from pgs_client.resumable import RESUMABLE_BYTES, Uploader
from pgs_client.schemas import ColumnPage, ColumnStatsRead, DatasetRead
from pgs_client.transport import Transport

# Files at least this big get a progress bar by default (on a terminal, with rich installed).
BIG_FILE_BYTES = 16 * 1024 * 1024


class _Reading:
    """A file that reports how much of it httpx has read (for the upload's progress bar)."""

    def __init__(self, file: BinaryIO, bar: Bar):
        self._file, self._bar = file, bar

    def read(self, size: int = -1) -> bytes:
        chunk = self._file.read(size)
        self._bar.update(self._file.tell())
        return chunk

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._file.seek(offset, whence)

    def tell(self) -> int:
        return self._file.tell()

    def fileno(self) -> int:
        return self._file.fileno()


def _file_of(
    source: Any, compress: bool, labelled: bool, directory: Path
) -> tuple[Path, str, dict[str, str]]:
    """The file an upload sends, its name, and the form fields it sets: ``(X, y)``, a
    DataFrame and (``labelled`` false) rows ``X`` written into ``directory``, a file as it is
    (gzipped there with ``compress``)."""
    if not labelled and not isinstance(source, (str, os.PathLike)):
        if isinstance(source, tuple):
            raise ValueError("labelled=False uploads rows without labels: pass X, not (X, y)")
        path, fields = data.write_upload(source, None, directory)
        return path, path.name, fields
    if isinstance(source, tuple):
        X, y = source
        path, fields = data.write_upload(X, y, directory)
        return path, path.name, fields
    if frames.is_frame(source):
        path = data.write_frame(source, directory)
        return path, path.name, {"format": "csv", "header": "true"}
    path = Path(source)
    if compress and not data.is_gzip(path):
        return data.gzip_file(path, directory), path.name, {}
    return path, path.name, {}


class Datasets:
    def __init__(self, transport: Transport):
        self._t = transport

    @covers(*UPLOAD_OPERATIONS)
    def upload(
        self,
        source: Any,
        name: str | None = None,
        *,
        format: str = "auto",
        label_column: str | int | None = None,
        header: str = "auto",
        zero_based: str = "auto",
        task: str = "auto",
        n_features: int | None = None,
        na_values: Sequence[str] | None = None,
        description: str | None = None,
        tags: Sequence[str] | None = None,
        labelled: bool = True,
        compress: bool = False,
        progress: bool | None = None,
        resumable: bool | None = None,
        idempotency_key: str | None = None,
    ) -> DatasetRead:
        """Upload a svmlight/LIBSVM or CSV file (plain, gzip, bzip2 or xz), or ``(X, y)`` in
        memory. ``n_features``: the width to store (a test set's: its training set's).
        ``na_values``: the CSV cells that are missing values, instead of the service's default
        (``NA``, ``N/A``, ``NaN``, ``nan``, ``null``, ``NULL``, ``None``; an empty cell is
        always missing).

        A pandas DataFrame: sent as a gzip CSV with its header, ``label_column`` naming its
        label column (default: the last); the service types the columns as it does a CSV
        file's (text, numbers, empty cells for NaN, None and ``pd.NA``; booleans as 1/0).
        ``(X, y)``: X as in :mod:`pgs_client.data` (a DataFrame, NumPy, SciPy sparse, lists of
        rows or of dicts keyed by feature name), y the labels; a DataFrame or named dicts go as
        CSV with a header and the labels last, numbers as gzip svmlight, string labels, text or
        missing cells as CSV. ``labelled=False``: rows without labels, to predict in a batch
        (:meth:`~pgs_client.resources.models.Models.predict_batch` does it all): ``source`` is
        a file without a label column (an svmlight line's leading label is not kept) or ``X``
        alone; no job trains on the data set. ``compress`` gzips a plain file
        on the way (the service reads both). ``progress``: a bar on stderr; by default for files
        of 16 MiB and more on a terminal. The request carries an ``Idempotency-Key`` (a fresh
        one unless given): a retry after a lost connection returns the first data set instead of
        storing a second. ``resumable``: send the file in chunks that survive a dropped
        connection (:mod:`pgs_client.resumable`; running the same upload again resumes it too);
        by default for files of 64 MiB and more. The other arguments are the service's form
        fields.
        """
        fields = {"format": format, "header": header, "zero_based": zero_based, "task": task}
        if label_column is not None:
            fields["label_column"] = str(label_column)
        if n_features is not None:
            fields["n_features"] = str(n_features)
        if tags:
            fields["tags"] = ",".join(tags)
        if na_values is not None:
            fields["na_values"] = ",".join(na_values)
        if description is not None:
            fields["description"] = description
        if not labelled:
            fields["labelled"] = "false"
        with tempfile.TemporaryDirectory(prefix="pgs-upload-") as tmp:
            path, filename, written = _file_of(source, compress, labelled, Path(tmp))
            fields.update(written)
            if name is not None:
                fields["name"] = name
            size = path.stat().st_size
            if resumable if resumable is not None else size >= RESUMABLE_BYTES:
                return self._send_resumable(path, filename, fields, progress)
            return self._send(path, filename, fields, progress, idempotency_key or str(uuid.uuid4()))

    def _send_resumable(
        self, path: Path, filename: str, fields: dict[str, str], progress: bool | None
    ) -> DatasetRead:
        size = path.stat().st_size
        uploader = Uploader(self._t)
        with bar(
            f"upload {filename}", size, enabled=wanted(progress, size >= BIG_FILE_BYTES), in_bytes=True
        ) as bar_:
            location = uploader.send(path, filename, bar_)
        upload = uploader.finish(location, fields)
        uploader.forget(path)
        return self.get(upload["dataset_id"])

    @covers("POST /v1/datasets/import", "GET /v1/uploads/{upload_id}")
    def import_source(
        self,
        source: str,
        name: str | None = None,
        **fields: str | int,
    ) -> DatasetRead:
        """Have the service read a data set from a path or URL its operator allows
        (``PGS_IMPORT_ROOTS``) and wait for the parse. ``fields``: as :meth:`upload`'s
        (``format``, ``label_column``, ``task``, ``n_features``, ``description``; ``tags``
        and ``na_values`` as comma-separated strings)."""
        body: dict[str, Any] = {"source": source, **{k: str(v) for k, v in fields.items()}}
        if name is not None:
            body["name"] = name
        r = self._t.request("POST", "/v1/datasets/import", safe=False, json=body)
        upload = Uploader(self._t).wait(r.headers["Location"])
        return self.get(upload["dataset_id"])

    def _send(
        self, path: Path, filename: str, fields: dict[str, str], progress: bool | None, idempotency_key: str
    ) -> DatasetRead:
        size = path.stat().st_size
        show = wanted(progress, size >= BIG_FILE_BYTES)
        with ExitStack() as stack:
            bar_ = stack.enter_context(bar(f"upload {filename}", size, enabled=show, in_bytes=True))

            def body() -> dict[str, Any]:
                # A fresh file per attempt: a retry (connection refused, 503) sends it again.
                file = stack.enter_context(path.open("rb"))
                return {"files": {"file": (filename, _Reading(file, bar_))}, "data": fields}

            response = self._t.request(
                "POST", "/v1/datasets", safe=False, idempotency_key=idempotency_key, build=body
            )
        return from_json(DatasetRead, response.json())

    @covers("GET /v1/datasets/{dataset_id}")
    def get(self, dataset: int | DatasetRead) -> DatasetRead:
        return from_json(DatasetRead, self._t.get(f"/v1/datasets/{ident(dataset)}"))

    @covers("GET /v1/datasets/{dataset_id}/columns")
    def columns(self, dataset: int | DatasetRead, *, page_size: int = 1000) -> Iterator[ColumnStatsRead]:
        """Each column's statistics (count, missing, mean, std, min, max, max-abs; a text
        column's most frequent values), fetched a page at a time: every column of a CSV, Parquet
        or Arrow data set, the columns that occur in an svmlight one."""
        offset = 0
        while True:
            page = from_json(
                ColumnPage,
                self._t.get(
                    f"/v1/datasets/{ident(dataset)}/columns", params={"offset": offset, "limit": page_size}
                ),
            )
            yield from page.items
            offset += len(page.items)
            if not page.items or offset >= page.total:
                return

    @covers("GET /v1/datasets")
    def list(
        self,
        limit: int | None = None,
        *,
        name: str | None = None,
        tag: str | Sequence[str] | None = None,
        search: str | None = None,
        sort: str | None = None,
        page_size: int = 100,
    ) -> Iterator[DatasetRead]:
        """Data sets, newest first (or in ``sort``'s order: ``name``, ``-n_samples``, ...),
        fetched a page at a time (all of them, or ``limit``); only those named ``name``, with
        every tag of ``tag``, whose name contains ``search`` (any case) when given."""
        return self._t.pages(
            "/v1/datasets",
            lambda d: from_json(DatasetRead, d),
            limit,
            page_size,
            name=name,
            tag=tag,
            q=search,
            sort=sort,
        )

    @covers("PATCH /v1/datasets/{dataset_id}")
    def update(
        self,
        dataset: int | DatasetRead,
        *,
        name: str | None = None,
        description: str | None = None,
        tags: Sequence[str] | None = None,
        task: str | None = None,
    ) -> DatasetRead:
        """Rename, describe, tag, or correct the task ("classification" or "regression")."""
        body = labels(description, tags, name=name, task=task)
        response = self._t.request("PATCH", f"/v1/datasets/{ident(dataset)}", safe=True, json=body)
        return from_json(DatasetRead, response.json())

    @covers("DELETE /v1/datasets/{dataset_id}")
    def delete(self, dataset: int | DatasetRead, *, force: bool = False) -> None:
        """Delete a data set (:class:`~pgs_client.errors.Conflict` while a job uses it, or
        models or studies come from it unless ``force``: the models keep its metadata)."""
        params = {"force": "true"} if force else {}
        self._t.request("DELETE", f"/v1/datasets/{ident(dataset)}", safe=True, params=params)
