"""Report figures: efficiency per method (NGQA Figure 4), retrieval P/R/F1 (Figure 5) and the
FAM-Bench radar of Task 1 decision accuracy per condition.

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
from nutrireason.report.tables import CONDITIONS, fam_label, fam_sorted, ordered

DPI = 100
RC = {"svg.hashsalt": "nutrireason", "svg.fonttype": "none", "font.size": 9,
      "axes.spines.top": False, "axes.spines.right": False}
PNG_METADATA = {"Software": None}
SVG_METADATA = {"Date": None, "Creator": None}
COLORS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860")
LINESTYLES = ("-", "--", ":", "-.")
CONDITION_LABELS = {
    "hypertension": "Hypertension", "type_2_diabetes": "Type 2 diabetes",
    "chronic_kidney_disease": "CKD", "gerd": "GERD", "nafld": "NAFLD", "ibs": "IBS",
    "osteoporosis": "Osteoporosis", "stroke": "Stroke", "cardiovascular_disease": "CVD",
    "obesity": "Obesity", "gout": "Gout", "celiac_disease": "Celiac disease",
    "iron_deficiency_anemia": "Iron-deficiency\nanemia",
}


@dataclass
class Plot:
    name: str
    title: str
    png: Path
    svg: Path
    section: str = "ngqa"  # where the HTML report shows it: "ngqa" or "fam"

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


def _labels(frame: pd.DataFrame) -> list[str]:
    """A label per row: the method, and the model (wrapped) when the rows have several."""
    if frame["model"].nunique() > 1:
        return [f"{wrap_label(m)}\n{wrap_label(model)}"
                for m, model in zip(frame["method"], frame["model"], strict=True)]
    return [wrap_label(m) for m in frame["method"]]


def _save(figure: Figure, out: Path, name: str, title: str, section: str = "ngqa") -> Plot:
    FigureCanvasAgg(figure)
    png, svg = out / f"{name}.png", out / f"{name}.svg"
    with matplotlib.rc_context(RC):
        with atomic_path(png) as tmp:
            figure.savefig(tmp, format="png", dpi=DPI, metadata=PNG_METADATA)
        with atomic_path(svg) as tmp:
            figure.savefig(tmp, format="svg", metadata=SVG_METADATA)
    return Plot(name, title, png, svg, section)


EFFICIENCY_PANELS = (("calls_per_sample", "LLM calls per sample", "{:.2f}"),
                     ("prompt_tokens", "Prompt tokens per sample", "{:.0f}"),
                     ("latency_s", "Latency per sample (s)", "{:.2f}"))


def efficiency_figure(data: pd.DataFrame) -> Figure:
    """Calls per sample, prompt tokens and latency per method as horizontal bars, one panel
    each, the labels (method, and model when there are several) once, on the left."""
    labels = _labels(data)
    lines = sum(label.count("\n") + 1 for label in labels)
    height = max(2.6, 1.1 + 0.17 * lines + 0.12 * len(labels))
    y = np.arange(len(labels))
    colors = [COLORS[i % len(COLORS)] for i in range(len(labels))]
    with matplotlib.rc_context(RC):
        figure = Figure(figsize=(10, height), dpi=DPI, layout="constrained")
        axes = figure.subplots(1, len(EFFICIENCY_PANELS), sharey=True)
        for ax, (column, title, pattern) in zip(axes, EFFICIENCY_PANELS, strict=True):
            values = pd.to_numeric(data[column], errors="coerce").fillna(0.0).to_numpy()
            bars = ax.barh(y, values, color=colors, height=0.6)
            ax.bar_label(bars, [pattern.format(v) for v in values], padding=2, fontsize=8)
            ax.set_title(title)
            ax.margins(x=0.18)
            ax.grid(axis="x", alpha=0.3)
            ax.tick_params(axis="y", length=0)
        axes[0].set_yticks(y, labels)
        axes[0].invert_yaxis()  # the first method on top
        figure.suptitle("Efficiency per method")
    return figure


def efficiency_plot(data: pd.DataFrame, out: Path) -> Plot | None:
    """The efficiency figure (NGQA Figure 4) as PNG and SVG; None without data."""
    if data.empty:
        return None
    return _save(efficiency_figure(data), out, "efficiency",
                 "Efficiency per method (cf. NGQA Figure 4)")


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


def condition_label(condition: str) -> str:
    return CONDITION_LABELS.get(condition, condition.replace("_", " ").capitalize())


def _radar_series(data: pd.DataFrame, conditions: list[str]) -> list[tuple[str, np.ndarray]]:
    """(legend label, accuracy per condition, NaN where missing) per (method, model)."""
    multi_model = data["model"].nunique() > 1
    lookup = {(r.method, r.model, r.condition): r.accuracy for r in data.itertuples()}
    series = []
    for model, method in fam_sorted(zip(data["model"], data["method"], strict=True)):
        label = fam_label(method) + (f" - {model}" if multi_model else "")
        values = [lookup.get((method, model, c), np.nan) for c in conditions]
        series.append((label, np.array(values, dtype=float)))
    return series


def fam_radar_plot(data: pd.DataFrame, out: Path) -> Plot | None:
    """FAM-Bench Task 1 decision accuracy per condition: one polygon per (method, model) over
    the conditions present (``data`` from :func:`tables.fam_condition_frame`)."""
    if data.empty:
        return None
    conditions = ordered(data["condition"], CONDITIONS)
    angles = np.linspace(0.0, 2 * np.pi, len(conditions), endpoint=False)
    closed = np.append(angles, angles[:1])
    with matplotlib.rc_context(RC):
        figure = Figure(figsize=(9.5, 6.5), dpi=DPI, layout="constrained")
        ax = figure.add_subplot(projection="polar")
        for i, (label, values) in enumerate(_radar_series(data, conditions)):
            ring = np.append(values, values[:1])
            color = COLORS[i % len(COLORS)]
            ax.plot(closed, ring, color=color, linewidth=1.4, marker="o", markersize=3,
                    linestyle=LINESTYLES[(i // len(COLORS)) % len(LINESTYLES)], label=label)
            if np.isfinite(ring).all():
                ax.fill(closed, ring, color=color, alpha=0.06)
        ax.set_xticks(angles, [condition_label(c) for c in conditions])
        ax.tick_params(axis="x", pad=8)
        ax.set_ylim(0.0, 1.0)
        ax.set_yticks([0.25, 0.5, 0.75, 1.0], ["25%", "50%", "75%", "100%"], color="#5b6570")
        ax.set_rlabel_position(float(np.degrees(angles[1] / 2)) if len(angles) > 1 else 0.0)
        figure.legend(loc="outside right upper", frameon=False)
        figure.suptitle("FAM-Bench Task 1: decision accuracy per condition")
    return _save(figure, out, "fam_radar", "FAM-Bench Task 1 decision accuracy per condition",
                 section="fam")


def forest_figure(comparison: dict) -> Figure:
    """Paired differences (arm - reference) per arm, task and level: a dot with its corrected
    (simultaneous) interval as a line and the 95 % interval as a thicker one; filled where
    Holm finds a difference."""
    rows = comparison["groups"]
    labels = [f"{wrap_label(row['arm'], 40)}\n{row['task']} {row['level']}".strip()
              for row in rows]
    references = sorted({row["reference"] for row in rows})
    y = np.arange(len(rows))
    height = max(2.4, 0.9 + 0.42 * len(rows))
    with matplotlib.rc_context(RC):
        figure = Figure(figsize=(8, height), dpi=DPI, layout="constrained")
        ax = figure.subplots()
        ax.axvline(0, color="#888888", linewidth=1)
        for i, row in enumerate(rows):
            found = row["verdict"] != "no difference found"
            color = COLORS[0] if row["difference"] >= 0 else COLORS[3]
            ax.plot([row["corrected_low"], row["corrected_high"]], [i, i], color=color,
                    linewidth=1.2)
            ax.plot([row["low"], row["high"]], [i, i], color=color, linewidth=3.2)
            ax.plot([row["difference"]], [i], "o", color=color,
                    markerfacecolor=color if found else "white", markersize=7)
        ax.set_yticks(y, labels)
        ax.invert_yaxis()
        ax.set_xlabel(f"difference from {'; '.join(references)} (each task's reference; the "
                      "metric's own scale)")
        ax.grid(axis="x", alpha=0.3)
        figure.suptitle("Paired differences with corrected intervals")
    return figure


def forest_plot(comparison: dict | None, out: Path) -> Plot | None:
    """The forest plot of :func:`forest_figure` as PNG and SVG; None without comparisons."""
    if not comparison or not comparison.get("groups"):
        return None
    return _save(forest_figure(comparison), out, "comparison",
                 "Each arm against the reference (filled: a difference after Holm)", "stats")
