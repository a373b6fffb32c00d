"""``Client``: the service's resources behind one authenticated, retrying HTTP connection."""

from __future__ import annotations

import os
from types import TracebackType

from pgs_client.resources.account import Account
from pgs_client.resources.aliases import Aliases
from pgs_client.resources.datasets import Datasets
from pgs_client.resources.jobs import Jobs
from pgs_client.resources.models import Models
from pgs_client.resources.service import Service
from pgs_client.resources.solvers import Solvers
from pgs_client.resources.studies import Studies
from pgs_client.resources.uploads import Uploads
from pgs_client.transport import RetryPolicy, Transport

DEFAULT_URL = "http://127.0.0.1:8000"


class Client:
    """A connection to a PGS service.

    ``url`` defaults to ``$PGS_URL`` (else http://127.0.0.1:8000), ``api_key`` to
    ``$PGS_API_KEY`` (none: a service without keys). ``timeout`` bounds each HTTP request;
    ``retry`` bounds the repeats of failed ones (see :mod:`pgs_client.transport`).
    Use it as a context manager, or call :meth:`close`.
    """

    def __init__(
        self,
        url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 60.0,
        retry: RetryPolicy | None = None,
    ):
        url = url or os.environ.get("PGS_URL") or DEFAULT_URL
        api_key = api_key if api_key is not None else os.environ.get("PGS_API_KEY")
        self._transport = Transport(url, api_key, timeout, retry or RetryPolicy())
        self.datasets = Datasets(self._transport)
        self.jobs = Jobs(self._transport)
        self.models = Models(self._transport)
        self.aliases = Aliases(self._transport)
        self.studies = Studies(self._transport)
        self.solvers = Solvers(self._transport)
        self.uploads = Uploads(self._transport)
        self.account = Account(self._transport)
        self.service = Service(self._transport)

    @property
    def url(self) -> str:
        return self._transport.url

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Client({self.url!r})"
