"""FairSlots: the parse and download slots of the upload service, shared between API keys."""

from __future__ import annotations

import threading
import time

from app.background.slots import FairSlots
from tests.helpers import JOB_TIMEOUT_S


def _take(slots: FairSlots, owner: str, order: list[str]) -> threading.Thread:
    """A thread that waits for a slot for ``owner``, notes the grant in ``order`` and lets go."""

    def run() -> None:
        with slots.slot(owner):
            order.append(owner)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def _until_waiting(slots: FairSlots, n: int) -> None:
    deadline = time.monotonic() + JOB_TIMEOUT_S  # bounds a hang; measures nothing
    while len(slots._waiting) != n:
        assert time.monotonic() < deadline, f"{len(slots._waiting)} waiting, not {n}"
        time.sleep(0.01)


def _join(threads: list[threading.Thread]) -> None:
    for thread in threads:
        thread.join(JOB_TIMEOUT_S)
        assert not thread.is_alive()


def test_a_freed_slot_goes_to_the_owner_served_least_recently():
    slots, order = FairSlots(total=1), []
    with slots.slot("a"):
        threads = []
        for owner in ("a", "a", "b"):  # b asks last
            threads.append(_take(slots, owner, order))
            _until_waiting(slots, len(threads))
    _join(threads)
    assert order == ["b", "a", "a"]


def test_a_slot_goes_first_to_the_owner_holding_fewest():
    slots, order = FairSlots(total=2), []
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with slots.slot("a"):
            holding.set()
            release.wait(JOB_TIMEOUT_S)

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    assert holding.wait(JOB_TIMEOUT_S)
    with slots.slot("b"):  # served after a, yet holding none once it lets go
        threads = []
        for owner in ("a", "b"):
            threads.append(_take(slots, owner, order))
            _until_waiting(slots, len(threads))
    _join(threads)
    release.set()
    _join([holder])
    assert order == ["b", "a"]


def test_one_owner_holds_at_most_its_share_and_others_pass_it():
    slots, order = FairSlots(per_owner=1), []
    with slots.slot("a"):
        waiting = _take(slots, "a", order)
        _until_waiting(slots, 1)
        _join([_take(slots, "b", order)])  # b is not held up by a's bound
        assert order == ["b"] and waiting.is_alive()
    _join([waiting])
    assert order == ["b", "a"]


def test_a_slot_if_free_never_waits_and_is_bounded_per_owner():
    slots = FairSlots(per_owner=2)
    with slots.slot_if_free("a") as first, slots.slot_if_free("a") as second:
        with slots.slot_if_free("a") as third, slots.slot_if_free("b") as other:
            assert (first, second, third, other) == (True, True, False, True)
    with slots.slot_if_free("a") as again:
        assert again  # the slots were given back


def test_a_waiter_of_a_full_owner_does_not_hold_up_another_owner():
    slots, order = FairSlots(per_owner=1), []
    with slots.slot("a"):
        waiter = _take(slots, "a", order)
        _until_waiting(slots, 1)
        with slots.slot_if_free("a") as mine, slots.slot_if_free("b") as other:
            assert (mine, other) == (False, True)
    _join([waiter])
    assert order == ["a"]
