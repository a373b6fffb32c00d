"""The ``pgs`` command: :func:`main` runs it and turns the client's errors into a message on
stderr and one of the exit codes of :data:`EXIT_CODES`, for scripts."""

from __future__ import annotations

import sys

from pgs_client.errors import (
    ApiError,
    AuthError,
    ConnectionFailed,
    JobCancelled,
    JobFailed,
    NotFound,
    PgsError,
    ServiceUnavailable,
)

EXIT_FINISHED_BADLY = 1
EXIT_USAGE = 2
EXIT_REFUSED = 3
EXIT_NOT_FOUND = 4
EXIT_AUTH = 5
EXIT_UNAVAILABLE = 6

# What each code means: the CLI reference (docs/reference/cli.md) is generated from this.
EXIT_CODES = {
    0: "success",
    EXIT_FINISHED_BADLY: "a job, study or batch prediction ended failed or cancelled (`--wait`, "
    "`watch`, `batches create FILE`), or an unexpected error",
    EXIT_USAGE: "bad command line: an unknown option, a missing argument, a value the command "
    "cannot use (click's usage error)",
    EXIT_REFUSED: "the service refused the request (409, 413, 415, 422 and other 4xx)",
    EXIT_NOT_FOUND: "not found (404)",
    EXIT_AUTH: "authentication: no API key (401) or an unknown one (403)",
    EXIT_UNAVAILABLE: "the service is unavailable (503 after the retries) or unreachable",
}


def exit_code(exc: PgsError) -> int:
    if isinstance(exc, (JobFailed, JobCancelled)):
        return EXIT_FINISHED_BADLY
    if isinstance(exc, (ServiceUnavailable, ConnectionFailed)):
        return EXIT_UNAVAILABLE
    if isinstance(exc, AuthError):
        return EXIT_AUTH
    if isinstance(exc, NotFound):
        return EXIT_NOT_FOUND
    if isinstance(exc, ApiError):
        return EXIT_REFUSED
    return EXIT_FINISHED_BADLY


def _message(exc: PgsError) -> str:
    lines = [f"error: {exc}"]
    if isinstance(exc, ApiError):
        lines += [f"  {e.get('field', '')}: {e.get('msg', '')}" for e in exc.errors]
    return "\n".join(lines)


def main() -> None:
    """Console script entry point: runs the command, turns the client's errors into a message
    on stderr and an exit code."""
    try:
        import typer

        from pgs_client.cli.app import app
    except ModuleNotFoundError as exc:
        if exc.name not in ("typer", "rich", "click"):
            raise
        sys.exit(f"the pgs command needs the cli extra: pip install 'pgs-client[cli]' ({exc})")
    try:
        # get_command: click's own main (usage errors exit 2), without typer's excepthook.
        typer.main.get_command(app)(prog_name="pgs")
    except PgsError as exc:
        print(_message(exc), file=sys.stderr)
        sys.exit(exit_code(exc))
