"""NGQA's part of a report: Table 3 (level x method by task metrics with 95 % intervals),
efficiency and retrieval, and Figures 4 and 5.

Every number comes from metrics.json (and, for the weights of pooled retrieval figures, the
count of samples per group that ``score`` wrote a retrieval value for in scores.jsonl): a
table pools groups only as the scorer defined their metrics (efficiency over every record of a
group, errors included; retrieval over the samples that count for retrieval). Missing cells
are left empty.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from nutrireason.display.figures import COLORS, DPI, RC, Plot, row_labels, save_figure
from nutrireason.display.groups import fmt, has, number, ordered, row_keys
from nutrireason.display.section import ReportInput, Section
from nutrireason.display.table import Column, Table
from nutrireason.schema import get_benchmark

_NGQA = get_benchmark("ngqa")
LEVELS = _NGQA.levels
TASKS = tuple(t.name for t in _NGQA.tasks)
TASK_LABELS = {t.name: t.label for t in _NGQA.tasks}
TASK_METRICS = {t.name: tuple((c.metric, c.label) for c in t.columns) for t in _NGQA.tasks}
OPTIONAL_METRICS = {"bertscore_f1"}  # a column only when some group has it
EFFICIENCY = (("calls_per_sample", "Calls/sample", "{:.2f}"),
              ("prompt_tokens", "Prompt tokens", "{:.1f}"),
              ("completion_tokens", "Completion tokens", "{:.1f}"),
              ("latency_s", "Latency (s)", "{:.4f}"))
RETRIEVAL = (("precision", "Precision"), ("recall", "Recall"), ("f1", "F1"))


def _table3_columns(frame: pd.DataFrame) -> list[tuple[str, str, str]]:
    """(task, metric name, label) per Table 3 value column, an "n" column opening each task."""
    out = []
    for task in ordered(frame["task"], TASKS):
        out.append((task, "n", "n"))
        for name, label in TASK_METRICS.get(task, ()):
            if name in OPTIONAL_METRICS and not has(frame[frame["task"] == task],
                                                     f"metric.{name}"):
                continue
            out.append((task, name, label))
    return out


def _with_interval(group: dict[str, Any], name: str) -> str:
    """``0.8123 [0.781, 0.842]``: the value, then its interval when metrics.json has one."""
    value = fmt(group.get(f"metric.{name}"))
    low, high = group.get(f"metric.{name}.low"), group.get(f"metric.{name}.high")
    if not value or fmt(low) == "" or fmt(high) == "":
        return value
    return f"{value} [{fmt(low, '{:.3f}')}, {fmt(high, '{:.3f}')}]"


INTERVAL_PARTS = ("low", "high", "naive_low", "naive_high")  # clustered, then independent


def _table3_cells(group: dict[str, Any] | None, task: str, name: str
                  ) -> tuple[str, str, dict[str, Any]]:
    """One Table 3 cell: shown with its interval, shown in LaTeX, and its CSV values."""
    key = f"{task}_{name}"
    if group is None:
        return "", "", {key: None} if name == "n" else {
            key: None, **{f"{key}_{part}": None for part in INTERVAL_PARTS}}
    if name == "n":
        count = int(number(group.get("n")) or 0)
        return str(count), str(count), {key: count}
    return (_with_interval(group, name), fmt(group.get(f"metric.{name}")),
            {key: number(group.get(f"metric.{name}")),
             **{f"{key}_{part}": number(group.get(f"metric.{name}.{part}"))
                for part in INTERVAL_PARTS}})


def table3(frame: pd.DataFrame) -> Table:
    """NGQA Table 3: rows level x method (x model), columns grouped by task: each task's n,
    then its metrics with their 95 % intervals (LaTeX: values and n only)."""
    sources = _table3_columns(frame)
    columns = [Column(f"{task}_{name}", label, TASK_LABELS.get(task, task))
               for task, name, label in sources]
    keys, multi_model = row_keys(frame)
    index = [Column("level", "Level"), Column("method", "Method")]
    if multi_model:
        index.append(Column("model", "Model"))
    lookup = {(r["level"], r["method"], r["model"], r["task"]): r
              for r in frame.to_dict("records")}
    rows, latex_rows, csv_rows = [], [], []
    for level, method, model in keys:
        row = [level, method] + ([model] if multi_model else [])
        latex_row = list(row)
        csv_row: dict[str, Any] = {"level": level, "method": method}
        if multi_model:
            csv_row["model"] = model
        for task, name, _label in sources:
            shown, compact, values = _table3_cells(lookup.get((level, method, model, task)),
                                                   task, name)
            row.append(shown)
            latex_row.append(compact)
            csv_row.update(values)
        rows.append(row)
        latex_rows.append(latex_row)
        csv_rows.append(csv_row)
    csv_frame = pd.DataFrame(csv_rows)
    for task in ordered(frame["task"], TASKS):
        if f"{task}_n" in csv_frame.columns:
            csv_frame[f"{task}_n"] = csv_frame[f"{task}_n"].astype("Int64")  # no "40.0"
    return Table(index, columns, rows, csv_frame=csv_frame, latex_rows=latex_rows,
                 latex=True)


def _weighted(rows: pd.DataFrame, column: str, weights: pd.Series) -> float | None:
    """The mean of ``column`` over groups, each weighted by the samples its value averages
    over; None when no group has a value or none has a sample."""
    if column not in rows.columns:
        return None
    part = pd.DataFrame({"value": rows[column], "weight": weights}).dropna()
    part = part[part["weight"] > 0]
    if part.empty:
        return None
    return float((part["value"] * part["weight"]).sum() / part["weight"].sum())


def _records(rows: pd.DataFrame) -> pd.Series:
    """Records per group: scored samples plus errors (what efficiency averages over)."""
    return rows["n"].fillna(0).astype(float) + rows["errors"].fillna(0).astype(float)


def efficiency_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Per method (and model): each efficiency figure over all its records, the groups' means
    weighted by their records (errors included, as metrics.json averages them)."""
    keys, _ = row_keys(frame, with_level=False)
    rows = []
    for _, method, model in keys:
        part = frame[(frame["method"] == method) & (frame["model"] == model)]
        weights = _records(part)
        row = {"method": method, "model": model, "n": int(part["n"].sum()),
               "records": int(weights.sum())}
        for name, _label, _pattern in EFFICIENCY:
            row[name] = _weighted(part, f"eff.{name}", weights)
        rows.append(row)
    return pd.DataFrame(rows, columns=["method", "model", "n", "records"]
                        + [e[0] for e in EFFICIENCY])


def efficiency_table(frame: pd.DataFrame,
                     method_notes: dict[tuple[str, str], str] | None = None) -> Table:
    """Efficiency per method (and model), with a note per method that declares a sentence on
    its pooled statistics (``method_notes`` by (method, model), ToG's calls per question)."""
    data = efficiency_frame(frame)
    multi_model = data["model"].nunique() > 1
    index = [Column("method", "Method")] + ([Column("model", "Model")] if multi_model else [])
    columns = [Column("records", "Records")] + [Column(k, label) for k, label, _ in EFFICIENCY]
    rows = []
    for record in data.to_dict("records"):
        row = [record["method"]] + ([record["model"]] if multi_model else [])
        row.append(str(record["records"]))
        row += [fmt(record[k], pattern) for k, _label, pattern in EFFICIENCY]
        rows.append(row)
    return Table(index, columns, rows, csv_frame=data if multi_model
                 else data.drop(columns=["model"]),
                 notes=["Means per record over all levels and tasks, errors included (as in "
                        "metrics.json); n in the CSV counts the scored samples.",
                        "The smallest difference each group can detect against another arm "
                        "(80 % power, two-sided 5 %) is in 'Comparing models and methods' "
                        "(detectable.csv).",
                        *(f"{method} ({model}): {note}"
                          for (method, model), note in (method_notes or {}).items()
                          if ((data["method"] == method) & (data["model"] == model)).any())])


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
                    row += [fmt(record.get(f"ret.{name}")) for name, _ in RETRIEVAL]
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
    """Per method (and model): retrieval P/R/F1 over levels and tasks, each group's value
    weighted by the samples it averages over (``ret.n`` from scores.jsonl; the group's ``n``
    when the frame was built without scores)."""
    if "ret.f1" not in frame.columns:
        return pd.DataFrame(columns=["method", "model"] + [n for n, _ in RETRIEVAL])
    part = frame[frame["ret.f1"].notna()]
    keys, _ = row_keys(part, with_level=False) if not part.empty else ([], False)
    rows = []
    for _, method, model in keys:
        sel = part[(part["method"] == method) & (part["model"] == model)]
        weights = sel["ret.n" if "ret.n" in sel.columns else "n"].astype(float)
        rows.append({"method": method, "model": model,
                     **{name: _weighted(sel, f"ret.{name}", weights) for name, _ in RETRIEVAL}})
    return pd.DataFrame(rows, columns=["method", "model"] + [n for n, _ in RETRIEVAL])


def ngqa_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The NGQA groups (binary, multi_label, text_generation) of a groups frame."""
    return frame[frame["task"].isin(TASKS)]


def ngqa_tables(frame: pd.DataFrame,
                method_notes: dict[tuple[str, str], str] | None = None) -> dict[str, Table]:
    """NGQA Table 3, efficiency and retrieval over the NGQA groups; none without any."""
    part = ngqa_frame(frame)
    if part.empty:
        return {}
    return {"table3": table3(part), "efficiency": efficiency_table(part, method_notes),
            "retrieval": retrieval_table(part)}


EFFICIENCY_PANELS = (("calls_per_sample", "LLM calls per sample", "{:.2f}"),
                     ("prompt_tokens", "Prompt tokens per sample", "{:.0f}"),
                     ("latency_s", "Latency per sample (s)", "{:.2f}"))


def efficiency_figure(data: pd.DataFrame) -> Figure:
    """Calls per sample, prompt tokens and latency per method as horizontal bars, one panel
    each, the labels (method, and model when there are several) once, on the left."""
    labels = row_labels(data)
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
    return save_figure(efficiency_figure(data), out, "efficiency",
                 "Efficiency per method (cf. NGQA Figure 4)")


def retrieval_plot(data: pd.DataFrame, out: Path) -> Plot | None:
    """Grouped bars of retrieval precision, recall and F1 per method (Figure 5)."""
    if data.empty:
        return None
    labels = row_labels(data)
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
    return save_figure(figure, out, "retrieval", "Retrieval precision, recall and F1 "
                                           "(cf. NGQA Figure 5)")


def write_plots(efficiency: pd.DataFrame, retrieval: pd.DataFrame, out: Path) -> list[Plot]:
    """Write the figures that have data, as PNG and SVG under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    plots = [efficiency_plot(efficiency, out), retrieval_plot(retrieval, out)]
    return [p for p in plots if p is not None]


def report_section(report: ReportInput) -> Section | None:
    """NGQA Table 3, efficiency and retrieval, and Figures 4 and 5 over the NGQA groups of the
    runs; None without any."""
    built = ngqa_tables(report.frame, report.method_notes)
    if not built:
        return None
    part = ngqa_frame(report.frame)
    figures = write_plots(efficiency_frame(part), retrieval_by_method(part), report.out)
    return Section("ngqa", built, Path(__file__).with_name("report.html.j2"), figures)
