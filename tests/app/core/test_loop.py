"""app/core/loop.py: a background loop runs a pass every interval or when woken, outlives a
failing pass, and stops for good."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from app.core.loop import LoopService

# Bounds a hang; passes are expected well within it.
WAIT_S = 10.0


class Counting(LoopService):
    name = "counting"

    def __init__(self, interval_s: float, failing_passes: int = 0) -> None:
        super().__init__(interval_s)
        self.passes = 0
        self.failing_passes = failing_passes
        self.ran = threading.Event()

    def run_once(self) -> None:
        self.passes += 1
        self.ran.set()
        if self.passes <= self.failing_passes:
            raise RuntimeError(f"pass {self.passes} fails")


def _until(check, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def test_a_pass_waits_for_the_interval_or_a_wake():
    loop = Counting(interval_s=3600)
    loop.start()
    try:
        assert not loop.ran.wait(0.2)  # the first pass is an interval away
        loop.wake()
        assert loop.ran.wait(WAIT_S)
        assert loop.passes == 1
    finally:
        loop.stop()


def test_a_failing_pass_is_logged_and_the_loop_goes_on(caplog: pytest.LogCaptureFixture):
    loop = Counting(interval_s=0.01, failing_passes=2)
    with caplog.at_level(logging.ERROR, logger="app.core.loop"), loop:
        _until(lambda: loop.passes >= 4, "passes after the failing ones")
    failures = [r for r in caplog.records if r.getMessage() == "counting failed"]
    assert len(failures) == 2 and all(r.exc_info for r in failures)


def test_stop_ends_the_loop_for_good():
    loop = Counting(interval_s=0.01)
    with loop:
        _until(lambda: loop.passes >= 1, "a first pass")
    assert loop._thread is not None and not loop._thread.is_alive()
    done = loop.passes
    loop.wake()
    time.sleep(0.1)
    assert loop.passes == done
