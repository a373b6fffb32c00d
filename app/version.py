"""The service's version, read from the installed distribution's metadata: pyproject.toml is the
one place it is written, and /healthz and the OpenAPI document show this value."""

from importlib.metadata import version

VERSION = version("pgs-solver")
