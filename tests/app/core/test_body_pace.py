"""A request body's minimum pace (PGS_MIN_BODY_BYTES_PER_S after PGS_BODY_RATE_GRACE_S):
app.core.limits.BodyPace and TimedReceive, with a scripted receive channel."""

from __future__ import annotations

import math
from pathlib import Path

import anyio
import pytest

from app.core.errors import ProblemError
from app.core.limits import BodyPace, TimedReceive
from tests.helpers import make_settings, run_async


def test_a_body_starts_a_grace_ahead_and_each_byte_buys_time():
    pace = BodyPace(bytes_per_s=100, grace_s=5)
    assert pace.may_wait_s() == 5
    pace.arrived(200, waited_s=1)  # 2 s bought, 1 s spent
    assert pace.may_wait_s() == pytest.approx(6)
    pace.arrived(1, waited_s=6.5)  # fell behind
    assert pace.may_wait_s() == 0


def test_a_trickle_falls_behind_within_the_grace():
    pace = BodyPace(bytes_per_s=1024, grace_s=10)
    pace.arrived(1, waited_s=5)  # one byte every 5 s, as in the L5 attack
    pace.arrived(1, waited_s=5)
    assert pace.may_wait_s() < 0.01


def test_no_minimum_pace():
    pace = BodyPace(bytes_per_s=0, grace_s=10)
    pace.arrived(0, waited_s=1e6)
    assert pace.may_wait_s() == math.inf


def _trickle(n: int, every_s: float):
    """A receive channel that gives one byte every ``every_s`` seconds, ``n`` times, then ends."""
    sent = 0

    async def receive():
        nonlocal sent
        await anyio.sleep(every_s)
        sent += 1
        return {"type": "http.request", "body": b"x", "more_body": sent < n}

    return receive


async def _drain(receive) -> int:
    size = 0
    while True:
        message = await receive()
        size += len(message["body"])
        if not message["more_body"]:
            return size


def test_timed_receive_answers_408_to_a_body_slower_than_the_minimum(tmp_path: Path):
    settings = make_settings(
        tmp_path, min_body_bytes_per_s=100, body_rate_grace_s=0.3, body_idle_timeout_s=60
    )
    timed = TimedReceive(_trickle(1000, every_s=0.1), settings)
    with pytest.raises(ProblemError) as raised:
        run_async(_drain(timed))
    assert raised.value.status == 408 and "PGS_MIN_BODY_BYTES_PER_S" in raised.value.detail
    assert raised.value.headers == {"Connection": "close"}


def test_timed_receive_lets_a_body_at_the_minimum_pace_through(tmp_path: Path):
    # 20 bytes/s against a minimum of 10: the pace never runs out.
    settings = make_settings(tmp_path, min_body_bytes_per_s=10, body_rate_grace_s=0.3, body_idle_timeout_s=60)
    assert run_async(_drain(TimedReceive(_trickle(10, every_s=0.05), settings))) == 10
