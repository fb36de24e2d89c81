"""Recipe nutrient estimation's part of a report: per method and model, each task's n,
accuracy within its tolerance, mean absolute error and share within 20 %, from metrics.json;
then the same per recipe category, from the runs' ``category`` breakdowns."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nutrireason.display.groups import breakdown_entries, fmt, number, ordered, stat_value
from nutrireason.display.section import ReportInput, Section
from nutrireason.display.table import Column, Table
from nutrireason.nutrients.spec import BREAKDOWNS
from nutrireason.schema import get_benchmark


def nutrients_table(report: ReportInput) -> Table | None:
    """Rows method x model, columns grouped by task; None without any of its groups."""
    spec = get_benchmark("nutrients")
    tasks = {task.name: task for task in spec.tasks}
    part = report.frame[report.frame["task"].isin(tasks)]
    if part.empty:
        return None
    shown = [name for name in tasks if name in set(part["task"])]
    columns: list[Column] = []
    for name in shown:
        columns.append(Column(f"{name}_n", "n", tasks[name].table_title))
        columns += [Column(f"{name}_{c.metric}", c.label, tasks[name].table_title)
                    for c in tasks[name].columns]
    lookup = {(r["method"], r["model"], r["task"]): r for r in part.to_dict("records")}
    rows = []
    for method in ordered(part["method"]):
        for model in ordered(part["model"]):
            if not any((method, model, name) in lookup for name in shown):
                continue
            row = [method, model]
            for name in shown:
                group = lookup.get((method, model, name))
                row.append(str(int(number(group.get("n")) or 0)) if group else "")
                for column in tasks[name].columns:
                    value = number(group.get(f"metric.{column.metric}")) if group else None
                    row.append(fmt(100 * value if column.percent and value is not None
                                   else value, "{:.2f}"))
            rows.append(row)
    return Table([Column("method", "Method"), Column("model", "Model")], columns, rows,
                 notes=["Acc and Within 20 % are percentages of all items (an unreadable "
                        "answer is wrong); MAE is over the answers that gave a number."],
                 latex=True)


CATEGORY_METRICS = ("accuracy", "mae")  # per category: the headline and the error size


def category_rows(metrics: Sequence[dict[str, Any]], tasks: Sequence[str]
                  ) -> dict[tuple[str, str, str, str], dict[str, Any]]:
    """(method, model, task, category) -> that breakdown's n and metric values, from every
    run's metrics.json; when runs repeat one, the last run given wins."""
    name = BREAKDOWNS[0].name
    found: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for entry in breakdown_entries(metrics, name):
        if entry.get("task") not in tasks:
            continue
        values = {metric: number(stat_value(value))
                  for metric, value in (entry.get("metrics") or {}).items()}
        found[(str(entry.get("method")), str(entry.get("model")), str(entry["task"]),
               str(entry.get(name)))] = {"n": entry.get("n", 0), **values}
    return found


def category_table(report: ReportInput) -> Table | None:
    """Rows method x model x category, columns grouped by task (n, accuracy within the
    tolerance, MAE); None when no run has a category breakdown."""
    tasks = {task.name: task for task in get_benchmark("nutrients").tasks}
    found = category_rows(report.metrics, list(tasks))
    if not found:
        return None
    shown = {name: [c for c in tasks[name].columns if c.metric in CATEGORY_METRICS]
             for name in tasks if any(key[2] == name for key in found)}
    columns: list[Column] = []
    for name, picked in shown.items():
        title = tasks[name].table_title
        columns += [Column(f"{name}_n", "n", title),
                    *(Column(f"{name}_{c.metric}", c.label, title) for c in picked)]
    rows = []
    for method, model, category in sorted({(k[0], k[1], k[3]) for k in found}):
        row = [method, model, category]
        for name, picked in shown.items():
            values = found.get((method, model, name, category))
            row.append(str(int(number(values["n"]) or 0)) if values else "")
            for column in picked:
                value = values.get(column.metric) if values else None
                row.append(fmt(100 * value if column.percent and value is not None
                               else value, "{:.2f}"))
        rows.append(row)
    return Table([Column("method", "Method"), Column("model", "Model"),
                  Column("category", "Category")], columns, rows,
                 notes=["Per recipe category (the build's food category of the dish), over "
                        "every level; Acc is a percentage of the category's items."])


def report_section(report: ReportInput) -> Section | None:
    table = nutrients_table(report)
    if table is None:
        return None
    tables = {"nutrients": table}
    categories = category_table(report)
    if categories is not None:
        tables["nutrients_categories"] = categories
    return Section("nutrients", tables, Path(__file__).with_name("report.html.j2"))
