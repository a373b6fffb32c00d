"""warm_up compiles every signature a fit meets, and a new worker process loads the compiled kernels
from Numba's disk cache instead of recompiling."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from solver import (
    GDRegressor,
    KernelPGSClassifier,
    KernelPGSRegressor,
    OGDClassifier,
    SGDClassifier,
    warm_up,
)
from solver.gradient_descent import sgd_chunk
from solver.kernel_pgs import kernel_pgs_chunk

from .problems import kernel_problem

SCRIPT = """
import json
import shutil
from solver import warm_up
from solver.pgs import pgs_chunk
from solver.losses import mean_loss
warm_up()
print(json.dumps({
    name: {"hits": sum(f.stats.cache_hits.values()), "misses": sum(f.stats.cache_misses.values())}
    for name, f in (("pgs_chunk", pgs_chunk), ("mean_loss", mean_loss))
}))
"""


def _warm_up_in_new_process(cache_dir) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir)}
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_second_process_loads_every_kernel_from_the_cache(tmp_path):
    """The cache one process writes serves every kernel to a new one (what make install's warm-up
    and the image build ship). A first process brings the tests' cache up to date with the
    sources (it only loads, when it is: compiling all into an empty one takes over a minute); a
    new process then reads a copy of it."""
    shared = os.environ["NUMBA_CACHE_DIR"]  # tests.helpers sets it
    _warm_up_in_new_process(shared)
    stats = _warm_up_in_new_process(shutil.copytree(shared, tmp_path / "cache"))
    for name, counts in stats.items():
        assert counts["misses"] == 0, f"{name} was recompiled in a new process"
        assert counts["hits"] > 0


def test_warm_up_covers_the_signatures_of_every_input_kind():
    """float32 and float64, dense and CSR, writable and read-only: no fit compiles anew."""
    warm_up()
    kernels = (sgd_chunk, kernel_pgs_chunk)
    before = [len(f.signatures) for f in kernels]
    X, y = kernel_problem()
    for dtype in (np.float32, np.float64):
        Xs = sp.csr_matrix(X.astype(dtype))
        Xd = X.astype(dtype)
        for arr in (Xs.data, Xs.indices, Xs.indptr, Xd):
            arr.flags.writeable = False
        for data in (Xs, Xd, X.astype(dtype)):
            for est in (
                GDRegressor(n_iter=3),
                SGDClassifier(n_iter=3),
                OGDClassifier(n_iter=3),
                KernelPGSClassifier(n_iter=3),
                KernelPGSRegressor(n_iter=3),
            ):
                est.fit(data, y)
    assert [len(f.signatures) for f in kernels] == before, "a fit compiled a new signature"
