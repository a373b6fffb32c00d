"""Slots shared fairly between owners (app/core/tenants.py), for threads that wait their turn.

A freed slot goes to the waiting owner that holds the fewest slots, and among those to the one
served least recently (then the earliest waiter): owners take turns, so a key that queued many
parses does not make a key that queued one wait for all of them.
"""

from __future__ import annotations

import itertools
import math
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager


class FairSlots:
    """At most ``total`` holders at once and at most ``per_owner`` of one owner (None: no bound)."""

    def __init__(self, total: int | None = None, per_owner: int | None = None) -> None:
        self._total = math.inf if total is None else total
        self._per_owner = math.inf if per_owner is None else per_owner
        self._held: Counter[str] = Counter()
        self._served: dict[str, int] = {}  # owner -> the grant number of its latest slot
        self._waiting: list[tuple[str, int]] = []  # (owner, ticket), in arrival order
        self._tickets = itertools.count()
        self._grants = itertools.count()
        self._changed = threading.Condition()

    @contextmanager
    def slot(self, owner: str) -> Iterator[None]:
        """Hold a slot for ``owner`` in the block, after waiting for one as long as it takes."""
        with self._changed:
            me = (owner, next(self._tickets))
            self._waiting.append(me)
            self._changed.wait_for(lambda: self._next() == me)
            self._waiting.remove(me)
            self._take(owner)
        try:
            yield
        finally:
            self._give_back(owner)

    @contextmanager
    def slot_if_free(self, owner: str) -> Iterator[bool]:
        """Hold a slot for ``owner`` in the block if one is free now and no waiter may take it
        (True); else hold none (False). Never waits: usable on an event loop."""
        with self._changed:
            free = self._held.total() < self._total and self._held[owner] < self._per_owner
            free = free and self._next() is None
            if free:
                self._take(owner)
        try:
            yield free
        finally:
            if free:
                self._give_back(owner)

    def _take(self, owner: str) -> None:
        self._held[owner] += 1
        self._served[owner] = next(self._grants)
        self._changed.notify_all()  # another slot may be free for the next waiter

    def _give_back(self, owner: str) -> None:
        with self._changed:
            self._held[owner] -= 1
            self._changed.notify_all()

    def _next(self) -> tuple[str, int] | None:
        """The waiter a free slot goes to now, if there is a free slot it may take."""
        if self._held.total() >= self._total:
            return None
        may = [w for w in self._waiting if self._held[w[0]] < self._per_owner]
        return min(may, key=lambda w: (self._held[w[0]], self._served.get(w[0], -1), w[1]), default=None)
