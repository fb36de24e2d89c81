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


class SectionBuilder(Protocol):
    """What ``BenchmarkSpec.report`` names: the groups of every run (a :func:`nutrireason.
    display.groups.groups_frame`), each run's metrics.json and the report's folder, where the
    figures go."""

    def __call__(self, frame: pd.DataFrame, metrics: Sequence[dict[str, Any]],
                 out: Path) -> Section | None: ...
