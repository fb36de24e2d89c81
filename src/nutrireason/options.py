"""Settings that the command line offers, declared once on the library's own dataclasses.

A dataclass field made with :func:`setting` carries its help text, option names and bounds;
the CLI turns every such field of a stage (or of a run request) into one option
(:func:`command_parameters`), so a setting
and the option that sets it cannot drift apart, and Python callers construct the same object
the command does. Fields made without it (callbacks, loggers) are not options.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from dataclasses import MISSING, field
from typing import Annotated, Any

REQUIRED: Any = MISSING  # the default of a setting the command line must be given

# Help texts that settings of several commands share (one wording per meaning).
OUT = "Output directory."
RECIPES = "A `recipes build` directory (default: the last one)."
CONCURRENCY = "Samples in flight at once."
MAX_TOKENS = "Output token budget per call."
LIMIT = "Only the first N items."
HOST = "Address to bind; other than loopback needs --token."
PORT = "Port."
TOKEN = "Required on every request (`?token=` once)."


def setting(help: str, default: Any = None, *names: str, argument: bool = False,
            **bounds: Any) -> Any:
    """A dataclass field that is also a command-line option (or, with ``argument``, a
    positional argument): ``names`` replace the option name made from the field's
    (``--proposer``), ``bounds`` go to the option as they are (``min=1``)."""
    return field(default=default, metadata={"help": help, "names": names,
                                            "argument": argument, "bounds": bounds})


def is_setting(metadata: Any) -> bool:
    """True for the metadata of a field made with :func:`setting`."""
    return "help" in metadata and "bounds" in metadata


def command_parameters(options: type) -> list[inspect.Parameter]:
    """The parameters of a command that takes one typer option (or argument) per
    :func:`setting` field of the dataclass ``options``, in field order."""
    import typer

    hints = typing.get_type_hints(options)
    params = []
    for item in dataclasses.fields(options):
        meta = item.metadata
        if not is_setting(meta):
            continue
        info = typer.Argument(help=meta["help"]) if meta["argument"] else \
            typer.Option(*meta["names"], help=meta["help"], **meta["bounds"])
        default = inspect.Parameter.empty if item.default is REQUIRED else item.default
        params.append(inspect.Parameter(item.name, inspect.Parameter.KEYWORD_ONLY,
                                        default=default,
                                        annotation=Annotated[hints[item.name], info]))
    return params
