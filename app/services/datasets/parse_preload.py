"""Imported by the parse forkserver (:mod:`.parse_process`) for its side effect: the svmlight
kernel and the column statistics' kernel are loaded from the Numba cache (or compiled, on a
cold cache) once, in the server, so that every parse child forked from it starts with the kernels
in memory. Loaded in each child, they would cost every upload the load time and about 130 MB of
address space (the JIT's), counted against PGS_PARSE_MEMORY_BYTES."""

from app.services.datasets import column_stats, svmlight_kernel

svmlight_kernel.warm_up()
column_stats.warm_up()
