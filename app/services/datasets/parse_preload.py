"""Imported by the parse forkserver (:mod:`.parse_process`) for its side effect: the svmlight
kernel is loaded from the Numba cache (or compiled, on a cold cache) once, in the server, so
that every parse child forked from it starts with the kernel in memory. Loaded in each child, it
would cost every upload the load time and about 130 MB of address space (the JIT's), counted
against PGS_PARSE_MEMORY_BYTES."""

from app.services.datasets.svmlight_kernel import warm_up

warm_up()
