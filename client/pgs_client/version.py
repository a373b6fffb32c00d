"""The client's version, read from the installed distribution's metadata: client/pyproject.toml is
the one place it is written (``pgs --version``, ``pgs_client.__version__``, the User-Agent)."""

from importlib.metadata import version

VERSION = version("pgs-client")
