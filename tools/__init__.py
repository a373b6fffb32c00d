"""Developer tools, each run with ``python -m tools.NAME`` from the repository root."""
