"""Data sets: every way a file comes in (multipart upload, resumable upload, server-side import),
its parse in a child process, the shards it is stored as, splits, and lineage."""
