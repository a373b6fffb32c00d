"""``python -m app``: serve with uvicorn on PGS_HOST:PGS_PORT (default 127.0.0.1:8000).

``python -m app backup DEST`` and ``python -m app restore SRC [--force]`` back the installation
the ``PGS_*`` settings name up while it serves, and restore a backup into a fresh one
(app/backup; docs/how-to/backup.md).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from app.core.config import Settings, get_settings

log = logging.getLogger("app")


def serve(settings: Settings) -> int:
    import uvicorn

    from app.core.security import BindRefused, check_bind
    from app.core.server import Server, uvicorn_options

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


def backup(settings: Settings, dest: Path) -> int:
    from app.backup.make import backup as make_backup

    done = make_backup(settings, dest)
    m = done.manifest
    print(
        f"backup {done.dest}: {m.counts.get('datasets', 0)} data sets, {m.counts.get('models', 0)} models, "
        f"{m.counts.get('batch_prediction_results', 0)} batch results, {m.counts.get('uploads', 0)} "
        f"unfinished uploads; {len(m.files)} files, {sum(e.size for e in m.files) + m.database.size} "
        f"bytes; schema {','.join(m.schema_revisions)}; {m.snapshots} snapshot(s)"
    )
    return 0


def restore(settings: Settings, source: Path, force: bool) -> int:
    from app.backup.restore import restore as run_restore

    done = run_restore(settings, source, force=force)
    m = done.manifest
    print(
        f"restored {source} ({m.created_at}, version {m.service_version}, schema "
        f"{','.join(m.schema_revisions)}): {len(m.files)} files and the database {done.database}; "
        "start the service to bring the schema up to date"
    )
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m app", description="Serve the installation the PGS_* environment names, or back it up."
    )
    commands = parser.add_subparsers(dest="command")
    commands.add_parser("serve", help="serve the API (what no command does too)")
    take = commands.add_parser(
        "backup", help="snapshot the database and the files it references, while the service runs"
    )
    take.add_argument("dest", type=Path, help="a new directory, or a file name ending in .tar")
    put = commands.add_parser("restore", help="restore a backup into a fresh installation (service stopped)")
    put.add_argument("source", type=Path, help="a backup directory or .tar")
    put.add_argument(
        "--force",
        action="store_true",
        help="replace the database and the backup's files in a non-empty target",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    settings = get_settings()
    logging.basicConfig(
        level=settings.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if args.command in (None, "serve"):
        return serve(settings)
    from app.backup.archive import BackupError

    # The migration scripts are read for their revisions: their loading is no news here.
    logging.getLogger("alembic").setLevel(logging.WARNING)
    try:
        if args.command == "backup":
            return backup(settings, args.dest)
        return restore(settings, args.source, args.force)
    except BackupError as exc:
        print(f"{args.command} failed: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
