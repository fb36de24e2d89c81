"""The paper-shaped tables of a report: NGQA Table 3, efficiency and retrieval.

Each table is built once as a :class:`Table` (index columns, grouped value columns, rows of
formatted strings, backed by a pandas frame of numbers) and rendered to Markdown, CSV and LaTeX
here, and to HTML by the report template. Missing cells are empty strings.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from nutrireason.io import write_text_atomic

LEVELS = ("sparse", "standard", "complex")
TASKS = ("binary", "multi_label", "text_generation")
TASK_LABELS = {"binary": "Binary", "multi_label": "Multi-label",
               "text_generation": "Text generation"}
_CLASSIFICATION = (("accuracy", "Accuracy"), ("recall", "Recall"), ("precision", "Precision"),
                   ("f1", "F1"))
TASK_METRICS: dict[str, tuple[tuple[str, str], ...]] = {
    "binary": _CLASSIFICATION,
    "multi_label": _CLASSIFICATION,
    "text_generation": (("rouge1", "ROUGE-1"), ("rouge2", "ROUGE-2"), ("rougeL", "ROUGE-L"),
                        ("bleu", "BLEU"), ("bertscore_f1", "BERT")),
}
OPTIONAL_METRICS = {"bertscore_f1"}  # a column only when some group has it
EFFICIENCY = (("calls_per_sample", "Calls/sample", "{:.2f}"),
              ("prompt_tokens", "Prompt tokens", "{:.1f}"),
              ("completion_tokens", "Completion tokens", "{:.1f}"),
              ("latency_s", "Latency (s)", "{:.4f}"))
RETRIEVAL = (("precision", "Precision"), ("recall", "Recall"), ("f1", "F1"))


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


# --- flattening metrics.json -----------------------------------------------------------------


def groups_frame(metrics: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """One row per group of every metrics.json: ids, n, metric values, efficiency, retrieval."""
    rows = []
    for order, data in enumerate(metrics):
        for group in data.get("groups") or []:
            row: dict[str, Any] = {
                "run_order": order, "run": data.get("run"),
                "method": group["method"], "model": group["model"], "task": group["task"],
                "level": group["level"], "n": group.get("n", 0),
                "errors": group.get("errors", 0), "error_rate": group.get("error_rate"),
            }
            for name, stat in (group.get("metrics") or {}).items():
                row[f"metric.{name}"] = _value(stat)
            for name, value in (group.get("efficiency") or {}).items():
                row[f"eff.{name}"] = value
            for name, stat in (group.get("retrieval") or {}).items():
                if isinstance(stat, dict):
                    row[f"ret.{name}"] = stat.get("value")
                    row[f"ret.{name}.low"] = stat.get("low")
                    row[f"ret.{name}.high"] = stat.get("high")
            rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        frame = pd.DataFrame(columns=["run_order", "run", "method", "model", "task", "level",
                                      "n", "errors", "error_rate"])
    # Several runs may score the same (level, method, model, task): the last run given wins.
    return frame.drop_duplicates(["level", "method", "model", "task"], keep="last")


def _value(stat: Any) -> float | None:
    if isinstance(stat, dict):
        return stat.get("value")
    return stat if isinstance(stat, int | float) else None


def ordered(values: Iterable[str], preferred: Sequence[str] = ()) -> list[str]:
    """Distinct values: the ``preferred`` ones in that order, then others in first-seen order."""
    seen = list(dict.fromkeys(values))
    return [v for v in preferred if v in seen] + [v for v in seen if v not in preferred]


def _fmt(value: Any, pattern: str = "{:.4f}") -> str:
    if value is None or (isinstance(value, float) and value != value):  # None or NaN
        return ""
    return pattern.format(float(value))


def _has(frame: pd.DataFrame, column: str) -> bool:
    return column in frame.columns and bool(frame[column].notna().any())


def _row_keys(frame: pd.DataFrame, with_level: bool = True) -> tuple[list[tuple], bool]:
    """Row identities in display order, and whether the model is a row key (more than one)."""
    multi_model = frame["model"].nunique() > 1
    methods = ordered(frame["method"])
    models = ordered(frame["model"])
    keys = {(r.level, r.method, r.model) for r in frame.itertuples()}
    levels = ordered(frame["level"], LEVELS) if with_level else [None]
    out = []
    for level in levels:
        for method in methods:
            for model in models:
                if not with_level and any(k[1:] == (method, model) for k in keys):
                    out.append((None, method, model))
                elif (level, method, model) in keys:
                    out.append((level, method, model))
    return out, multi_model


# --- the tables ------------------------------------------------------------------------------


def table3(frame: pd.DataFrame) -> Table:
    """NGQA Table 3: rows level x method (x model), columns grouped by task."""
    tasks = ordered(frame["task"], TASKS)
    columns: list[Column] = []
    sources: list[tuple[str, str]] = []  # (task, metric name) per column
    for task in tasks:
        for name, label in TASK_METRICS.get(task, ()):
            if name in OPTIONAL_METRICS and not _has(frame[frame["task"] == task],
                                                     f"metric.{name}"):
                continue
            columns.append(Column(f"{task}_{name}", label, TASK_LABELS.get(task, task)))
            sources.append((task, name))
    keys, multi_model = _row_keys(frame)
    index = [Column("level", "Level"), Column("method", "Method")]
    if multi_model:
        index.append(Column("model", "Model"))
    lookup = {(r["level"], r["method"], r["model"], r["task"]): r
              for r in frame.to_dict("records")}
    rows = []
    for level, method, model in keys:
        row = [level, method] + ([model] if multi_model else [])
        for task, name in sources:
            group = lookup.get((level, method, model, task))
            row.append(_fmt(group.get(f"metric.{name}")) if group else "")
        rows.append(row)
    return Table(index, columns, rows)


def _weighted(rows: pd.DataFrame, column: str) -> float | None:
    if column not in rows.columns:
        return None
    part = rows[["n", column]].dropna()
    if part.empty:
        return None
    weights = part["n"].astype(float)
    if weights.sum() <= 0:
        return float(part[column].mean())
    return float((part[column] * weights).sum() / weights.sum())


def efficiency_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Per method (and model): the n-weighted mean of each efficiency figure over all groups."""
    keys, _ = _row_keys(frame, with_level=False)
    rows = []
    for _, method, model in keys:
        part = frame[(frame["method"] == method) & (frame["model"] == model)]
        row = {"method": method, "model": model, "n": int(part["n"].sum())}
        for name, _label, _pattern in EFFICIENCY:
            row[name] = _weighted(part, f"eff.{name}")
        rows.append(row)
    return pd.DataFrame(rows, columns=["method", "model", "n"] + [e[0] for e in EFFICIENCY])


def efficiency_table(frame: pd.DataFrame) -> Table:
    data = efficiency_frame(frame)
    multi_model = data["model"].nunique() > 1
    index = [Column("method", "Method")] + ([Column("model", "Model")] if multi_model else [])
    columns = [Column("n", "Samples")] + [Column(k, label) for k, label, _ in EFFICIENCY]
    rows = []
    for record in data.to_dict("records"):
        row = [record["method"]] + ([record["model"]] if multi_model else [])
        row.append(str(record["n"]))
        row += [_fmt(record[k], pattern) for k, _label, pattern in EFFICIENCY]
        rows.append(row)
    return Table(index, columns, rows, csv_frame=data if multi_model
                 else data.drop(columns=["model"]),
                 notes=["Means per sample, weighted by samples over all levels and tasks."])


def retrieval_table(frame: pd.DataFrame) -> Table:
    """Retrieval P/R/F1 per level x method (x model), and task when the runs have several."""
    part = frame[frame["ret.f1"].notna()] if "ret.f1" in frame.columns else frame.iloc[0:0]
    multi_task = part["task"].nunique() > 1
    multi_model = part["model"].nunique() > 1
    index = [Column("level", "Level")]
    if multi_task:
        index.append(Column("task", "Task"))
    index.append(Column("method", "Method"))
    if multi_model:
        index.append(Column("model", "Model"))
    columns = [Column(name, label) for name, label in RETRIEVAL]
    rows, csv_rows = [], []
    for level in ordered(part["level"], LEVELS):
        for task in ordered(part["task"], TASKS):
            for method in ordered(part["method"]):
                for model in ordered(part["model"]):
                    sel = part[(part["level"] == level) & (part["task"] == task)
                               & (part["method"] == method) & (part["model"] == model)]
                    if sel.empty:
                        continue
                    record = sel.iloc[-1]
                    row = [level] + ([TASK_LABELS.get(task, task)] if multi_task else [])
                    row += [method] + ([model] if multi_model else [])
                    row += [_fmt(record.get(f"ret.{name}")) for name, _ in RETRIEVAL]
                    rows.append(row)
                    csv_row = {"level": level, "task": task, "method": method, "model": model,
                               "n": int(record["n"])}
                    for name, _ in RETRIEVAL:
                        for suffix in ("", ".low", ".high"):
                            csv_row[f"{name}{suffix.replace('.', '_')}"] = record.get(
                                f"ret.{name}{suffix}")
                    csv_rows.append(csv_row)
    notes = [] if rows else ["No method in these runs reports retrieval."]
    return Table(index, columns, rows, csv_frame=pd.DataFrame(csv_rows), notes=notes)


def retrieval_by_method(frame: pd.DataFrame) -> pd.DataFrame:
    """Per method (and model): n-weighted mean retrieval P/R/F1 over levels and tasks."""
    if "ret.f1" not in frame.columns:
        return pd.DataFrame(columns=["method", "model"] + [n for n, _ in RETRIEVAL])
    part = frame[frame["ret.f1"].notna()]
    keys, _ = _row_keys(part, with_level=False) if not part.empty else ([], False)
    rows = []
    for _, method, model in keys:
        sel = part[(part["method"] == method) & (part["model"] == model)]
        rows.append({"method": method, "model": model,
                     **{name: _weighted(sel, f"ret.{name}") for name, _ in RETRIEVAL}})
    return pd.DataFrame(rows, columns=["method", "model"] + [n for n, _ in RETRIEVAL])


# --- renderers -------------------------------------------------------------------------------


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
                  "^": r"\textasciicircum{}"}
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
    for row in table.rows:
        cells = [latex_escape(v) for v in row]
        if table.index and table.index[0].key == "level":
            if row[0] == previous_level:
                cells[0] = ""
            elif previous_level is not None:
                lines.append("\\hline")
            previous_level = row[0]
        lines.append(" & ".join(cells) + " \\\\")
    lines += ["\\hline", "\\end{tabular}"]
    return "\n".join(lines) + "\n"


def build_tables(metrics: Sequence[dict[str, Any]]) -> dict[str, Table]:
    frame = groups_frame(metrics)
    return {"table3": table3(frame), "efficiency": efficiency_table(frame),
            "retrieval": retrieval_table(frame)}


def write_tables(tables: dict[str, Table], out: Path) -> list[Path]:
    """table3.{md,csv,tex}, efficiency.{md,csv}, retrieval.{md,csv} under ``out``."""
    written = []
    for name, table in tables.items():
        written.append(write_text_atomic(out / f"{name}.md", to_markdown(table)))
        written.append(write_text_atomic(out / f"{name}.csv", to_csv(table)))
        if name == "table3":
            written.append(write_text_atomic(out / f"{name}.tex", to_latex(table)))
    return written
