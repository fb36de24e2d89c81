"""A report section for the toy benchmark of ``test_generic_report``: one table of each
group's accuracy, built from the groups frame as any benchmark's section is."""

from __future__ import annotations

from pathlib import Path

from nutrireason.display.groups import fmt
from nutrireason.display.section import ReportInput, Section
from nutrireason.display.table import Column, Table

TOY_TASK = "toy_yes_no"


def report_section(report: ReportInput) -> Section | None:
    part = report.frame[report.frame["task"] == TOY_TASK]
    if part.empty:
        return None
    rows = [[r["method"], r["model"], fmt(r.get("metric.accuracy"))]
            for r in part.to_dict("records")]
    table = Table([Column("method", "Method"), Column("model", "Model")],
                  [Column("accuracy", "Accuracy")], rows, latex=True)
    return Section("toy", {"toy_table": table}, Path(__file__).with_name("toy_section.html.j2"))
