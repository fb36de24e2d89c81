"""The data home: everything downloaded or built lives under one directory."""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "NUTRIREASON_HOME"


def data_home() -> Path:
    """Return ``$NUTRIREASON_HOME`` or ``~/.local/share/nutrireason`` (not created here)."""
    value = os.environ.get(ENV_VAR)
    if value:
        return Path(value).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "nutrireason"


def bundles_dir() -> Path:
    """Where unpacked offline bundles live."""
    return data_home() / "bundles"


def builds_dir() -> Path:
    """Where built artifacts (annotated users, benchmark files) live."""
    return data_home() / "builds"
