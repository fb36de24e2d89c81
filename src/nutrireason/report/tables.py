"""The paper-shaped tables of a report: NGQA Table 3, efficiency, retrieval and FAM-Bench.

Each table is built once as a :class:`Table` (index columns, grouped value columns, rows of
formatted strings, backed by a pandas frame of numbers) and rendered to Markdown, CSV and LaTeX
here, and to HTML by the report template. The NGQA tables read only the NGQA tasks (binary,
multi_label, text_generation) and leave missing cells empty; the FAM-Bench tables (Table 1:
both tasks per model and mode; Table 2: input modality) read fam_dish / fam_rank and show
missing cells as "-". Table 1 shows each model's text-input prompting modes on their common
pool of validly answered items (paper Table 1 caption) as ``score`` wrote it into
metrics.json's ``pools``; without a pool it shows each mode's full run.

Every number comes from metrics.json (and, for the weights of pooled retrieval figures, the
count of samples per group that ``score`` wrote a retrieval value for in scores.jsonl): a
table pools groups only as the scorer defined their metrics (efficiency over every record of a
group, errors included; retrieval over the samples that count for retrieval).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from nutrireason.io import write_text_atomic
from nutrireason.schema import SampleScore, get_benchmark

# The benchmarks' levels, tasks and labels come from their registered specs (schema).
_NGQA, _FAM = get_benchmark("ngqa"), get_benchmark("fam")
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


def groups_frame(metrics: Sequence[dict[str, Any]],
                 scores: Sequence[Iterable[SampleScore]] | None = None) -> pd.DataFrame:
    """One row per group of every metrics.json: ids, n, metric values, efficiency, retrieval.

    With each run's ``scores`` (scores.jsonl, in the order of ``metrics``), ``ret.n`` is the
    number of the group's samples with a retrieval value: the samples its retrieval metrics
    average over, and their weight when retrieval is pooled over groups."""
    rows = []
    for order, data in enumerate(metrics):
        counts = _retrieval_counts(scores[order]) if scores is not None else None
        for group in data.get("groups") or []:
            row: dict[str, Any] = {
                "run_order": order, "run": data.get("run"),
                "method": group["method"], "model": group["model"], "task": group["task"],
                "level": group["level"], "n": group.get("n", 0),
                "errors": group.get("errors", 0), "error_rate": group.get("error_rate"),
            }
            for name, stat in (group.get("metrics") or {}).items():
                row[f"metric.{name}"] = _value(stat)
                if isinstance(stat, dict):
                    for part in ("low", "high", "naive_low", "naive_high"):
                        row[f"metric.{name}.{part}"] = stat.get(part)
            for name, value in (group.get("efficiency") or {}).items():
                row[f"eff.{name}"] = value
            for name, value in (group.get("method_stats") or {}).items():
                row[f"ms.{name}"] = value
            for name, value in (group.get("reading") or {}).items():
                row[f"read.{name}"] = value
            for name, stat in (group.get("retrieval") or {}).items():
                if isinstance(stat, dict):
                    row[f"ret.{name}"] = stat.get("value")
                    row[f"ret.{name}.low"] = stat.get("low")
                    row[f"ret.{name}.high"] = stat.get("high")
            if counts is not None:
                row["ret.n"] = counts.get(tuple(group[k] for k in _GROUP_KEYS), 0)
            rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        frame = pd.DataFrame(columns=["run_order", "run", "method", "model", "task", "level",
                                      "n", "errors", "error_rate"])
    # Several runs may score the same (level, method, model, task): the last run given wins.
    return frame.drop_duplicates(["level", "method", "model", "task"], keep="last")


_GROUP_KEYS = ("method", "model", "task", "level")


def _retrieval_counts(scores: Iterable[SampleScore]) -> dict[tuple[str, ...], int]:
    counts: dict[tuple[str, ...], int] = defaultdict(int)
    for score in scores:
        if "retrieval_f1" in score.values:
            counts[(score.method, score.model, score.task, score.level)] += 1
    return dict(counts)


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


def _table3_columns(frame: pd.DataFrame) -> list[tuple[str, str, str]]:
    """(task, metric name, label) per Table 3 value column, an "n" column opening each task."""
    out = []
    for task in ordered(frame["task"], TASKS):
        out.append((task, "n", "n"))
        for name, label in TASK_METRICS.get(task, ()):
            if name in OPTIONAL_METRICS and not _has(frame[frame["task"] == task],
                                                     f"metric.{name}"):
                continue
            out.append((task, name, label))
    return out


def _with_interval(group: dict[str, Any], name: str) -> str:
    """``0.8123 [0.781, 0.842]``: the value, then its interval when metrics.json has one."""
    value = _fmt(group.get(f"metric.{name}"))
    low, high = group.get(f"metric.{name}.low"), group.get(f"metric.{name}.high")
    if not value or _fmt(low) == "" or _fmt(high) == "":
        return value
    return f"{value} [{_fmt(low, '{:.3f}')}, {_fmt(high, '{:.3f}')}]"


INTERVAL_PARTS = ("low", "high", "naive_low", "naive_high")  # clustered, then independent


def _table3_cells(group: dict[str, Any] | None, task: str, name: str
                  ) -> tuple[str, str, dict[str, Any]]:
    """One Table 3 cell: shown with its interval, shown in LaTeX, and its CSV values."""
    key = f"{task}_{name}"
    if group is None:
        return "", "", {key: None} if name == "n" else {
            key: None, **{f"{key}_{part}": None for part in INTERVAL_PARTS}}
    if name == "n":
        count = int(_number(group.get("n")) or 0)
        return str(count), str(count), {key: count}
    return (_with_interval(group, name), _fmt(group.get(f"metric.{name}")),
            {key: _number(group.get(f"metric.{name}")),
             **{f"{key}_{part}": _number(group.get(f"metric.{name}.{part}"))
                for part in INTERVAL_PARTS}})


def table3(frame: pd.DataFrame) -> Table:
    """NGQA Table 3: rows level x method (x model), columns grouped by task: each task's n,
    then its metrics with their 95 % intervals (LaTeX: values and n only)."""
    sources = _table3_columns(frame)
    columns = [Column(f"{task}_{name}", label, TASK_LABELS.get(task, task))
               for task, name, label in sources]
    keys, multi_model = _row_keys(frame)
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
    return Table(index, columns, rows, csv_frame=csv_frame, latex_rows=latex_rows)


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
    keys, _ = _row_keys(frame, with_level=False)
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


def efficiency_table(frame: pd.DataFrame) -> Table:
    data = efficiency_frame(frame)
    multi_model = data["model"].nunique() > 1
    index = [Column("method", "Method")] + ([Column("model", "Model")] if multi_model else [])
    columns = [Column("records", "Records")] + [Column(k, label) for k, label, _ in EFFICIENCY]
    rows = []
    for record in data.to_dict("records"):
        row = [record["method"]] + ([record["model"]] if multi_model else [])
        row.append(str(record["records"]))
        row += [_fmt(record[k], pattern) for k, _label, pattern in EFFICIENCY]
        rows.append(row)
    return Table(index, columns, rows, csv_frame=data if multi_model
                 else data.drop(columns=["model"]),
                 notes=["Means per record over all levels and tasks, errors included (as in "
                        "metrics.json); n in the CSV counts the scored samples.",
                        "The smallest difference each group can detect against another arm "
                        "(80 % power, two-sided 5 %) is in 'Comparing models and methods' "
                        "(detectable.csv).",
                        *tog_notes(frame)])


def tog_notes(frame: pd.DataFrame) -> list[str]:
    """One line per ToG method (and model): calls per answered question beside the bounds,
    and how often the reasoning step stopped the exploration early."""
    if "ms.tog_calls" not in frame.columns:
        return []
    part = frame[frame["ms.tog_calls"].notna()]
    notes = []
    for (method, model), rows in part.groupby(["method", "model"], sort=True):
        weights = rows["n"].clip(lower=1)
        calls = float(np.average(rows["ms.tog_calls"], weights=weights))
        early = float(np.average(rows["ms.tog_stopped_early"], weights=weights))
        notes.append(
            f"{method} ({model}): {calls:.2f} model calls per answered question, the reasoning "
            f"step stopping early in {early:.0%}; at most {int(rows['ms.tog_bound'].iloc[0])} "
            f"here (pruning batched per round), {int(rows['ms.tog_authors_bound'].iloc[0])} by "
            "the ToG authors' bound 2 x width x depth + depth + 1 (Sun et al. 2024).")
    return notes


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
    """Per method (and model): retrieval P/R/F1 over levels and tasks, each group's value
    weighted by the samples it averages over (``ret.n`` from scores.jsonl; the group's ``n``
    when the frame was built without scores)."""
    if "ret.f1" not in frame.columns:
        return pd.DataFrame(columns=["method", "model"] + [n for n, _ in RETRIEVAL])
    part = frame[frame["ret.f1"].notna()]
    keys, _ = _row_keys(part, with_level=False) if not part.empty else ([], False)
    rows = []
    for _, method, model in keys:
        sel = part[(part["method"] == method) & (part["model"] == model)]
        weights = sel["ret.n" if "ret.n" in sel.columns else "n"].astype(float)
        rows.append({"method": method, "model": model,
                     **{name: _weighted(sel, f"ret.{name}", weights) for name, _ in RETRIEVAL}})
    return pd.DataFrame(rows, columns=["method", "model"] + [n for n, _ in RETRIEVAL])


# --- FAM-Bench -------------------------------------------------------------------------------

FAM_TASKS = tuple(t.name for t in _FAM.tasks)
FAM_TASK_LABELS = {t.name: t.label for t in _FAM.tasks}
DISH_TASK = _FAM.tasks[0].name  # Task 1: one condition per item, so accuracy per condition
FAM_TASK_SHORT = {t.name: t.short for t in _FAM.tasks}
FAM_MODES = dict(_FAM.modes)  # display names, in table order
FAM_INPUTS = _FAM.inputs
CONDITIONS = _FAM.labels
MISSING = "-"
# Per task: the spanning header and (metric, label, shown as a percentage) in Table 1 order.
FAM_TABLE1 = {t.name: (t.table_title, t.columns) for t in _FAM.tasks}
# Per task: the spanning header of Table 2 and the metric compared across inputs.
FAM_MODALITY = {t.name: (t.headline_label, t.headline) for t in _FAM.tasks}
_MODALITY_COLUMNS = (("text+image", "T+I"), ("text", "T-only"), ("image", "I-only"))


def fam_method(name: str) -> tuple[str, str]:
    """(mode, input) of a FAM-Bench method name."""
    assert _FAM.split_method is not None
    return _FAM.split_method(name)


def fam_label(method: str) -> str:
    """Display name of a FAM-Bench method: "CoT+KI", or "CoT+KI (text+image)" for a variant."""
    mode, source = fam_method(method)
    label = FAM_MODES.get(mode, mode)
    return label if source == "text" else f"{label} ({source})"


def ngqa_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The NGQA groups (binary, multi_label, text_generation) of a groups frame."""
    return frame[frame["task"].isin(TASKS)]


def fam_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The FAM-Bench groups of a groups frame, with ``mode`` and ``input`` columns added."""
    part = frame[frame["task"].isin(FAM_TASKS)].copy()
    part["mode"] = [fam_method(method)[0] for method in part["method"]]
    part["input"] = [fam_method(method)[1] for method in part["method"]]
    return part


def _number(value: Any) -> float | None:
    """A metric value as a float; None for missing, non-numeric or NaN."""
    if value is None or isinstance(value, bool | str):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if number != number else number


def _fam_cell(value: float | None, percent: bool) -> str:
    if value is None:
        return MISSING
    return f"{100 * value:.2f}" if percent else f"{value:.4f}"


def _fam_delta(first: float | None, second: float | None) -> str:
    """first - second in percentage points, from the rounded percentages shown beside it."""
    if first is None or second is None:
        return MISSING
    delta = round(round(100 * first, 2) - round(100 * second, 2), 2) + 0.0  # no "-0.00"
    return f"{delta:+.2f}"


def _fam_tasks(part: pd.DataFrame) -> list[str]:
    return [task for task in FAM_TASKS if task in set(part["task"])]


def fam_sorted(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """Distinct (model, method) pairs in FAM-Bench display order: per model (as first seen),
    text input first and then each input variant; modes in :data:`FAM_MODES` order (baseline,
    CoT, KI, CoT+KI, KI+limits, CoT+KI+limits, reference), unknown ones after."""
    pairs = list(dict.fromkeys(pairs))
    models = ordered(model for model, _ in pairs)
    methods = ordered(method for _, method in pairs)
    modes = ordered((fam_method(m)[0] for m in methods), tuple(FAM_MODES))
    inputs = ordered((fam_method(m)[1] for m in methods), FAM_INPUTS)

    def rank(pair: tuple[str, str]) -> tuple[int, int, int, int]:
        mode, source = fam_method(pair[1])
        return (models.index(pair[0]), inputs.index(source), modes.index(mode),
                methods.index(pair[1]))

    return sorted(pairs, key=rank)


@dataclass
class FamPool:
    """Table 1's common pool for one model and task, as ``score`` wrote it into a run's
    metrics.json (``pools``): its size, the modes in it, each mode's metric values on it, and
    which of the given runs it came from."""

    n: int
    methods: list[str]
    metrics: dict[str, dict[str, float | None]]
    run_order: int = 0


def fam_prompting(method: str) -> bool:
    """A text-input prompting mode (``fam-<mode>``, not the reference)."""
    mode, source = fam_method(method)
    return source == "text" and mode in FAM_MODES and mode != "reference"


def fam_pool_entries(metrics: Sequence[dict[str, Any]]) -> dict[tuple[str, str], FamPool]:
    """The common pools in the runs' metrics.json by (model, task); of two runs with a pool for
    one (model, task), the later one given counts (as for groups)."""
    out: dict[tuple[str, str], FamPool] = {}
    for order, data in enumerate(metrics):
        entries = data.get("pools") if isinstance(data, dict) else None
        for entry in entries if isinstance(entries, list) else []:
            if not isinstance(entry, dict) or not isinstance(entry.get("metrics"), dict):
                continue
            values = {str(method): {name: _number(_value(stat)) for name, stat in found.items()}
                      for method, found in entry["metrics"].items() if isinstance(found, dict)}
            out[(str(entry.get("model")), str(entry.get("task")))] = FamPool(
                int(entry.get("n") or 0), [str(m) for m in entry.get("methods") or []], values,
                order)
    return out


def fam_pools(part: pd.DataFrame, pools: dict[tuple[str, str], FamPool]
              ) -> tuple[dict[tuple[str, str], FamPool], list[str]]:
    """The pool each (model, task) of ``part`` (a :func:`fam_frame`) is shown on, and a note for
    each (model, task) left unpooled because one of its text-input prompting modes is not in
    the pool its run's score wrote (modes scored in separate runs, or a run scored without
    pools)."""
    rows = part[[fam_prompting(method) for method in part["method"]]]
    used: dict[tuple[str, str], FamPool] = {}
    notes: list[str] = []
    for model in ordered(rows["model"]):
        for task in _fam_tasks(rows):
            chosen = rows[(rows["model"] == model) & (rows["task"] == task)]
            if chosen.empty:
                continue
            pool = pools.get((model, task))
            run_of = dict(zip(chosen["method"], chosen["run_order"], strict=True))
            methods = [m for _, m in fam_sorted((model, m) for m in chosen["method"])]
            outside = methods if pool is None else [
                m for m in methods if m not in pool.methods or run_of[m] != pool.run_order]
            if outside:
                notes.append(f"{model}, {FAM_TASK_SHORT[task]}: full runs, not pooled "
                             f"({', '.join(outside)} not in a common pool with the other modes; "
                             "score every mode in one run to pool them).")
            elif pool is not None:
                used[(model, task)] = pool
    return used, notes


def _table1_value(group: dict | None, pool: FamPool | None, method: str,
                  name: str) -> float | None:
    """A Table 1 cell: the pooled value, or the full-run value for rows outside a pool and for
    the unparseable rate (always 0 on a pool of valid answers)."""
    if pool is None or name == "unparseable_rate":
        return _number(group.get(f"metric.{name}")) if group else None
    return pool.metrics.get(method, {}).get(name)


def _table1_notes(tasks: list[str], pools: dict[tuple[str, str], FamPool] | None,
                  unpooled: list[str]) -> list[str]:
    notes = ["Acc., Top-1 and Unparseable are percentages; the other columns are on the "
             "metric's own scale. '-': not measured. The CSV holds unrounded fractions."]
    if pools is None:
        return notes + ["Each row is its mode's full run (metrics.json has no common pool)."]
    if not pools:
        return notes + unpooled
    notes.append("Per model and task, the text-input prompting modes are scored on their "
                 "common pool: the items every one of them answered validly (Task 1: a "
                 "decision; Task 2: a ranking and a decision for every option). CTC is pooled: "
                 "agreeing over all (rec, not_rec) pairs of the pool. Unparseable and the "
                 "other rows (reference, image input) are full runs; metrics.json has every "
                 "full-run value and the pools.")
    sizes = [f"{model}: " + ", ".join(f"{FAM_TASK_SHORT[task]} n = "
                                      f"{pools[(model, task)].n}"
                                      for task in tasks if (model, task) in pools)
             for model in ordered(model for model, _ in pools)]
    return notes + ["Pool size: " + "; ".join(sizes) + "."] + unpooled


def _table1_row(model: str, method: str, tasks: list[str], lookup: dict[tuple, dict],
                pools: dict[tuple[str, str], FamPool]) -> tuple[list[str], dict[str, Any]]:
    """One Table 1 row: display cells and the CSV record (n and values per task)."""
    mode, source = fam_method(method)
    row = [model, fam_label(method)]
    csv_row: dict[str, Any] = {"model": model, "method": method, "mode": mode, "input": source}
    groups = {task: lookup.get((model, method, task)) for task in tasks}
    row_pools = {task: pools.get((model, task)) if groups[task] and fam_prompting(method)
                 else None for task in tasks}
    for task, group in groups.items():
        pool = row_pools[task]
        csv_row[f"{task}_n"] = pool.n if pool is not None else \
            int(group["n"]) if group else None
        csv_row[f"{task}_pooled"] = pool is not None
    for task, group in groups.items():
        for name, _, percent in FAM_TABLE1[task][1]:
            value = _table1_value(group, row_pools[task], method, name)
            row.append(_fam_cell(value, percent))
            csv_row[f"{task}_{name}"] = value
    return row, csv_row


def fam_table1(frame: pd.DataFrame, pools: dict[tuple[str, str], FamPool] | None = None
               ) -> Table | None:
    """FAM-Bench Table 1: rows model x mode (input variants as extra rows), columns grouped by
    task; None when the runs have no FAM-Bench group. With the runs' ``pools``
    (:func:`fam_pool_entries`), the text-input prompting modes of each model are shown on their
    common pool (:func:`fam_pools`)."""
    part = fam_frame(frame)
    if part.empty:
        return None
    if not pools:
        pools = None
    used, unpooled = fam_pools(part, pools) if pools is not None else (None, [])
    tasks = _fam_tasks(part)
    columns = [Column(f"{task}_{name}", label, FAM_TABLE1[task][0])
               for task in tasks for name, label, _ in FAM_TABLE1[task][1]]
    lookup = {(r["model"], r["method"], r["task"]): r for r in part.to_dict("records")}
    built = [_table1_row(model, method, tasks, lookup, used or {})
             for model, method in fam_sorted(zip(part["model"], part["method"], strict=True))]
    csv_frame = pd.DataFrame([csv_row for _, csv_row in built])
    for task in tasks:
        csv_frame[f"{task}_n"] = csv_frame[f"{task}_n"].astype("Int64")  # no "40.0"
    return Table([Column("model", "Model"), Column("mode", "Mode")], columns,
                 [row for row, _ in built], csv_frame=csv_frame,
                 notes=_table1_notes(tasks, used, unpooled))


def _modality_keys(part: pd.DataFrame) -> list[tuple[str, str]]:
    """(model, mode) pairs with at least one non-text input variant, in display order."""
    variants = part[part["input"] != "text"]
    pairs = set(zip(variants["model"], variants["mode"], strict=True))
    return [(model, mode) for model in ordered(part["model"])
            for mode in ordered(part["mode"], tuple(FAM_MODES)) if (model, mode) in pairs]


def fam_modality(frame: pd.DataFrame) -> Table | None:
    """FAM-Bench Table 2: per (model, mode), Task 1 accuracy and Task 2 top-1 with text+image,
    text-only and image-only input and the differences; None without a non-text variant."""
    part = fam_frame(frame)
    keys = _modality_keys(part)
    if not keys:
        return None
    tasks = _fam_tasks(part)
    values = {(r["model"], r["mode"], r["input"], r["task"]):
              _number(r.get(f"metric.{FAM_MODALITY[r['task']][1]}"))
              for r in part.to_dict("records")}
    columns = []
    for task in tasks:
        group = FAM_MODALITY[task][0]
        columns += [Column(f"{task}_{source.replace('+', '_')}", label, group)
                    for source, label in _MODALITY_COLUMNS]
        columns += [Column(f"{task}_delta_image", "Δimg", group),
                    Column(f"{task}_delta_text", "Δtxt", group)]
    rows, csv_rows = [], []
    for model, mode in keys:
        row = [model, FAM_MODES.get(mode, mode)]
        csv_row: dict[str, Any] = {"model": model, "mode": mode}
        for task in tasks:
            both, text, image = (values.get((model, mode, source, task))
                                 for source, _ in _MODALITY_COLUMNS)
            row += [_fam_cell(v, True) for v in (both, text, image)]
            row += [_fam_delta(both, text), _fam_delta(both, image)]
            csv_row.update({f"{task}_text_image": both, f"{task}_text": text,
                            f"{task}_image": image,
                            f"{task}_delta_image": _difference(both, text),
                            f"{task}_delta_text": _difference(both, image)})
        rows.append(row)
        csv_rows.append(csv_row)
    notes = ["Percentages. T+I: text and image input; Δimg = T+I − T-only and "
             "Δtxt = T+I − I-only, in points of the rounded cells. The CSV holds unrounded "
             "fractions."]
    return Table([Column("model", "Model"), Column("mode", "Mode")], columns, rows,
                 csv_frame=pd.DataFrame(csv_rows), notes=notes)


def _difference(first: float | None, second: float | None) -> float | None:
    return None if first is None or second is None else first - second


def fam_condition_frame(metrics: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """Task 1 decision accuracy per condition from the fam_dish condition breakdowns: one row
    per (method, model, condition); when runs repeat one, the last run given wins."""
    rows = []
    for data in metrics:
        breakdowns = data.get("breakdowns") if isinstance(data, dict) else None
        entries = breakdowns.get("condition") if isinstance(breakdowns, dict) else None
        for entry in entries if isinstance(entries, list) else []:
            row = _condition_row(entry)
            if row is not None:
                rows.append(row)
    frame = pd.DataFrame(rows, columns=["method", "model", "condition", "n", "accuracy"])
    return frame.drop_duplicates(["method", "model", "condition"], keep="last")


def _condition_row(entry: Any) -> dict[str, Any] | None:
    if not isinstance(entry, dict) or entry.get("task") != DISH_TASK:
        return None
    metrics = entry.get("metrics")
    accuracy = _number(_value(metrics.get("accuracy"))) if isinstance(metrics, dict) else None
    if accuracy is None:
        return None
    return {"method": str(entry.get("method")), "model": str(entry.get("model")),
            "condition": str(entry.get("condition")), "n": entry.get("n", 0),
            "accuracy": accuracy}


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


def ngqa_tables(frame: pd.DataFrame) -> dict[str, Table]:
    """NGQA Table 3, efficiency and retrieval over the NGQA groups; none without any."""
    part = ngqa_frame(frame)
    if part.empty:
        return {}
    return {"table3": table3(part), "efficiency": efficiency_table(part),
            "retrieval": retrieval_table(part)}


# FAM-Bench Figure 4: non-expert humans on 100 held-out items (per task: metric, figure).
PAPER_HUMAN = {t.name: (t.headline, t.human_paper) for t in _FAM.tasks
               if t.human_paper is not None}
PAPER_HUMAN_ITEMS = 100
HUMAN_SOURCE = "FAM-Bench (arXiv:2605.31410) Figure 4: non-expert humans, 100 held-out items"
HUMAN_LEVEL = 0.95
HUMAN_FEW = 30  # fewer answered items than this: the row says the sample is small
PROPORTIONS = frozenset({"accuracy", "top1_accuracy"})  # a 0/1 value per item
HUMAN_INTERVALS = ("Intervals are 95 %: Wilson score intervals for proportions (accuracy, "
                   "top-1; the paper's from its 100 items), the score's bootstrap percentile "
                   "interval for other metrics.")


def human_table(frame: pd.DataFrame) -> Table | None:
    """People (``human/<participant>`` runs of ``nutrireason human serve``) beside the
    paper's human baseline, each figure with its 95 % interval and, under
    :data:`HUMAN_FEW` items, a note that the sample is small; None without human runs on a
    task the paper reports."""
    part = frame[frame["model"].str.startswith("human/") & frame["task"].isin(PAPER_HUMAN)]
    if part.empty:
        return None
    rows, csv_rows = [], []
    for _, group in part.sort_values(["task", "model"]).iterrows():
        metric, paper = PAPER_HUMAN[group["task"]]
        n = int(group.get("n") or 0)
        value = _number(group.get(f"metric.{metric}"))
        low, high = _human_interval(group, metric, value, n)
        paper_low, paper_high = _wilson(round(paper * PAPER_HUMAN_ITEMS), PAPER_HUMAN_ITEMS)
        note = (f"n = {n}: fewer than {HUMAN_FEW} items; the interval is wide, compare with "
                "care" if n < HUMAN_FEW else "")
        participant = group["model"].split("/", 1)[1]
        rows.append([participant, FAM_TASK_LABELS[group["task"]], metric, f"{n:,}",
                     _percent_with_interval(value, low, high),
                     _percent_with_interval(paper, paper_low, paper_high), note])
        csv_rows.append({"participant": participant, "task": group["task"], "metric": metric,
                         "items": n, "value": value, "low": low, "high": high, "paper": paper,
                         "paper_low": paper_low, "paper_high": paper_high, "note": note})
    return Table([Column("participant", "Participant"), Column("task", "Task"),
                  Column("metric", "Metric")],
                 [Column("items", "Items"), Column("ours", "This run [95 % interval]"),
                  Column("paper", "Paper (humans) [95 % interval]"),
                  Column("note", "Sample")], rows, csv_frame=pd.DataFrame(csv_rows),
                 notes=[HUMAN_SOURCE, HUMAN_INTERVALS])


def _human_interval(group: pd.Series, metric: str, value: float | None,
                    n: int) -> tuple[float | None, float | None]:
    """The 95 % interval of one human figure: Wilson for a proportion, else the bootstrap
    percentile interval ``score`` wrote (``metric.<name>.low`` / ``.high``)."""
    if value is None or n < 1:
        return None, None
    if metric in PROPORTIONS:
        return _wilson(round(value * n), n)
    return _number(group.get(f"metric.{metric}.low")), _number(group.get(f"metric.{metric}.high"))


def _wilson(successes: int, n: int) -> tuple[float, float]:
    from nutrireason.scoring.stats import wilson_interval

    return wilson_interval(successes, n, HUMAN_LEVEL)


def _percent_with_interval(value: float | None, low: float | None, high: float | None) -> str:
    if value is None:
        return ""
    if low is None or high is None:
        return f"{value:.1%}"
    return f"{value:.1%} [{low:.1%}, {high:.1%}]"


def review_tables(stats: dict[str, Any]) -> dict[str, Table]:
    """Expert review (``review stats`` of a reviews export): per condition, and agreement."""
    kinds = sorted(stats["kinds"])
    rows = [[name, f"{row['decisions']:,}", f"{row['label_kept_rate']:.1%}",
             f"{row['rationale_edits']:,}", *(f"{row['kinds'].get(kind, 0):,}" for kind in kinds)]
            for name, row in stats["conditions"].items()]
    conditions = Table([Column("condition", "Condition")],
                       [Column("decisions", "Decisions"), Column("label_kept", "Label kept"),
                        Column("rationale_edits", "Rationale edited"),
                        *(Column(kind, kind) for kind in kinds)], rows)
    agreement = []
    for pair in stats["inter_reviewer"]["pairs"]:
        agreement.append(["Cohen's kappa", " / ".join(pair["reviewers"]), f"{pair['items']:,}",
                          _fmt(pair["cohen_kappa"], "{:.3f}"),
                          _fmt(pair["agreement"], "{:.1%}")])
    if stats["inter_reviewer"]["fleiss_items"]:
        agreement.append(["Fleiss' kappa", "all reviewers",
                          f"{stats['inter_reviewer']['fleiss_items']:,}",
                          _fmt(stats["inter_reviewer"]["fleiss_kappa"], "{:.3f}"), ""])
    rules = stats["rules_vs_experts"]
    agreement.append(["Cohen's kappa", "rules vs experts", f"{rules['decisions']:,}",
                      _fmt(rules["cohen_kappa"], "{:.3f}"), _fmt(rules["agreement"], "{:.1%}")])
    return {"review_conditions": conditions,
            "review_agreement": Table([Column("statistic", "Statistic"),
                                       Column("between", "Between")],
                                      [Column("entries", "Entries"), Column("value", "Value"),
                                       Column("raw", "Raw agreement")], agreement)}


def fam_tables(frame: pd.DataFrame, pools: dict[tuple[str, str], FamPool] | None = None
               ) -> dict[str, Table]:
    """FAM-Bench Table 1 (on each model's common pool when the runs' metrics.json have
    ``pools``, see :func:`fam_pool_entries`), Table 2 when some method has a non-text input
    variant, and people beside the paper's human baseline when there are human runs."""
    built = {"fam_table1": fam_table1(frame, pools), "fam_modality": fam_modality(frame),
             "human_baseline": human_table(frame)}
    return {name: table for name, table in built.items() if table is not None}


READING_WARN = 0.05  # a group with more of its answers cut off than this is flagged


def _counts_text(counts: Any) -> str:
    if not isinstance(counts, dict) or not counts:
        return ""
    return ", ".join(f"{name} {count:,}" for name, count in
                     sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def reading_table(frame: pd.DataFrame) -> Table | None:
    """How each group's answers were read: the shares unparseable, cut off at the token
    limit, declined and hedged, the reasoning tokens per sample, and the count of each rule
    and reason (metrics.json ``reading``); None when no group has readings."""
    if not _has(frame, "read.truncated_rate"):
        return None
    rows, flagged = [], []
    for _, group in frame.sort_values(["task", "level", "method", "model"]).iterrows():
        if not isinstance(group.get("read.rules"), dict):
            continue
        truncated = _number(group.get("read.truncated_rate")) or 0.0
        if truncated > READING_WARN:
            flagged.append(f"{group['method']} / {group['model']} / {group['task']} "
                           f"{group['level']}".strip())
        rows.append([group["method"], group["model"], group["task"], group["level"],
                     f"{int(group.get('n') or 0):,}",
                     _fmt(_number(group.get("metric.unparseable_rate")), "{:.1%}"),
                     _fmt(truncated, "{:.1%}") + (" (!)" if truncated > READING_WARN else ""),
                     _fmt(_number(group.get("read.refusal_rate")), "{:.1%}"),
                     _fmt(_number(group.get("read.hedge_rate")), "{:.1%}"),
                     _fmt(_number(group.get("read.reasoning_tokens")), "{:.1f}"),
                     _counts_text(group.get("read.rules")),
                     _counts_text(group.get("read.reasons"))])
    if not rows:
        return None
    notes = ["Answers are read from the final answer only: reasoning (think blocks, analysis "
             "channels, a reasoning field) is set apart; an answer cut off at the token limit "
             "is unparseable (truncated) and never read; a refusal or a hedge is unparseable "
             "too. Reasoning tokens are the server's count, else estimated from the share of "
             "the reasoning in the output."]
    if flagged:
        notes.append(f"More than {READING_WARN:.0%} of the answers were cut off in: "
                     f"{'; '.join(flagged)}. Raise --max-tokens and run again.")
    return Table([Column("method", "Method"), Column("model", "Model"), Column("task", "Task"),
                  Column("level", "Level")],
                 [Column("n", "n"), Column("unparseable", "Unparseable"),
                  Column("truncated", "Cut off"), Column("refusal", "Refusals"),
                  Column("hedge", "Hedges"), Column("reasoning_tokens", "Reasoning tokens"),
                  Column("rules", "Read by"), Column("reasons", "Not counted because")],
                 rows, notes=notes)


EXTRACTOR_METRICS = ("accuracy", "subset_accuracy", "rougeL", "top1_accuracy",
                     "unparseable_rate")


def extractor_table(metrics: Sequence[dict[str, Any]]) -> Table | None:
    """Runs with ``--extractor``: per group, how many answers the extractor model read and
    the main metrics as the rules read the answers and with the extractor's readings."""
    rows = []
    for data in metrics:
        groups = {(g["method"], g["model"], g["task"], g["level"]): g
                  for g in data.get("groups") or []}
        for alt in data.get("with_extractor") or []:
            key = (alt["method"], alt["model"], alt["task"], alt["level"])
            base = (groups.get(key) or {}).get("metrics") or {}
            shown = [name for name in EXTRACTOR_METRICS if name in alt["metrics"]]
            cells = "; ".join(f"{name} {_fmt(_value(base.get(name)))} -> "
                              f"{_fmt(_value(alt['metrics'][name]))}" for name in shown)
            rows.append([*key, f"{int(alt.get('n') or 0):,}",
                         f"{int(alt.get('extracted') or 0):,}", cells])
    if not rows:
        return None
    return Table([Column("method", "Method"), Column("model", "Model"), Column("task", "Task"),
                  Column("level", "Level")],
                 [Column("n", "n"), Column("extracted", "Read by the extractor"),
                  Column("metrics", "Rules -> with the extractor")], rows,
                 notes=["--extractor: a second model read the final answers no rule could "
                        "read (never those cut off, refused or hedged). The tables above score "
                        "the rules' reading; this one shows the scores with the extractor's."])


def reading_tables(frame: pd.DataFrame,
                   metrics: Sequence[dict[str, Any]] = ()) -> dict[str, Table]:
    """The reading table and, for runs with ``--extractor``, the extractor's table."""
    found = {"reading": reading_table(frame), "extractor": extractor_table(metrics)}
    return {name: table for name, table in found.items() if table is not None}


LATEX_TABLES = ("table3", "fam_table1", "fam_modality")


def write_tables(tables: dict[str, Table], out: Path) -> list[Path]:
    """``<name>.md`` and ``<name>.csv`` per table under ``out``, and ``<name>.tex`` for
    Table 3 and the FAM-Bench tables."""
    written = []
    for name, table in tables.items():
        written.append(write_text_atomic(out / f"{name}.md", to_markdown(table)))
        written.append(write_text_atomic(out / f"{name}.csv", to_csv(table)))
        if name in LATEX_TABLES:
            written.append(write_text_atomic(out / f"{name}.tex", to_latex(table)))
    return written


# --- comparing arms ------------------------------------------------------------------------


def detectable_table(metrics: Sequence[dict[str, Any]]) -> Table | None:
    """Per group of every run: its headline metric with the clustered interval, the cluster
    count and design effect, and the minimum difference a comparison with another arm of the
    same spread detects at this size (80 % power, two-sided 5 %); None without standard
    errors (runs scored before clustered intervals)."""
    from nutrireason.scoring.compare import default_metric
    from nutrireason.scoring.stats import detectable_difference

    rows, csv_rows = [], []
    for data in metrics:
        for group in data.get("groups") or []:
            name = default_metric(group["task"])
            stat = (group.get("metrics") or {}).get(name) or {}
            if stat.get("se") is None or not group.get("n"):
                continue
            clusters = group.get("clusters") or {}
            # the se of one arm's mean; a difference of two such arms has twice its variance
            detectable = detectable_difference(2 * stat["se"] ** 2 * group["n"], group["n"])
            record = {"task": group["task"], "level": group["level"],
                      "method": group["method"], "model": group["model"], "metric": name,
                      "n": group["n"], "clusters": clusters.get("count"),
                      "cluster_by": clusters.get("by"), "value": stat["value"],
                      "low": stat["low"], "high": stat["high"],
                      "naive_low": stat.get("naive_low"), "naive_high": stat.get("naive_high"),
                      "design_effect": stat.get("design_effect"), "detectable": detectable}
            csv_rows.append(record)
            rows.append([FAM_TASK_LABELS.get(group["task"], TASK_LABELS.get(group["task"],
                                                                          group["task"])),
                         group["level"], group["method"], group["model"], name,
                         f"{group['n']:,} ({clusters.get('count', '')} by "
                         f"{clusters.get('by', '-')})",
                         f"{stat['value']:.3f} [{stat['low']:.3f}, {stat['high']:.3f}]",
                         _fmt(stat.get("design_effect"), "{:.2f}"), f"{detectable:.3f}"])
    if not rows:
        return None
    index = [Column("task", "Task"), Column("level", "Level"), Column("method", "Method"),
             Column("model", "Model")]
    columns = [Column("metric", "Metric"), Column("n", "n (clusters)"),
               Column("value", "Value [95 % clustered interval]"),
               Column("design_effect", "Design effect"),
               Column("detectable", "Detectable difference")]
    return Table(index, columns, rows, csv_frame=pd.DataFrame(csv_rows), notes=[
        "Intervals resample the task's clusters (NGQA: the user; FAM-Bench: the recipe, or a "
        "ranking item's dish set), so questions about one user or dish count once; the "
        "design effect is the variance over that of independent samples; the independent "
        "(naive) intervals are in the CSV.",
        "Detectable difference: the smallest difference in the metric that a comparison "
        "with another arm of the same spread on these items finds with 80 % power at a "
        "two-sided 5 % level (`nutrireason power` for other settings)."])


def comparison_table(comparison: dict[str, Any]) -> Table:
    """Each arm against its task's reference arm per task and level (``scoring.compare.
    arm_comparisons``): the paired difference, its 95 % and Holm-family intervals, p."""
    rows = []
    for row in comparison["groups"]:
        task = FAM_TASK_LABELS.get(row["task"], TASK_LABELS.get(row["task"], row["task"]))
        rows.append([row["arm"], row["reference"], task, row["level"], row["metric"],
            f"{row['n']:,} ({row['clusters']:,})", f"{row['mean_a']:.3f}",
            f"{row['mean_b']:.3f}", f"{row['difference']:+.3f}",
            f"[{row['low']:+.3f}, {row['high']:+.3f}]",
            f"[{row['corrected_low']:+.3f}, {row['corrected_high']:+.3f}]",
            f"{row['p_holm']:.3g}", row["verdict"].replace("A better", "better").replace(
                "B better", "worse")])
    index = [Column("arm", "Arm"), Column("reference", "Reference arm"), Column("task", "Task"),
             Column("level", "Level")]
    columns = [Column("metric", "Metric"), Column("n", "n (clusters)"),
               Column("mean_a", "Arm"), Column("mean_b", "Reference"),
               Column("difference", "Difference"), Column("interval", "95 % interval"),
               Column("corrected", "Corrected interval"), Column("p_holm", "p (Holm)"),
               Column("verdict", "Verdict")]
    return Table(index, columns, rows, csv_frame=pd.DataFrame(comparison["groups"]), notes=[
        "Each arm minus its task's reference (the first arm that answered the task) on the "
        "items both answered; intervals are paired cluster bootstrap percentiles; corrected "
        f"intervals hold for all {len(comparison['groups'])} rows at once (Bonferroni); p is exact "
        "McNemar (clustered McNemar when clusters hold several items) for 0/1 metrics, the "
        "paired bootstrap otherwise, Holm-adjusted over the rows. `nutrireason compare RUN_A "
        "RUN_B` compares any other pair."])
