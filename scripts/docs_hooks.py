"""MkDocs hook: the command-line reference page is generated from the commands themselves.

``docs/reference/cli.md`` holds the marker ``<!-- cli-reference -->``; on build it becomes one
section per ``nutrireason`` command with its help text and a table of its arguments and
options, read from the Typer app (:func:`cli_reference`), so the page cannot drift from the
code.
"""

from __future__ import annotations

from typing import Any

MARKER = "<!-- cli-reference -->"


def _cell(text: Any) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _commands(command: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    found = [(path, command)]
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        found += _commands(sub, (*path, name))
    return found


def _parameter_row(param: Any) -> str:
    names = ", ".join(f"`{n}`" for n in (*param.opts, *param.secondary_opts))
    if param.param_type_name == "argument":
        names = f"`{param.name.upper()}`"
    kind = param.bare_type() if callable(getattr(param, "bare_type", None)) else ""
    if getattr(param, "is_flag", False) or kind == "bool":
        kind = "flag"
    default = "" if param.required or param.default in (None, False, ()) else \
        f"`{param.default}`"
    required = "yes" if param.required else ""
    return (f"| {names} | {_cell(kind)} | {_cell(getattr(param, 'help', '') or '')} | "
            f"{default} | {required} |")


def cli_reference() -> str:
    """Markdown for every command of the ``nutrireason`` app."""
    import typer

    from nutrireason.cli import app

    root = typer.main.get_command(app)
    parts = []
    for path, command in _commands(root):
        title = " ".join(("nutrireason", *path))
        parts.append(f"## `{title}`\n")
        parts.append(_cell(command.help or "").strip() + "\n")
        params = [p for p in command.params if p.name not in ("help",)]
        if getattr(command, "commands", None):
            names = ", ".join(f"`{name}`" for name in sorted(command.commands))
            parts.append(f"Commands: {names}.\n")
        if params:
            parts.append("| Argument or option | Type | Help | Default | Required |")
            parts.append("|---|---|---|---|---|")
            parts += [_parameter_row(p) for p in params]
            parts.append("")
    return "\n".join(parts)


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if MARKER in markdown:
        return markdown.replace(MARKER, cli_reference())
    return markdown
