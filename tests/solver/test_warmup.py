"""A new worker process must load the compiled kernels from Numba's disk cache, not recompile."""

from __future__ import annotations

import json
import os
import subprocess
import sys

SCRIPT = """
import json
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
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, check=True, capture_output=True,
                         text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_second_process_loads_every_kernel_from_the_cache(tmp_path):
    first = _warm_up_in_new_process(tmp_path)
    assert first["pgs_chunk"]["misses"] > 0  # compiled and written to the empty cache
    second = _warm_up_in_new_process(tmp_path)
    for name, stats in second.items():
        assert stats["misses"] == 0, f"{name} was recompiled in a new process"
        assert stats["hits"] > 0
