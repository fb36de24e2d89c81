"""The report's own figure: the forest plot of paired differences between arms. The
benchmarks' paper figures are drawn in their own packages on the same canvas
(:mod:`nutrireason.display.figures`).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from nutrireason.display.figures import COLORS, DPI, RC, Plot, save_figure, wrap_label


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
    return save_figure(forest_figure(comparison), out, "comparison",
                       "Each arm against the reference (filled: a difference after Holm)")
