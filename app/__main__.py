"""``python -m app``: serve with uvicorn on PGS_HOST:PGS_PORT (default 127.0.0.1:8000)."""

from __future__ import annotations

import logging
import os
import sys

import uvicorn

from app.core.config import get_settings
from app.core.security import BindRefused, check_bind
from app.core.server import Server, uvicorn_options

log = logging.getLogger("app")


def main() -> int:
    settings = get_settings()
    logging.basicConfig(
        level=settings.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        check_bind(settings)
    except BindRefused as exc:
        log.error("%s", exc)
        return 2
    # Worker processes inherit the environment: one compiled-kernel cache for all of them.
    if settings.numba_cache_dir is not None:
        os.environ.setdefault("NUMBA_CACHE_DIR", str(settings.numba_cache_dir))
    config = uvicorn.Config(
        "app.main:create_app",
        factory=True,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level.lower(),
        # One server process owns the database and the pool (see services.leases.recover_on_startup).
        workers=1,
        **uvicorn_options(settings),
    )
    Server(config).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
