"""The local worker pool (app/training/pool.py) with real worker processes and tiny tasks: a dead
worker fails only its own task and is replaced, a worker that cannot start is reported (and not
retried in a tight loop), and a stop ends every worker, busy ones after the grace."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from collections.abc import Iterator
from concurrent.futures import CancelledError
from pathlib import Path

import pytest

from app.training import pool as pool_module
from app.training.pool import WorkerDied, WorkerPool
from tests.cluster.harness import wait_until

CTX = multiprocessing.get_context("spawn")


def no_setup() -> None:
    pass


def failing_setup() -> None:
    raise RuntimeError("no solver here")


def pid_after(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


def write_pid_and_wait(path: str, seconds: float, go: str | None = None) -> int:
    """Write this worker's pid to ``path``, then wait ``seconds`` or until the file ``go`` exists."""
    Path(path).write_text(str(os.getpid()))
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not (go and Path(go).exists()):
        time.sleep(0.05)
    return os.getpid()


@pytest.fixture
def pool() -> Iterator[WorkerPool]:
    p = WorkerPool(CTX, max_workers=2, initializer=no_setup)
    yield p
    p.shutdown(wait=True, cancel_futures=True)


def _pid_written(path: Path) -> int:
    wait_until(lambda: path.exists() and path.read_text(), 60, f"{path.name} written")
    return int(path.read_text())


def test_a_dead_worker_fails_only_its_own_task_and_is_replaced(pool: WorkerPool, tmp_path: Path):
    go = tmp_path / "go"
    victim = pool.submit(write_pid_and_wait, str(tmp_path / "victim"), 60)
    bystander = pool.submit(write_pid_and_wait, str(tmp_path / "bystander"), 60, str(go))
    victim_pid, bystander_pid = _pid_written(tmp_path / "victim"), _pid_written(tmp_path / "bystander")
    os.kill(victim_pid, signal.SIGKILL)
    with pytest.raises(WorkerDied) as died:
        victim.result(timeout=30)
    assert died.value.pid == victim_pid and not died.value.stopped
    assert "SIGKILL" in str(died.value)
    # The other worker was running its task all along and finishes it, in the same process.
    assert not bystander.done()
    go.touch()
    assert bystander.result(timeout=30) == bystander_pid
    # A new worker took the dead one's place; the survivor still serves.
    wait_until(lambda: len(pool.worker_pids()) == 2, 30, "the dead worker replaced")
    assert victim_pid not in pool.worker_pids() and bystander_pid in pool.worker_pids()
    assert {pool.submit(pid_after, 0.5).result(timeout=30) for _ in range(2)} <= set(pool.worker_pids())
    assert pool.problem() is None


def test_a_worker_that_cannot_start_is_reported_and_retried_with_pauses(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(pool_module, "START_RETRY_S", 0.2)
    p = WorkerPool(CTX, max_workers=1, initializer=failing_setup)
    try:
        task = p.submit(pid_after, 0)
        wait_until(lambda: p.problem(), 60, "the start failure reported")
        assert "RuntimeError: no solver here" in str(p.problem())
        # The task waits for a worker instead of failing: it is not to blame.
        time.sleep(1.0)
        assert not task.done()
        # Pauses that double: about 0.2 + 0.4 + 0.8 s between the first starts, not a spin.
        assert p._start_failures <= 4
    finally:
        p.shutdown(wait=True, cancel_futures=True)
    assert task.cancelled()


def test_shutdown_ends_idle_workers_and_kills_one_still_busy_after_the_grace(
    pool: WorkerPool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(pool_module, "STOP_GRACE_S", 0.5)
    assert pool.submit(pid_after, 0).result(timeout=60)
    busy = pool.submit(write_pid_and_wait, str(tmp_path / "busy"), 600)
    waiting = [pool.submit(pid_after, 0) for _ in range(3)]
    _pid_written(tmp_path / "busy")
    pids = pool.worker_pids()
    started = time.monotonic()
    pool.shutdown(wait=True, cancel_futures=True)
    assert time.monotonic() - started < 30  # not the busy task's 600 s
    with pytest.raises(WorkerDied) as died:
        busy.result(timeout=0)
    assert died.value.stopped
    for future in waiting:  # never handed out, or run by the idle worker before it went
        assert future.cancelled() or future.result(timeout=0)
    assert not any(Path(f"/proc/{pid}").exists() for pid in pids)
    with pytest.raises(RuntimeError):
        pool.submit(pid_after, 0)


def test_a_cancelled_task_is_not_run(pool: WorkerPool):
    first = pool.submit(pid_after, 1)
    second = pool.submit(pid_after, 1)
    third = pool.submit(pid_after, 0)
    assert third.cancel()
    assert first.result(timeout=60) and second.result(timeout=60)
    with pytest.raises(CancelledError):
        third.result(timeout=0)
