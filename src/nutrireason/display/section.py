"""What a benchmark adds to a report: its tables, its figures and the HTML fragment that shows
them.

A benchmark declares its report section on its spec (``BenchmarkSpec.report``: the
``module:function`` that builds it); the report calls that function with the groups of every
run and writes what it returns. A benchmark without groups in the runs returns None.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

from nutrireason.display.figures import Plot
from nutrireason.display.table import Table


@dataclass
class Section:
    """One benchmark's part of a report. ``template``: a Jinja fragment rendered inside the
    report page with ``section`` (this object), ``tables`` (every table of the report),
    ``bert_models`` and the ``render_table`` / ``render_figures`` macros."""

    name: str
    tables: dict[str, Table]
    template: Path
    figures: list[Plot] = field(default_factory=list)


@dataclass
class ReportInput:
    """What a section is built from: ``frame``, the groups of every run (a
    :func:`nutrireason.display.groups.groups_frame`); ``metrics``, each run's metrics.json;
    ``out``, the report's folder, where figures go; ``method_notes``, per (method, model) the
    sentence the method declares on its pooled statistics (ToG's calls per question)."""

    frame: pd.DataFrame
    metrics: Sequence[dict[str, Any]]
    out: Path
    method_notes: dict[tuple[str, str], str] = field(default_factory=dict)


class SectionBuilder(Protocol):
    """What ``BenchmarkSpec.report`` names: a function of the report's input that returns the
    benchmark's section, or None when the runs have none of its groups."""

    def __call__(self, report: ReportInput) -> Section | None: ...
