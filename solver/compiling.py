"""Compile (or load from the on-disk cache) one Numba kernel for the types of its arguments, off
the solver clock: what every engine's ``compile`` calls, so that a fit compiles (on a cold cache)
only the kernels it runs, and never on the solver clock.

Its own module, not ``solver.warmup``'s: the kernels import it when ``solver`` is imported, and
``python -m solver.warmup`` must run a module the package has not imported yet (otherwise runpy
warns "found in sys.modules after import of package 'solver'" and the module is executed twice).
"""

from __future__ import annotations

import numpy as np

# The argument kinds each kernel has been compiled or loaded for in this process (compile_for).
_READY: set[tuple] = set()


def compile_for(kernel, *args) -> None:
    """Load ``kernel`` (a Numba dispatcher) from the disk cache, or compile it, for the types of
    ``args``, without running it: what a first call would do before running (``Engine.compile``).

    Numba's own typing of the arguments in Python (``typeof_pyval``) costs about 0.5 ms per record
    argument, several milliseconds per fit, so a process remembers the kinds it has seen: a key
    at least as fine as Numba's types (dtype, dimensions, layout, writability, alignment).
    """
    key = (kernel, *map(_kind, args))
    if key in _READY:
        return
    kernel.compile(tuple(kernel.typeof_pyval(arg) for arg in args))
    _READY.add(key)


def _kind(arg) -> tuple:
    if isinstance(arg, np.ndarray):
        flags = arg.flags
        return (
            arg.dtype.str,
            arg.ndim,
            flags.c_contiguous,
            flags.f_contiguous,
            flags.writeable,
            flags.aligned,
        )
    if isinstance(arg, tuple):
        return (type(arg), *map(_kind, arg))
    return (type(arg),)
