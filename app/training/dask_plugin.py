"""The Dask worker plugin the API registers (a module of its own: it imports distributed, which
the local deployment never loads). Workers unpickle it by reference, so this module must be
importable on every Dask worker: the workers run the service's own image or package."""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

from distributed import WorkerPlugin

log = logging.getLogger(__name__)


class WarmUp(WorkerPlugin):
    """The Numba cache dir and the kernel warm-up on every worker, including workers that join
    later (``docker compose up --scale dask-worker=N``)."""

    name = "pgs-warm-up"
    idempotent = True

    def __init__(self, numba_cache_dir: str | None) -> None:
        self.numba_cache_dir = numba_cache_dir

    def setup(self, worker: Any) -> None:
        if self.numba_cache_dir:
            # Only if the worker's own environment says nothing (the image sets it).
            os.environ.setdefault("NUMBA_CACHE_DIR", self.numba_cache_dir)
        # In a thread: setup runs on the worker's event loop, which must keep answering the
        # scheduler while kernels load (or compile, if the cache is cold).
        threading.Thread(target=_warm_up, name="pgs-warm-up", daemon=True).start()


def _warm_up() -> None:
    try:
        # What the first task would otherwise import while it deserializes run_job.
        import app.training.worker  # noqa: F401
        from solver import warm_up

        warm_up()
    except Exception:  # a failed warm-up only costs time at the first job
        log.exception("warm-up failed")
