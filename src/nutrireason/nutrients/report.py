"""Recipe nutrient estimation's part of a report: per method and model, each task's n,
accuracy within its tolerance, mean absolute error and share within 20 %, from metrics.json."""

from __future__ import annotations

from pathlib import Path

from nutrireason.display.groups import fmt, number, ordered
from nutrireason.display.section import ReportInput, Section
from nutrireason.display.table import Column, Table
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


def report_section(report: ReportInput) -> Section | None:
    table = nutrients_table(report)
    if table is None:
        return None
    return Section("nutrients", {"nutrients": table},
                   Path(__file__).with_name("report.html.j2"))
