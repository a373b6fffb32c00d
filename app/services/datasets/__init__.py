"""Data sets: every way a file comes in (multipart upload, resumable upload, server-side import),
its parse in a child process, the shards it is stored as, splits, and lineage."""

import os

# Arrow's default allocators (mimalloc, jemalloc) reserve address space in arenas of a gigabyte
# and more when first used, which the parse child's RLIMIT_AS counts against its memory budget
# and refuses: Arrow allocates with the C library's malloc instead, which reserves what it uses.
# Read when Arrow first allocates, so set before any data set module reads a file.
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
