"""Report figures: efficiency per method (NGQA Figure 4) and retrieval P/R/F1 (Figure 5).

Deterministic output: figures are drawn on the Agg canvas directly (no GUI backend, no pyplot
state, the process-wide backend is left alone), with fixed sizes and DPI, ``svg.hashsalt`` set to
"nutrireason" (in an ``rc_context``), no date in the SVG metadata and text kept as SVG ``<text>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from nutrireason.io import atomic_path

DPI = 100
RC = {"svg.hashsalt": "nutrireason", "svg.fonttype": "none", "font.size": 9,
      "axes.spines.top": False, "axes.spines.right": False}
PNG_METADATA = {"Software": None}
SVG_METADATA = {"Date": None, "Creator": None}
COLORS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860")


@dataclass
class Plot:
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


def _labels(frame: pd.DataFrame) -> list[str]:
    if frame["model"].nunique() > 1:
        return [f"{m}\n{model}" for m, model in zip(frame["method"], frame["model"], strict=True)]
    return list(frame["method"])


def _save(figure: Figure, out: Path, name: str, title: str) -> Plot:
    FigureCanvasAgg(figure)
    png, svg = out / f"{name}.png", out / f"{name}.svg"
    with matplotlib.rc_context(RC):
        with atomic_path(png) as tmp:
            figure.savefig(tmp, format="png", dpi=DPI, metadata=PNG_METADATA)
        with atomic_path(svg) as tmp:
            figure.savefig(tmp, format="svg", metadata=SVG_METADATA)
    return Plot(name, title, png, svg)


def efficiency_plot(data: pd.DataFrame, out: Path) -> Plot | None:
    """Calls per sample, prompt tokens and latency per method, one panel each (Figure 4)."""
    if data.empty:
        return None
    panels = (("calls_per_sample", "LLM calls per sample"),
              ("prompt_tokens", "Prompt tokens per sample"),
              ("latency_s", "Latency per sample (s)"))
    labels = _labels(data)
    with matplotlib.rc_context(RC):
        figure = Figure(figsize=(10, 3.4), dpi=DPI, layout="constrained")
        axes = figure.subplots(1, len(panels))
        x = np.arange(len(labels))
        for ax, (column, title) in zip(axes, panels, strict=True):
            values = pd.to_numeric(data[column], errors="coerce").fillna(0.0).to_numpy()
            ax.bar(x, values, color=[COLORS[i % len(COLORS)] for i in range(len(labels))])
            ax.set_title(title)
            ax.set_xticks(x, labels, rotation=30 if len(labels) > 4 else 0, ha="center")
            ax.grid(axis="y", alpha=0.3)
        figure.suptitle("Efficiency per method")
    return _save(figure, out, "efficiency", "Efficiency per method (cf. NGQA Figure 4)")


def retrieval_plot(data: pd.DataFrame, out: Path) -> Plot | None:
    """Grouped bars of retrieval precision, recall and F1 per method (Figure 5)."""
    if data.empty:
        return None
    labels = _labels(data)
    series = (("precision", "Precision"), ("recall", "Recall"), ("f1", "F1"))
    with matplotlib.rc_context(RC):
        figure = Figure(figsize=(7, 3.4), dpi=DPI, layout="constrained")
        ax = figure.subplots()
        x = np.arange(len(labels))
        width = 0.8 / len(series)
        for i, (column, name) in enumerate(series):
            values = pd.to_numeric(data[column], errors="coerce").fillna(0.0).to_numpy()
            ax.bar(x + (i - 1) * width, values, width, label=name, color=COLORS[i])
        ax.set_xticks(x, labels)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("score")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
        ax.set_title("Retrieval of the signal triples per method")
    return _save(figure, out, "retrieval", "Retrieval precision, recall and F1 "
                                           "(cf. NGQA Figure 5)")


def write_plots(efficiency: pd.DataFrame, retrieval: pd.DataFrame, out: Path) -> list[Plot]:
    """Write the figures that have data, as PNG and SVG under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    plots = [efficiency_plot(efficiency, out), retrieval_plot(retrieval, out)]
    return [p for p in plots if p is not None]
