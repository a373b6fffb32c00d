"""The data dir's owner lock: one server process per data dir with SQLite.

With SQLite (the one-host deployment) the server is the database's sole owner: its start-up
recovery takes every job still ``running`` for lost (services/jobs/leases.py). A second server
started on the same data dir would re-queue the first one's running jobs, so it must stop before
any recovery. With PostgreSQL several API processes share the database and the data dir on
purpose (their recovery only settles expired leases), and no lock is taken.

``fcntl.flock`` on a file in the data dir, held for the life of the process: the kernel
releases it when the process dies, however it dies, so a crash never leaves a stale lock.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import IO

LOCK_NAME = "server.lock"


class DataDirBusy(RuntimeError):
    """Another live server process owns the data dir."""


def lock_data_dir(data_dir: Path) -> IO[str]:
    """Take the data dir's lock (without waiting); close the returned file to release it.

    The lock is held on a read-only descriptor: a file held open for writing would keep the
    volume from being remounted read-only (a full or failing disk), which the service answers
    with 507s rather than by going down.
    """
    path = data_dir / LOCK_NAME
    path.touch(exist_ok=True)
    handle = open(path)  # noqa: SIM115 - held open for the life of the server
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        owner = handle.read().strip() or "unknown"
        handle.close()
        raise DataDirBusy(
            f"the data dir {data_dir} is in use by another server process (pid {owner}); "
            "stop it first, or give this server another PGS_DATA_DIR"
        ) from None
    # The owner's pid, for the message above; written and closed at once (see the docstring).
    path.write_text(f"{os.getpid()}\n")
    return handle
