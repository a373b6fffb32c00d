"""A server's processes and their memory, read from /proc (Linux): what the benchmarks that
watch a running service (soak, hostile uploads, the inverse time dependency at scale) measure."""

from __future__ import annotations

import contextlib
from pathlib import Path


def parent(pid: int) -> int | None:
    """The parent of process ``pid``, None once it has exited."""
    with contextlib.suppress(OSError, IndexError, ValueError):
        # The parent pid is the 2nd field after the command, which is in parentheses.
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    return None


def children(pid: int) -> list[int]:
    return sorted(
        int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and parent(int(p.name)) == pid
    )


def descendants(pid: int) -> list[int]:
    todo, found = [pid], []
    while todo:
        below = children(todo.pop())
        found += below
        todo += below
    return found


def status_bytes(pid: int, field: str) -> int:
    """A memory field of /proc/<pid>/status (VmRSS, VmHWM, ...) in bytes; 0 once it has exited."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def reset_peak(pid: int) -> None:
    """Reset process ``pid``'s VmHWM to its current resident size."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")
