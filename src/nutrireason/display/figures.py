"""The figures' canvas: deterministic PNG and SVG files and the :class:`Plot` a report embeds.

Deterministic output: figures are drawn on the Agg canvas directly (no GUI backend, no pyplot
state, the process-wide backend is left alone), with fixed sizes and DPI, ``svg.hashsalt`` set to
"nutrireason" (in an ``rc_context``), no date in the SVG metadata and text kept as SVG ``<text>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from nutrireason.storage import atomic_path

DPI = 100
RC = {"svg.hashsalt": "nutrireason", "svg.fonttype": "none", "font.size": 9,
      "axes.spines.top": False, "axes.spines.right": False}
PNG_METADATA = {"Software": None}
SVG_METADATA = {"Date": None, "Creator": None}
COLORS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860")
LINESTYLES = ("-", "--", ":", "-.")


@dataclass
class Plot:
    """A figure written as PNG and SVG."""

    name: str
    title: str
    png: Path
    svg: Path

    def inline_svg(self) -> str:
        """The SVG for embedding in HTML: no XML prolog, DOCTYPE or RDF metadata block."""
        text = self.svg.read_text(encoding="utf-8")
        text = re.sub(r"<\?xml[^>]*\?>\s*", "", text)
        text = re.sub(r"<!DOCTYPE[^>]*>\s*", "", text)
        text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.S)
        return text.strip()


LABEL_WIDTH = 22  # characters per line of a wrapped bar label


def wrap_label(text: str, width: int = LABEL_WIDTH) -> str:
    """``text`` on lines of at most ``width`` characters, broken after "/", "-", "_" or a
    space where it can be, so that long model names stay readable beside a bar."""
    lines: list[str] = []
    line = ""
    for piece in re.split(r"(?<=[/\-_ ])", text):
        while len(piece) > width:  # a piece with no break point: cut it
            if line:
                lines.append(line)
                line = ""
            lines.append(piece[:width])
            piece = piece[width:]
        if len(line) + len(piece) > width and line:
            lines.append(line)
            line = ""
        line += piece
    if line:
        lines.append(line)
    return "\n".join(part.rstrip() for part in lines)


def row_labels(frame: pd.DataFrame) -> list[str]:
    """A label per row: the method, and the model (wrapped) when the rows have several."""
    if frame["model"].nunique() > 1:
        return [f"{wrap_label(m)}\n{wrap_label(model)}"
                for m, model in zip(frame["method"], frame["model"], strict=True)]
    return [wrap_label(m) for m in frame["method"]]


def save_figure(figure: Figure, out: Path, name: str, title: str) -> Plot:
    """Write ``figure`` as ``<name>.png`` and ``<name>.svg`` under ``out``, deterministically."""
    FigureCanvasAgg(figure)
    png, svg = out / f"{name}.png", out / f"{name}.svg"
    with matplotlib.rc_context(RC):
        with atomic_path(png) as tmp:
            figure.savefig(tmp, format="png", dpi=DPI, metadata=PNG_METADATA)
        with atomic_path(svg) as tmp:
            figure.savefig(tmp, format="svg", metadata=SVG_METADATA)
    return Plot(name, title, png, svg)
