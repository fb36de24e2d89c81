"""The single-file HTML report: tables, inline SVG figures and a per-sample browser.

Everything is inline (CSS, JavaScript, SVG), and a Content-Security-Policy forbids loading
anything, so the page works offline and from ``file://``. All record text goes through Jinja2
autoescaping; the only markup inserted unescaped is the SVG matplotlib wrote. The tables and the
samples are plain HTML, readable with JavaScript disabled; the script only adds filtering.
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

TEMPLATE = "report.html.j2"
OUTCOMES = ("correct", "incorrect", "error")


@dataclass
class Sample:
    method: str
    model: str
    level: str
    task: str
    outcome: str  # correct | incorrect | error
    question: str
    graph: str
    raw: str
    parsed: str
    gold: str
    item_id: str
    error: str


def _same(parsed: Any, gold: Any) -> bool:
    """Equal answers; lists (multi-label) compare as sets."""
    if isinstance(parsed, list | tuple | set) and isinstance(gold, list | tuple | set):
        try:
            return set(map(_hashable, parsed)) == set(map(_hashable, gold))
        except TypeError:
            return False
    return parsed == gold


def _hashable(value: Any) -> Any:
    return json.dumps(value, sort_keys=True) if isinstance(value, dict | list) else value


def _field(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None


def _top(value: Any) -> Any:
    """The first entry of a FAM-Bench answer's ``ranking``, or None."""
    ranking = _field(value, "ranking")
    return ranking[0] if isinstance(ranking, list) and ranking else None


def _right(task: str, parsed: Any, gold: Any) -> bool:
    """Whether an answer is right: FAM-Bench Task 1 by the decision, Task 2 by the top-ranked
    dish, NGQA tasks by :func:`_same`."""
    if task == "fam_dish":
        decision = _field(parsed, "decision")
        return decision is not None and decision == _field(gold, "decision")
    if task == "fam_rank":
        top = _top(parsed)
        return top is not None and top == _top(gold)
    return _same(parsed, gold)


def outcome(record: Any) -> str:
    if record.status == "error":
        return "error"
    task = str((record.meta or {}).get("task", ""))
    right = record.parse_ok and _right(task, record.parsed, record.gold)
    return "correct" if right else "incorrect"


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


def sample(record: Any) -> Sample:
    meta = record.meta or {}
    error = ""
    if record.error:
        error = _text(record.error.get("message") or record.error)
    return Sample(
        method=record.method, model=record.model, level=str(meta.get("level", "")),
        task=str(meta.get("task", "")), outcome=outcome(record),
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
    records = [record for run in runs for record in run.records]
    total = len(records)
    samples = [sample(record) for record in records[:max_samples]]
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
