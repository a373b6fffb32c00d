"""bench.procs: a process tree and its memory, read from /proc."""

from __future__ import annotations

import os
import subprocess
import sys

from bench import procs


def test_a_child_is_found_under_its_parent_and_its_memory_read():
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; print(flush=True); time.sleep(30)"], stdout=subprocess.PIPE
    )
    try:
        assert child.stdout is not None
        child.stdout.readline()  # started: its memory no longer grows between two reads
        assert procs.parent(child.pid) == os.getpid()
        assert child.pid in procs.children(os.getpid())
        assert child.pid in procs.descendants(os.getppid())
        assert procs.status_bytes(child.pid, "VmHWM") >= procs.status_bytes(child.pid, "VmRSS") > 0
    finally:
        child.kill()
        child.wait()
        child.stdout.close()  # type: ignore[union-attr]
    # Gone: no parent, no memory.
    assert procs.parent(child.pid) is None
    assert procs.status_bytes(child.pid, "VmRSS") == 0
