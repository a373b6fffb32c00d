"""A child process that must not outlive its parent asks the kernel to kill it when the parent goes.

Linux's ``prctl(PR_SET_PDEATHSIG, SIGKILL)``: the kernel sends the signal when the parent dies,
however it dies (SIGKILL, a crash) and whatever the child is doing at that moment (a solver kernel
holding the GIL for seconds, a hung call), which no thread or polling inside the child can promise.

Two traps, both handled by the callers:

* The "parent" is the *thread* that forked the child, not its process: the signal comes when that
  thread exits, even if the process lives on. A child must therefore be started by a thread that
  lives as long as the child should (app/training/pool.py starts every worker from its
  dispatcher thread; a forkserver forks from its only thread).
* The request is made by the child after it starts: a parent that died before that is not
  noticed, so the child compares its parent pid with the one it was started by.

Elsewhere than Linux this does nothing (the service runs on Linux; see the Dockerfile).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def die_with_parent(parent_pid: int | None = None) -> bool:
    """SIGKILL this process when its parent (thread) ends; exit now if ``parent_pid`` is given and
    is no longer the parent. False where the platform has no such request."""
    if sys.platform != "linux":
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"prctl(PR_SET_PDEATHSIG): {os.strerror(errno)}")
    if parent_pid is not None and os.getppid() != parent_pid:
        os._exit(1)  # the parent died before the request: nobody would send the signal
    return True
