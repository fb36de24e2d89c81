"""The single-file HTML report: tables, inline SVG figures and a per-sample browser.

Everything is inline (CSS, JavaScript, SVG), and a Content-Security-Policy forbids loading
anything, so the page works offline and from ``file://``. All record text goes through Jinja2
autoescaping; the only markup inserted unescaped is the SVG matplotlib wrote. The tables and the
samples are plain HTML, readable with JavaScript disabled; the script only adds filtering.

A sample's outcome is read from its line of scores.jsonl, never judged here: "correct" /
"incorrect" from ``correct``, "error" for an error record, and "scored" for a task without a
single right answer (text generation), shown with its per-sample ROUGE-L instead of a verdict.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from nutrireason.io import write_text_atomic
from nutrireason.report.plots import Plot
from nutrireason.report.tables import (
    FAM_TASK_LABELS,
    FAM_TASKS,
    LEVELS,
    TASK_LABELS,
    TASKS,
    Table,
    ordered,
)
from nutrireason.schema import SampleScore

TEMPLATE = "report.html.j2"
OUTCOMES = ("correct", "incorrect", "scored", "error")
# Per task, the per-sample values (scores.jsonl) shown beside the outcome: (name, label).
# The first one of a task without a verdict takes the verdict's place.
SHOWN_VALUES: dict[str, tuple[tuple[str, str], ...]] = {
    "multi_label": (("accuracy", "Jaccard"),),
    "text_generation": (("rougeL", "ROUGE-L"), ("rouge1", "ROUGE-1"),
                        ("bertscore_f1", "BERTScore F1")),
    "fam_rank": (("mrr", "MRR"), ("kendall_tau", "Kendall tau")),
}


@dataclass
class Sample:
    method: str
    model: str
    level: str
    task: str
    outcome: str  # correct | incorrect | scored | error
    label: str  # what the outcome cell says: the verdict, or the headline value
    detail: str  # other per-sample values, "unparseable", ...
    question: str
    graph: str
    raw: str
    parsed: str
    gold: str
    item_id: str
    error: str


def outcome(score: SampleScore) -> str:
    """The sample's outcome as scored: error, correct / incorrect, or scored (no verdict)."""
    if score.status == "error":
        return "error"
    if score.correct is None:
        return "scored"
    return "correct" if score.correct else "incorrect"


def _shown(score: SampleScore) -> list[str]:
    return [f"{label} {score.values[name]:.4f}"
            for name, label in SHOWN_VALUES.get(score.task, ()) if name in score.values]


def _label_and_detail(score: SampleScore, result: str) -> tuple[str, str]:
    """The outcome cell: the verdict (or, without one, the task's headline value) and the
    sample's other values; an error shows only its message (see the template)."""
    if result == "error":
        return result, ""
    shown = _shown(score)
    notes = ["unparseable"] if not score.parse_ok else []
    if result == "scored" and shown:
        return shown[0], ", ".join(shown[1:] + notes)
    return result, ", ".join(shown + notes)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ", ".join(value)
    return json.dumps(value, ensure_ascii=False)


def _graph(record: Any) -> str:
    """The textualised graph: the last user message of the last request."""
    if not record.requests:
        return ""
    messages = record.requests[-1].get("messages") or []
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            return _text(message.get("content"))
    return ""


def sample(record: Any, score: SampleScore) -> Sample:
    """What the browser shows of one record: its text from the record, its outcome and values
    from its score."""
    meta = record.meta or {}
    error = ""
    if record.error:
        error = _text(record.error.get("message") or record.error)
    result = outcome(score)
    label, detail = _label_and_detail(score, result)
    return Sample(
        method=record.method, model=record.model, level=score.level, task=score.task,
        outcome=result, label=label, detail=detail,
        question=_text(meta.get("question")), graph=_graph(record),
        raw=record.responses[-1] if record.responses else "", parsed=_text(record.parsed),
        gold=_text(record.gold), item_id=record.item_id, error=error,
    )


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
        lstrip_blocks=True, keep_trailing_newline=True,
    )


def _figure(plot: Plot) -> dict[str, Any]:
    return {"title": plot.title, "svg": Markup(plot.inline_svg()), "png": plot.png.name,
            "svg_file": plot.svg.name}


def render_html(runs: Sequence[Any], tables: dict[str, Table], plots: Sequence[Plot], *,
                max_samples: int) -> str:
    records = [(record, run.scores[record.key]) for run in runs for record in run.records]
    total = len(records)
    samples = [sample(record, score) for record, score in records[:max_samples]]
    bert_models = ordered(m for run in runs
                          if (m := run.metrics.get("bertscore_model")) is not None)
    filters = [
        ("method", "Method", ordered(s.method for s in samples)),
        ("level", "Level", ordered((s.level for s in samples if s.level), LEVELS)),
        ("task", "Task", ordered((s.task for s in samples), TASKS + FAM_TASKS)),
        ("outcome", "Outcome", ordered((s.outcome for s in samples), OUTCOMES)),
    ]
    return _environment().get_template(TEMPLATE).render(
        runs=[{"name": run.metrics.get("run") or run.path.name,
               "records": run.metrics.get("records", len(run.records)),
               "bertscore_model": run.metrics.get("bertscore_model")} for run in runs],
        tables=tables, task_labels={**TASK_LABELS, **FAM_TASK_LABELS},
        plots=[_figure(p) for p in plots if p.section != "fam"],
        fam_plots=[_figure(p) for p in plots if p.section == "fam"],
        bert_models=bert_models, samples=samples, total=total, capped=total > len(samples),
        max_samples=max_samples, filters=filters,
    )


def write_html(runs: Sequence[Any], tables: dict[str, Table], plots: Sequence[Plot],
               path: Path, *, max_samples: int) -> Path:
    return write_text_atomic(path, render_html(runs, tables, plots, max_samples=max_samples))
