"""Compile (or load from the on-disk cache) every Numba kernel a fit can reach, before the first job.

Each kernel is compiled once per argument-type signature: float64 and float32 data, writable and
read-only arrays (np.load with mmap_mode="r" gives read-only ones). With ``cache=True`` the
compiled code is written next to the sources or under NUMBA_CACHE_DIR, so a new worker process loads
it in milliseconds instead of compiling for seconds.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def warm_up() -> None:
    """Fit tiny problems through every kernel signature a worker will meet."""
    from .estimators import (
        GCDClassifier,
        KernelPGSClassifier,
        LBFGSClassifier,
        OGDClassifier,
        PGSClassifier,
        PGSRegressor,
        SCDClassifier,
        SMIDASClassifier,
    )

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
                PGSClassifier(n_iter=4, p=1.5, random_state=0).fit(data, y, eval_set=(data, y))
                PGSRegressor(n_iter=4, random_state=0).fit(data, y.astype(float))
                OGDClassifier(n_iter=4, random_state=0).fit(data, y)  # the kernel of gd, sgd, ogd
                KernelPGSClassifier(n_iter=4, random_state=0).fit(data, y)
                # The L1 family (SMIDAS's kernel is also truncgrad's) and L-BFGS's objective.
                for cls in (SCDClassifier, GCDClassifier, SMIDASClassifier, LBFGSClassifier):
                    cls(n_iter=4, random_state=0).fit(data, y)
