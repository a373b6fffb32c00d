"""A real S3-compatible server for the store tests: moto in server mode on 127.0.0.1.

Started by the tests that ask for it (the ``s3`` fixture of tests/conftest.py) and stopped by them.
Each test gets a bucket of its own; the credentials are throwaway ones (moto takes any), set in
the environment when the run starts (:func:`set_test_credentials`, from tests/conftest.py) so that
every process the tests start finds them the way a deployment would, through the usual ``AWS_*``
variables: the API and Dask workers, and the upload parser's forkserver, which keeps the
environment it started with.
"""

from __future__ import annotations

import itertools
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}
_buckets = itertools.count(1)


@dataclass
class S3Server:
    endpoint_url: str

    def new_store_url(self) -> str:
        """A fresh bucket (created by the store itself, as at a service's first start)."""
        return f"s3://pgs-test-{os.getpid()}-{next(_buckets)}/store"

    def settings(self) -> dict[str, str]:
        """The store settings of a service on this server."""
        return {"store_url": self.new_store_url(), "s3_endpoint_url": self.endpoint_url}


def set_test_credentials() -> None:
    for name, value in CREDENTIALS.items():
        os.environ.setdefault(name, value)


@contextmanager
def moto_server() -> Iterator[S3Server]:
    from moto.server import ThreadedMotoServer

    set_test_credentials()
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one line per request otherwise
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        yield S3Server(f"http://{host}:{port}")
    finally:
        server.stop()
