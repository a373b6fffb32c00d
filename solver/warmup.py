"""Compile (or load from the on-disk cache) the Numba kernels ahead of use.

Each kernel is compiled once per argument-type signature: float64 and float32 data, writable and
read-only arrays (np.load with mmap_mode="r" gives read-only ones). With ``cache=True`` the
compiled code is written next to the sources or under NUMBA_CACHE_DIR, so a new process loads it
in milliseconds instead of compiling for seconds.

Two uses:

* ``solver.compiling.compile_for``: what every engine's ``compile`` calls before the solver clock
  starts, so that a fit compiles (on a cold cache) only the kernels it runs.
* ``warm_up`` / ``python -m solver.warmup``: every kernel of every family, for the cache that
  ``make install`` and the image build ship. The command runs the families in parallel processes
  (a cold warm-up is about 100 s of CPU; one process per core divides the wall time).
"""

from __future__ import annotations

import functools
import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import is_regressor

FAMILIES = ("pgs", "gradient_descent", "kernel_pgs", "l1", "lbfgs", "sdca")


def _fits(family: str) -> list[tuple[Callable[[], Any], bool]]:
    """(a maker of a tiny estimator, whether its fit gets an eval_set): the fits that reach every
    kernel of ``family``; the eval_set also compiles the checkpoints' scoring kernels."""
    from . import estimators as e

    return {
        "pgs": [
            (lambda: e.PGSClassifier(n_iter=4, p=1.5, random_state=0), True),
            (lambda: e.PGSRegressor(n_iter=4, random_state=0), False),
        ],
        # The kernel of gd, sgd and ogd.
        "gradient_descent": [(lambda: e.OGDClassifier(n_iter=4, random_state=0), False)],
        "kernel_pgs": [(lambda: e.KernelPGSClassifier(n_iter=4, random_state=0), False)],
        # The L1 family (SMIDAS's kernel is also truncgrad's).
        "l1": [
            (lambda: e.SCDClassifier(n_iter=4, random_state=0), False),
            (lambda: e.GCDClassifier(n_iter=4, random_state=0), False),
            (lambda: e.SMIDASClassifier(n_iter=4, random_state=0), False),
        ],
        "lbfgs": [(lambda: e.LBFGSClassifier(n_iter=4, random_state=0), False)],
        "sdca": [(lambda: e.SDCAClassifier(n_iter=4, random_state=0), False)],
    }[family]


def warm_up(families: tuple[str, ...] = FAMILIES) -> None:
    """Fit tiny problems through every kernel signature of ``families`` a worker will meet."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(8, 3))
    y = np.array([0, 1] * 4)
    for dtype in (np.float64, np.float32):
        for readonly in (False, True):
            Xd = X.astype(dtype)
            Xs = sp.csr_matrix(Xd)
            if readonly:
                for arr in (Xd, Xs.data, Xs.indices, Xs.indptr):
                    arr.flags.writeable = False
            for data in (Xd, Xs):
                for family in families:
                    for make, with_eval in _fits(family):
                        est = make()
                        target = y.astype(float) if is_regressor(est) else y
                        est.fit(data, target, eval_set=(data, y) if with_eval else None)
            if "pgs" in families:
                # Training from shards through a window (the chunk's row copy): the same rows
                # as two shards, as the service's memory-mapped shards give them.
                from .shards import ShardedMatrix

                shards = ShardedMatrix(3, [8, 8], functools.partial(_same_shard, Xs, y), window=2)
                _fits("pgs")[0][0]().fit(shards, None)


def _same_shard(X: sp.csr_matrix, y: np.ndarray, i: int) -> tuple[sp.csr_matrix, np.ndarray]:
    return X, y


def main() -> None:
    """Warm every family up in parallel processes (``python -m solver.warmup``)."""
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=min(len(FAMILIES), os.cpu_count() or 1)) as pool:
        list(pool.map(warm_up, [(family,) for family in FAMILIES]))
    print(
        f"Numba kernels compiled or loaded into {os.environ.get('NUMBA_CACHE_DIR', 'the source tree')}"
        f" in {time.perf_counter() - started:.1f} s",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
