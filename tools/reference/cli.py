"""docs/reference/cli.md: every command and subcommand of ``pgs`` (the client's typer app), with
its arguments and options as its ``--help`` gives them, and the exit codes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tools.reference.markdown import code, header, table

INTRO = """\
`pgs [--url URL] [--api-key KEY] COMMAND ...` runs an operation of the service from a shell; the
[client's README](../../client/README.md) shows it at work. Install it with
`pip install './client[cli]'`. Every command prints a table (or a record) for people, and with
`--json` the API's objects as JSON for scripts; errors and the warnings of a fit that learned
nothing go to stderr. A MODEL argument is a model id or `name@alias`; data sets, jobs, studies
and batch predictions are named by id. `--help` on any command prints what its section here
says."""

# click's own option, on every command: said once in the introduction.
_HELP_OPTION = "--help"


def page() -> str:
    import typer
    from pgs_client.cli import EXIT_CODES
    from pgs_client.cli.app import app

    root = typer.main.get_command(app)
    context = _context(root, "pgs", None)
    commands = list(_walk(root, context))
    index = table(
        ["command", "what it does"],
        [
            [f"[{code(path)}](#{_anchor(path)})", _first_paragraph(cmd)]
            for path, cmd, _ in commands
            if _runs(cmd)
        ],
    )
    exits = table(["code", "meaning"], [[code(n), meaning] for n, meaning in sorted(EXIT_CODES.items())])
    sections = [_section(path, cmd, ctx) for path, cmd, ctx in commands]
    return (
        header("The pgs command", "the client's typer app (client/pgs_client/cli/)", INTRO)
        + "\n## Options of every command\n\n"
        + _parameters(root, context)
        + "\n## Exit codes\n\n"
        + exits
        + "\n## Commands\n\n"
        + index
        + "\n"
        + "\n".join(sections)
    )


def _context(command: Any, name: str, parent: Any) -> Any:
    from typer._click.core import Context

    return Context(command, info_name=name, parent=parent)


def _walk(group: Any, context: Any, path: str = "pgs") -> Iterator[tuple[str, Any, Any]]:
    """(``pgs datasets upload``, its command, its context) for every group and command below
    ``group``, in the order ``--help`` lists them."""
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        sub = _context(command, name, context)
        yield f"{path} {name}", command, sub
        if hasattr(command, "list_commands"):
            yield from _walk(command, sub, f"{path} {name}")


def _runs(command: Any) -> bool:
    """A command that does something, not a group of them."""
    return not hasattr(command, "list_commands")


def _section(path: str, command: Any, context: Any) -> str:
    level = "##" if path.count(" ") == 1 else "###"
    title = f"{level} {path}\n\n"
    if not _runs(command):
        return title + _help(command) + "\n"
    arguments = [p for p in command.get_params(context) if p.param_type_name == "argument"]
    usage = " ".join([path, "[OPTIONS]", *(_argument_usage(p) for p in arguments)])
    return title + f"{code(usage)}\n\n" + _help(command) + "\n\n" + _parameters(command, context)


def _parameters(command: Any, context: Any) -> str:
    rows = []
    for param in command.get_params(context):
        record = param.get_help_record(context)
        if record is None or record[0] == _HELP_OPTION:
            continue
        name, text = record
        if param.param_type_name == "argument":
            name = _argument_name(param)
        rows.append([code(name), _escape(text)])
    return table(["argument or option", "what it does"], rows) if rows else "No options.\n"


def _argument_name(param: Any) -> str:
    return str(param.metavar or param.name.upper())


def _argument_usage(param: Any) -> str:
    return _argument_name(param) if param.required else f"[{_argument_name(param)}]"


def _help(command: Any) -> str:
    """The command's help, its lines joined into paragraphs."""
    return "\n\n".join(_paragraphs(command))


def _first_paragraph(command: Any) -> str:
    return _paragraphs(command)[0]


def _paragraphs(command: Any) -> list[str]:
    return [_escape(" ".join(p.split())) for p in (command.help or "").strip().split("\n\n")]


def _escape(text: str) -> str:
    """Help text as Markdown shows it: ``<`` would open an HTML tag."""
    return text.replace("<", "&lt;")


def _anchor(path: str) -> str:
    """The heading's anchor, as GitHub names it."""
    return path.replace(" ", "-")
