"""The table model of a report and its renderers: Markdown, CSV and LaTeX (the HTML report
renders the same :class:`Table` through its template).

Each table is built once as a :class:`Table`: index columns, value columns grouped under
spanning headers, rows of formatted strings, and optionally a richer CSV frame of numbers and
more compact LaTeX cells.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from nutrireason.storage import write_text_atomic


@dataclass
class Column:
    key: str  # CSV header
    label: str  # header in Markdown, LaTeX and HTML
    group: str = ""  # spanning header (task) or "" for none


@dataclass
class Table:
    """A rendered table: ``index`` columns then ``columns``; ``rows`` hold formatted strings."""

    index: list[Column]
    columns: list[Column]
    rows: list[list[str]]
    csv_frame: pd.DataFrame | None = None  # a richer CSV than the display cells, if any
    notes: list[str] = field(default_factory=list)
    latex_rows: list[list[str]] | None = None  # more compact cells for LaTeX, if any
    latex: bool = False  # written as ``<name>.tex`` too (the papers' tables)

    @property
    def all_columns(self) -> list[Column]:
        return self.index + self.columns

    def group_spans(self) -> list[tuple[str, int]]:
        """(group label, number of columns) over all columns, index columns first."""
        spans: list[tuple[str, int]] = []
        for column in self.all_columns:
            if spans and spans[-1][0] == column.group:
                spans[-1] = (column.group, spans[-1][1] + 1)
            else:
                spans.append((column.group, 1))
        return spans

    @property
    def grouped(self) -> bool:
        return any(column.group for column in self.columns)

    def frame(self) -> pd.DataFrame:
        """The display cells as a frame with CSV keys for headers."""
        return pd.DataFrame(self.rows, columns=[c.key for c in self.all_columns], dtype=object)


def to_markdown(table: Table) -> str:
    def cell(text: str) -> str:
        return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")

    headers = [f"{c.group} {c.label}".strip() for c in table.all_columns]
    lines = ["| " + " | ".join(cell(h) for h in headers) + " |",
             "|" + "|".join(":---" if i < len(table.index) else "---:"
                            for i in range(len(headers))) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in table.rows]
    text = "\n".join(lines) + "\n"
    if table.notes:
        text += "\n" + "\n".join(table.notes) + "\n"
    return text


def to_csv(table: Table) -> str:
    frame = table.csv_frame if table.csv_frame is not None else table.frame()
    return frame.to_csv(index=False, lineterminator="\n")


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                  "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                  "^": r"\textasciicircum{}", "Δ": r"$\Delta$"}
_LATEX_RE = re.compile("|".join(re.escape(k) for k in _LATEX_SPECIAL))


def latex_escape(text: str) -> str:
    """Escape LaTeX's special characters (one pass, so replacements are not re-escaped)."""
    return _LATEX_RE.sub(lambda m: _LATEX_SPECIAL[m.group(0)], str(text))


def to_latex(table: Table) -> str:
    """A plain ``tabular`` (no packages needed); task groups as ``\\multicolumn`` headers."""
    spans = table.group_spans()
    spec = "".join("l" * n if not group else "|" + "r" * n for group, n in spans)
    lines = [f"\\begin{{tabular}}{{{spec}}}", "\\hline"]
    if table.grouped:
        cells = []
        for group, n in spans:
            if not group:
                cells += [""] * n
            else:
                cells.append(f"\\multicolumn{{{n}}}{{|c}}{{{latex_escape(group)}}}")
        lines.append(" & ".join(cells) + " \\\\")
    lines.append(" & ".join(latex_escape(c.label) for c in table.all_columns) + " \\\\")
    lines.append("\\hline")
    previous_level = None
    for row in table.latex_rows if table.latex_rows is not None else table.rows:
        cells = [latex_escape(v) for v in row]
        if table.index and table.index[0].key in ("level", "model"):
            if row[0] == previous_level:
                cells[0] = ""
            elif previous_level is not None:
                lines.append("\\hline")
            previous_level = row[0]
        lines.append(" & ".join(cells) + " \\\\")
    lines += ["\\hline", "\\end{tabular}"]
    return "\n".join(lines) + "\n"


def write_tables(tables: dict[str, Table], out: Path) -> list[Path]:
    """``<name>.md`` and ``<name>.csv`` per table under ``out``, and ``<name>.tex`` for the
    tables marked ``latex``."""
    written = []
    for name, table in tables.items():
        written.append(write_text_atomic(out / f"{name}.md", to_markdown(table)))
        written.append(write_text_atomic(out / f"{name}.csv", to_csv(table)))
        if table.latex:
            written.append(write_text_atomic(out / f"{name}.tex", to_latex(table)))
    return written
