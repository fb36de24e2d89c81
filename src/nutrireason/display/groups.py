"""The groups of every run's metrics.json as one frame, and the small helpers every table
uses: display order, formatting, the benchmarks' task labels and level order.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import pandas as pd

from nutrireason.schema import GROUP_KEYS, SampleScore, benchmark_names, get_benchmark


def task_labels() -> dict[str, str]:
    """Every registered benchmark's task names and their display labels."""
    return {task.name: task.label for name in benchmark_names()
            for task in get_benchmark(name).tasks}


def task_order() -> tuple[str, ...]:
    """Every registered benchmark's task names, in registration and declaration order."""
    return tuple(task_labels())


def level_order() -> tuple[str, ...]:
    """Every registered benchmark's levels, in registration and declaration order."""
    return tuple(dict.fromkeys(level for name in benchmark_names()
                               for level in get_benchmark(name).levels))


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
                row[f"metric.{name}"] = stat_value(stat)
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
                row["ret.n"] = counts.get(tuple(group[k] for k in GROUP_KEYS), 0)
            rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        frame = pd.DataFrame(columns=["run_order", "run", "method", "model", "task", "level",
                                      "n", "errors", "error_rate"])
    # Several runs may score the same (level, method, model, task): the last run given wins.
    return frame.drop_duplicates(["level", "method", "model", "task"], keep="last")


def _retrieval_counts(scores: Iterable[SampleScore]) -> dict[tuple[str, ...], int]:
    counts: dict[tuple[str, ...], int] = defaultdict(int)
    for score in scores:
        if "retrieval_f1" in score.values:
            counts[(score.method, score.model, score.task, score.level)] += 1
    return dict(counts)


def breakdown_entries(metrics: Sequence[dict[str, Any]], name: str) -> Iterator[dict[str, Any]]:
    """Every run's ``breakdowns[name]`` entries (metrics.json), in run order; runs without
    the breakdown, and entries that are not objects, are skipped."""
    for data in metrics:
        breakdowns = data.get("breakdowns") if isinstance(data, dict) else None
        entries = breakdowns.get(name) if isinstance(breakdowns, dict) else None
        yield from (e for e in (entries if isinstance(entries, list) else [])
                    if isinstance(e, dict))


def stat_value(stat: Any) -> float | None:
    """A metrics.json value: the ``value`` of a statistic with an interval, or the number."""
    if isinstance(stat, dict):
        return stat.get("value")
    return stat if isinstance(stat, int | float) else None


def ordered(values: Iterable[str], preferred: Sequence[str] = ()) -> list[str]:
    """Distinct values: the ``preferred`` ones in that order, then others in first-seen order."""
    seen = list(dict.fromkeys(values))
    return [v for v in preferred if v in seen] + [v for v in seen if v not in preferred]


def fmt(value: Any, pattern: str = "{:.4f}") -> str:
    """``value`` formatted by ``pattern``; "" for None or NaN."""
    if value is None or (isinstance(value, float) and value != value):  # None or NaN
        return ""
    return pattern.format(float(value))


def has(frame: pd.DataFrame, column: str) -> bool:
    """Whether ``frame`` has ``column`` with at least one value."""
    return column in frame.columns and bool(frame[column].notna().any())


def row_keys(frame: pd.DataFrame, with_level: bool = True) -> tuple[list[tuple], bool]:
    """Row identities in display order, and whether the model is a row key (more than one)."""
    multi_model = frame["model"].nunique() > 1
    methods = ordered(frame["method"])
    models = ordered(frame["model"])
    keys = {(r.level, r.method, r.model) for r in frame.itertuples()}
    levels = ordered(frame["level"], level_order()) if with_level else [None]
    out = []
    for level in levels:
        for method in methods:
            for model in models:
                if not with_level and any(k[1:] == (method, model) for k in keys):
                    out.append((None, method, model))
                elif (level, method, model) in keys:
                    out.append((level, method, model))
    return out, multi_model


def number(value: Any) -> float | None:
    """A metric value as a float; None for missing, non-numeric or NaN."""
    if value is None or isinstance(value, bool | str):
        return None
    try:
        found = float(value)
    except (TypeError, ValueError):
        return None
    return None if found != found else found
