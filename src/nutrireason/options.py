"""Settings that the command line offers, declared once on the library's own dataclasses.

A dataclass field made with :func:`setting` carries its help text, option names and bounds;
the CLI turns every such field of a stage (or of a run request) into one option, so a setting
and the option that sets it cannot drift apart, and Python callers construct the same object
the command does. Fields made without it (callbacks, loggers) are not options.
"""

from __future__ import annotations

from dataclasses import MISSING, field
from typing import Any

REQUIRED: Any = MISSING  # the default of a setting the command line must be given


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
