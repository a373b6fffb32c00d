"""Progress bars (rich, from the ``cli`` extra) for uploads and for waiting on jobs and studies."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol


class Bar(Protocol):
    def update(self, completed: float, status: str = "") -> None: ...


class _Silent:
    def update(self, completed: float, status: str = "") -> None:
        pass


class _Rich:
    def __init__(self, progress: Any, task: Any):
        self._progress, self._task = progress, task

    def update(self, completed: float, status: str = "") -> None:
        self._progress.update(self._task, completed=completed, status=status)


def rich_available() -> bool:
    try:
        import rich  # noqa: F401
    except ModuleNotFoundError:
        return False
    return True


def wanted(progress: bool | None, big: bool) -> bool:
    """``progress=None`` means: a bar when it helps (big work, a terminal, rich installed)."""
    if progress is None:
        return big and sys.stderr.isatty() and rich_available()
    if progress and not rich_available():
        raise ModuleNotFoundError("progress bars need rich: pip install 'pgs-client[cli]'")
    return progress


@contextmanager
def bar(description: str, total: float, *, enabled: bool, in_bytes: bool = False) -> Iterator[Bar]:
    """A progress bar on stderr, or a silent stand-in when not ``enabled``."""
    if not enabled:
        yield _Silent()
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TransferSpeedColumn,
    )

    amount = (
        [DownloadColumn(), TransferSpeedColumn()]
        if in_bytes
        else [TaskProgressColumn(), TextColumn("{task.fields[status]}")]
    )
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        *amount,
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=False,
    ) as progress:
        yield _Rich(progress, progress.add_task(description, total=total, status=""))
