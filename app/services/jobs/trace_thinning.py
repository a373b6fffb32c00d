"""A job's trace, thinned as its points come so that at most ``max_points`` are kept.

A pathological ``checkpoint_growth`` (1.0000001: a checkpoint at every iteration) wrote 476,000
points for one job. The points are kept at a stride that doubles whenever the budget is full
(every other kept point then goes), so the kept ones stay evenly spread over the run. Some are
never dropped: the first point, the first point that reaches each target score (so that
``time_to_target`` over the kept points is exactly the full trace's), and the last point, added
when the run ends.

Points are numbered in the order they came (``seq``, the stored trace's key), so the kept ones
keep their order; the store learns which points to add and which earlier ones to delete from
:meth:`ThinnedTrace.take`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class ThinnedTrace:
    def __init__(self, max_points: int, targets: Sequence[float], higher_is_better: bool) -> None:
        # Room for the protected points (the first and one per target) and the last, with as
        # many again for the evenly spread ones.
        if max_points < 2 * (len(targets) + 2):
            raise ValueError(
                f"max_points {max_points} leaves no room beyond the first, last and "
                f"{len(targets)} target points"
            )
        self.max_points = max_points
        self.higher_is_better = higher_is_better
        self._unreached = sorted(set(targets))
        self.kept: list[tuple[int, Any]] = []  # (seq, point), in order
        self._protected: set[int] = set()
        self._stride = 1
        self._count = 0  # points seen
        self._last: tuple[int, Any] | None = None
        self._new: dict[int, Any] = {}  # kept, not yet taken
        self._dropped: list[int] = []  # taken earlier, dropped since

    @property
    def points(self) -> list[Any]:
        return [point for _, point in self.kept]

    def add(self, point: Any) -> None:
        seq = self._count
        self._count += 1
        self._last = (seq, point)
        protected = seq == 0 or self._crosses_a_target(point)
        if not protected and seq % self._stride:
            return
        if protected:
            self._protected.add(seq)
        self.kept.append((seq, point))
        self._new[seq] = point
        # One place stays free for the last point (see finish).
        while len(self.kept) > self.max_points - 1:
            self._thin()

    def finish(self) -> None:
        """Keep the last point seen (once the run has ended)."""
        if self._last is not None and (not self.kept or self.kept[-1][0] != self._last[0]):
            self.kept.append(self._last)
            self._new[self._last[0]] = self._last[1]

    def take(self) -> tuple[list[tuple[int, Any]], list[int]]:
        """(kept points not taken before, seqs of points taken before and dropped since)."""
        new = sorted(self._new.items())
        dropped = self._dropped
        self._new, self._dropped = {}, []
        return new, dropped

    def put_back(self, seqs: Sequence[int], dropped: Sequence[int]) -> None:
        """Undo a :meth:`take` whose write failed: the points go with the next one."""
        kept = dict(self.kept)
        self._new.update({seq: kept[seq] for seq in seqs if seq in kept})
        self._dropped.extend(dropped)

    def _crosses_a_target(self, point: Any) -> bool:
        score = getattr(point, "test_score", None)
        if score is None or not self._unreached:
            return False
        reached = [t for t in self._unreached if (score >= t if self.higher_is_better else score <= t)]
        if reached:
            self._unreached = [t for t in self._unreached if t not in reached]
        return bool(reached)

    def _thin(self) -> None:
        self._stride *= 2
        keep = []
        for seq, point in self.kept:
            if seq in self._protected or seq % self._stride == 0:
                keep.append((seq, point))
            elif self._new.pop(seq, None) is None:
                self._dropped.append(seq)
        self.kept = keep
