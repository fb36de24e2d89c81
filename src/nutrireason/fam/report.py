"""FAM-Bench's part of a report: Table 1 (both tasks per model and mode), Table 2 (input
modality), people beside the paper's human baseline, and the radar of Task 1 decision
accuracy per condition.

Table 1 shows each model's text-input prompting modes on their common pool of validly
answered items (paper Table 1 caption) as ``score`` wrote it into metrics.json's ``pools``;
without a pool it shows each mode's full run. Missing cells are shown as "-".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from nutrireason.display.figures import COLORS, DPI, LINESTYLES, RC, Plot, save_figure
from nutrireason.display.groups import breakdown_entries, number, ordered, stat_value
from nutrireason.display.section import ReportInput, Section
from nutrireason.display.table import Column, Table
from nutrireason.schema import get_benchmark

_FAM = get_benchmark("fam")
MISSING = "-"  # a cell that was not measured
CONDITION_LABELS = {
    "hypertension": "Hypertension", "type_2_diabetes": "Type 2 diabetes",
    "chronic_kidney_disease": "CKD", "gerd": "GERD", "nafld": "NAFLD", "ibs": "IBS",
    "osteoporosis": "Osteoporosis", "stroke": "Stroke", "cardiovascular_disease": "CVD",
    "obesity": "Obesity", "gout": "Gout", "celiac_disease": "Celiac disease",
    "iron_deficiency_anemia": "Iron-deficiency\nanemia",
}


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


def fam_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The FAM-Bench groups of a groups frame, with ``mode`` and ``input`` columns added."""
    part = frame[frame["task"].isin(FAM_TASKS)].copy()
    part["mode"] = [fam_method(method)[0] for method in part["method"]]
    part["input"] = [fam_method(method)[1] for method in part["method"]]
    return part


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
            values = {str(method): {name: number(stat_value(stat)) for name, stat in found.items()}
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


def _table1stat_value(group: dict | None, pool: FamPool | None, method: str,
                  name: str) -> float | None:
    """A Table 1 cell: the pooled value, or the full-run value for rows outside a pool and for
    the unparseable rate (always 0 on a pool of valid answers)."""
    if pool is None or name == "unparseable_rate":
        return number(group.get(f"metric.{name}")) if group else None
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
            value = _table1stat_value(group, row_pools[task], method, name)
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
                 notes=_table1_notes(tasks, used, unpooled), latex=True)


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
              number(r.get(f"metric.{FAM_MODALITY[r['task']][1]}"))
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
                 csv_frame=pd.DataFrame(csv_rows), notes=notes, latex=True)


def _difference(first: float | None, second: float | None) -> float | None:
    return None if first is None or second is None else first - second


def fam_condition_frame(metrics: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """Task 1 decision accuracy per condition from the fam_dish condition breakdowns: one row
    per (method, model, condition); when runs repeat one, the last run given wins."""
    rows = [row for entry in breakdown_entries(metrics, "condition")
            if (row := _condition_row(entry)) is not None]
    frame = pd.DataFrame(rows, columns=["method", "model", "condition", "n", "accuracy"])
    return frame.drop_duplicates(["method", "model", "condition"], keep="last")


def _condition_row(entry: dict[str, Any]) -> dict[str, Any] | None:
    if entry.get("task") != DISH_TASK:
        return None
    metrics = entry.get("metrics")
    accuracy = number(stat_value(metrics.get("accuracy"))) if isinstance(metrics, dict) else None
    if accuracy is None:
        return None
    return {"method": str(entry.get("method")), "model": str(entry.get("model")),
            "condition": str(entry.get("condition")), "n": entry.get("n", 0),
            "accuracy": accuracy}


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
        value = number(group.get(f"metric.{metric}"))
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
    return number(group.get(f"metric.{metric}.low")), number(group.get(f"metric.{metric}.high"))


def _wilson(successes: int, n: int) -> tuple[float, float]:
    from nutrireason.scoring.stats import wilson_interval

    return wilson_interval(successes, n, HUMAN_LEVEL)


def _percent_with_interval(value: float | None, low: float | None, high: float | None) -> str:
    if value is None:
        return ""
    if low is None or high is None:
        return f"{value:.1%}"
    return f"{value:.1%} [{low:.1%}, {high:.1%}]"


def fam_tables(frame: pd.DataFrame, pools: dict[tuple[str, str], FamPool] | None = None
               ) -> dict[str, Table]:
    """FAM-Bench Table 1 (on each model's common pool when the runs' metrics.json have
    ``pools``, see :func:`fam_pool_entries`), Table 2 when some method has a non-text input
    variant, and people beside the paper's human baseline when there are human runs."""
    built = {"fam_table1": fam_table1(frame, pools), "fam_modality": fam_modality(frame),
             "human_baseline": human_table(frame)}
    return {name: table for name, table in built.items() if table is not None}


def condition_label(condition: str) -> str:
    return CONDITION_LABELS.get(condition, condition.replace("_", " ").capitalize())


def _radar_series(data: pd.DataFrame, conditions: list[str]) -> list[tuple[str, np.ndarray]]:
    """(legend label, accuracy per condition, NaN where missing) per (method, model)."""
    multi_model = data["model"].nunique() > 1
    lookup = {(r.method, r.model, r.condition): r.accuracy for r in data.itertuples()}
    series = []
    for model, method in fam_sorted(zip(data["model"], data["method"], strict=True)):
        label = fam_label(method) + (f" - {model}" if multi_model else "")
        values = [lookup.get((method, model, c), np.nan) for c in conditions]
        series.append((label, np.array(values, dtype=float)))
    return series


def fam_radar_plot(data: pd.DataFrame, out: Path) -> Plot | None:
    """FAM-Bench Task 1 decision accuracy per condition: one polygon per (method, model) over
    the conditions present (``data`` from :func:`tables.fam_condition_frame`)."""
    if data.empty:
        return None
    conditions = ordered(data["condition"], CONDITIONS)
    angles = np.linspace(0.0, 2 * np.pi, len(conditions), endpoint=False)
    closed = np.append(angles, angles[:1])
    with matplotlib.rc_context(RC):
        figure = Figure(figsize=(9.5, 6.5), dpi=DPI, layout="constrained")
        ax = figure.add_subplot(projection="polar")
        for i, (label, values) in enumerate(_radar_series(data, conditions)):
            ring = np.append(values, values[:1])
            color = COLORS[i % len(COLORS)]
            ax.plot(closed, ring, color=color, linewidth=1.4, marker="o", markersize=3,
                    linestyle=LINESTYLES[(i // len(COLORS)) % len(LINESTYLES)], label=label)
            if np.isfinite(ring).all():
                ax.fill(closed, ring, color=color, alpha=0.06)
        ax.set_xticks(angles, [condition_label(c) for c in conditions])
        ax.tick_params(axis="x", pad=8)
        ax.set_ylim(0.0, 1.0)
        ax.set_yticks([0.25, 0.5, 0.75, 1.0], ["25%", "50%", "75%", "100%"], color="#5b6570")
        ax.set_rlabel_position(float(np.degrees(angles[1] / 2)) if len(angles) > 1 else 0.0)
        figure.legend(loc="outside right upper", frameon=False)
        figure.suptitle("FAM-Bench Task 1: decision accuracy per condition")
    return save_figure(figure, out, "fam_radar",
                       "FAM-Bench Task 1 decision accuracy per condition")


def report_section(report: ReportInput) -> Section | None:
    """Tables 1 and 2, the human baseline and the condition radar over the FAM-Bench groups of
    the runs; None without any."""
    built = fam_tables(report.frame, fam_pool_entries(report.metrics))
    if not built:
        return None
    radar = fam_radar_plot(fam_condition_frame(report.metrics), report.out)
    return Section("fam", built, Path(__file__).with_name("report.html.j2"),
                   [radar] if radar is not None else [])
