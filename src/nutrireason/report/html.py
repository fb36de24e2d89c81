"""The single-file HTML report: tables, inline SVG figures and a per-sample browser.

Everything is inline (CSS, JavaScript, SVG), and a Content-Security-Policy forbids loading
anything, so the page works offline and from ``file://``. The tables and figures are plain HTML
(Jinja2 autoescaping; the only markup inserted unescaped is the SVG matplotlib wrote), readable
with JavaScript disabled.

Every sample is in the page, once, as JSON in a ``<script type="application/json">`` block
(:func:`script_json` escapes ``<``, ``>`` and ``&`` so that no record text can end the block).
The browser's script renders one page of rows at a time and a sample's details (every call's
request and response, parsed answer, gold, score) only when the row is opened, so a report of
100,000 samples opens in about a second. The JSON is compact: each sample is a list in the order
of ``fields``; method, model, task, level and outcome are indexes into ``lists``; every prompt
text is stored once in ``texts`` and referred to by index (the system prompt, repeated in every
request, is stored once).

A sample's outcome is read from its line of scores.jsonl, never judged here: "correct" /
"incorrect" from ``correct``, "error" for an error record, and "scored" for a task without a
single right answer (text generation), shown with its per-sample ROUGE-L instead of a verdict.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from nutrireason.display.figures import Plot
from nutrireason.display.groups import level_order, ordered, task_labels, task_order
from nutrireason.display.section import Section
from nutrireason.display.table import Table
from nutrireason.reasoning import split_reasoning
from nutrireason.schema import Record, SampleScore, benchmark_names, get_benchmark
from nutrireason.storage import write_text_atomic

TEMPLATE = "report.html.j2"
OUTCOMES = ("correct", "incorrect", "scored", "error")
# Per task, the per-sample values (scores.jsonl) shown beside the outcome: (name, label).
# The first one of a task without a verdict takes the verdict's place.
SHOWN_VALUES = {task.name: task.shown for name in benchmark_names()
                for task in get_benchmark(name).tasks if task.shown}
# The positions of a sample's values in the page's JSON (the script reads them by name).
# stored as indexes into ``lists``; rule and reason: how the answer was read and why it does
# not count (the record's ``extra["reading"]``, "" where none was recorded)
LISTED = ("method", "model", "task", "level", "outcome", "rule", "reason")
FIELDS = LISTED + ("unparseable", "label", "detail", "error", "question", "item", "parsed",
                   "gold", "cache_hits", "calls")


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
    sample's other values; an error shows only its message."""
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


def _content(content: Any) -> str:
    """A message's content as text; an image part shows as ``[image ...]``."""
    if not isinstance(content, list):
        return _text(content)
    parts = []
    for part in content:
        if isinstance(part, dict) and part.get("type") == "text":
            parts.append(_text(part.get("text")))
        elif isinstance(part, dict) and "image_url" in part:
            url = _text((part.get("image_url") or {}).get("url"))
            parts.append(f"[image {url[:80]}]")
        else:
            parts.append(_text(part))
    return "\n".join(parts)


def _last(messages: list[Any], role: str) -> str | None:
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == role:
            return _content(message.get("content"))
    return None


class Texts:
    """Prompt texts stored once each; a call refers to them by index."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}

    def add(self, text: str | None) -> int:
        """The text's index (-1 for none)."""
        if text is None:
            return -1
        return self.index.setdefault(text, len(self.index))

    def values(self) -> list[str]:
        return list(self.index)


def calls(record: Record, texts: Texts) -> list[list[Any]]:
    """Every call of a record in order: [system prompt, last user message, final answer,
    reasoning, finish reason]; the prompts and the reasoning as indexes into ``texts`` (-1 for
    none), the answer None where the call returned none (the failed call of an error record)
    and "" where it was cut off before one."""
    count = max(len(record.requests), len(record.responses))
    out = []
    for i in range(count):
        request = record.requests[i] if i < len(record.requests) else {}
        messages = request.get("messages") if isinstance(request, dict) else None
        messages = messages if isinstance(messages, list) else []
        response = record.responses[i] if i < len(record.responses) else None
        finish = record.finish_reasons[i] if i < len(record.finish_reasons) else None
        answer, reasoning = response, None
        if response is not None:
            split = split_reasoning(response, None, finish)
            answer = split.final
            reasoning = record.reasoning[i] if i < len(record.reasoning) else split.reasoning
        out.append([texts.add(_last(messages, "system")), texts.add(_last(messages, "user")),
                    answer, texts.add(reasoning or None), finish])
    return out


class Lists:
    """The distinct methods, models, tasks, levels and outcomes; a sample holds indexes."""

    def __init__(self) -> None:
        self.values = {name: Texts() for name in LISTED}

    def add(self, name: str, value: str) -> int:
        return self.values[name].add(value)

    def as_json(self) -> dict[str, list[str]]:
        return {name: found.values() for name, found in self.values.items()}


def sample_row(record: Record, score: SampleScore, lists: Lists, texts: Texts) -> list[Any]:
    """What the browser shows of one record, in the order of :data:`FIELDS`: its text from the
    record, its outcome and values from its score."""
    result = outcome(score)
    label, detail = _label_and_detail(score, result)
    error = _text(record.error.get("message") or record.error) if record.error else ""
    reading = record.reading if result != "error" else {}
    listed = (record.method, record.model, score.task, score.level, result,
              str(reading.get("rule") or ""),
              str(reading.get("reason") or "") if not score.parse_ok else "")
    return [*(lists.add(name, value) for name, value in zip(LISTED, listed, strict=True)),
            int(result != "error" and not score.parse_ok), label, detail, error,
            _text((record.meta or {}).get("question")), record.item_id, _text(record.parsed),
            _text(record.gold), record.cache_hits, calls(record, texts)]


def samples_data(runs: Sequence[Any]) -> dict[str, Any]:
    """Every sample of the runs, in run and record order, as the page's JSON."""
    lists, texts = Lists(), Texts()
    rows = [sample_row(record, run.scores[record.key], lists, texts)
            for run in runs for record in run.records]
    labels = task_labels()
    listed = lists.as_json()
    return {"fields": list(FIELDS), "lists": listed, "texts": texts.values(),
            "taskLabels": {task: labels[task] for task in listed["task"] if task in labels},
            "samples": rows}


def script_json(data: Any) -> str:
    """JSON safe inside a ``<script>`` element: ``<``, ``>`` and ``&`` (which occur only
    inside strings) become ``\\u`` escapes, so no text can close the element or open a
    comment; U+2028 and U+2029 are escaped too."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for char in "<>&\u2028\u2029":
        text = text.replace(char, f"\\u{ord(char):04x}")
    return text


def filters(data: dict[str, Any]) -> list[tuple[str, str, list[str]]]:
    """The browser's select filters: (key, label, values), values in their usual order."""
    lists = data["lists"]
    outcomes = ordered(lists["outcome"], OUTCOMES)
    if any(row[FIELDS.index("unparseable")] for row in data["samples"]):
        outcomes.append("unparseable")
    return [
        ("model", "Model", ordered(lists["model"])),
        ("method", "Method", ordered(lists["method"])),
        ("task", "Task", ordered(lists["task"], task_order())),
        ("level", "Level", ordered((v for v in lists["level"] if v), level_order())),
        ("outcome", "Outcome", outcomes),
        *((key, label, ordered(v for v in lists[key] if v))
          for key, label in (("rule", "Read by"), ("reason", "Not counted because"))
          if any(lists[key])),
    ]


def _environment(sections: Sequence[Section | None]) -> jinja2.Environment:
    """The report's templates, and each section's fragment as ``section/<name>``."""
    fragments = {f"section/{s.name}": s.template.read_text(encoding="utf-8")
                 for s in sections if s is not None}
    return jinja2.Environment(
        loader=jinja2.ChoiceLoader([
            jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
            jinja2.DictLoader(fragments)]),
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
        lstrip_blocks=True, keep_trailing_newline=True,
    )


def _figure(plot: Plot) -> dict[str, Any]:
    return {"title": plot.title, "svg": Markup(plot.inline_svg()), "png": plot.png.name,
            "svg_file": plot.svg.name}


def _section(section: Section | None) -> dict[str, Any] | None:
    if section is None:
        return None
    return {"name": section.name, "template": f"section/{section.name}",
            "figures": [_figure(p) for p in section.figures]}


def render_html(runs: Sequence[Any], tables: dict[str, Table],
                sections: Sequence[Section | None], plots: Sequence[Plot],
                warnings: Sequence[str] = (), reviewed: str = "") -> str:
    """The report page: ``sections``, one per registered benchmark with a report section
    (None where the runs have none of its groups), then the report's own ``tables`` and
    ``plots``, then the sample browser. ``reviewed``: the title of the benchmark whose labels
    the review tables are about."""
    data = samples_data(runs)
    bert_models = ordered(m for run in runs
                          if (m := run.metrics.get("bertscore_model")) is not None)
    return _environment(sections).get_template(TEMPLATE).render(
        runs=[{"name": run.metrics.get("run") or run.path.name,
               "records": run.metrics.get("records", len(run.records)),
               "bertscore_model": run.metrics.get("bertscore_model")} for run in runs],
        tables=tables, task_labels=task_labels(),
        sections=[_section(s) for s in sections],
        stats_plots=[_figure(p) for p in plots],
        bert_models=bert_models, total=len(data["samples"]), filters=filters(data),
        samples_json=Markup(script_json(data)), warnings=list(warnings), reviewed=reviewed,
    )


def write_html(runs: Sequence[Any], tables: dict[str, Table],
               sections: Sequence[Section | None], plots: Sequence[Plot], path: Path,
               warnings: Sequence[str] = (), reviewed: str = "") -> Path:
    return write_text_atomic(path, render_html(runs, tables, sections, plots, warnings,
                                               reviewed))
