"""The report's own tables, over every benchmark: how answers were read (and with the
extractor model), the clustered intervals and detectable differences, paired comparisons of
arms, and the expert review's agreement. A benchmark's paper tables are in its own package
(:class:`nutrireason.display.section.Section`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from nutrireason.display.groups import fmt, has, number, stat_value, task_labels
from nutrireason.display.table import Column, Table
from nutrireason.schema import benchmark_names, get_benchmark


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
                          fmt(pair["cohen_kappa"], "{:.3f}"),
                          fmt(pair["agreement"], "{:.1%}")])
    if stats["inter_reviewer"]["fleiss_items"]:
        agreement.append(["Fleiss' kappa", "all reviewers",
                          f"{stats['inter_reviewer']['fleiss_items']:,}",
                          fmt(stats["inter_reviewer"]["fleiss_kappa"], "{:.3f}"), ""])
    rules = stats["rules_vs_experts"]
    agreement.append(["Cohen's kappa", "rules vs experts", f"{rules['decisions']:,}",
                      fmt(rules["cohen_kappa"], "{:.3f}"), fmt(rules["agreement"], "{:.1%}")])
    return {"review_conditions": conditions,
            "review_agreement": Table([Column("statistic", "Statistic"),
                                       Column("between", "Between")],
                                      [Column("entries", "Entries"), Column("value", "Value"),
                                       Column("raw", "Raw agreement")], agreement)}


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
    if not has(frame, "read.truncated_rate"):
        return None
    rows, flagged = [], []
    for _, group in frame.sort_values(["task", "level", "method", "model"]).iterrows():
        if not isinstance(group.get("read.rules"), dict):
            continue
        truncated = number(group.get("read.truncated_rate")) or 0.0
        if truncated > READING_WARN:
            flagged.append(f"{group['method']} / {group['model']} / {group['task']} "
                           f"{group['level']}".strip())
        rows.append([group["method"], group["model"], group["task"], group["level"],
                     f"{int(group.get('n') or 0):,}",
                     fmt(number(group.get("metric.unparseable_rate")), "{:.1%}"),
                     fmt(truncated, "{:.1%}") + (" (!)" if truncated > READING_WARN else ""),
                     fmt(number(group.get("read.refusal_rate")), "{:.1%}"),
                     fmt(number(group.get("read.hedge_rate")), "{:.1%}"),
                     fmt(number(group.get("read.reasoning_tokens")), "{:.1f}"),
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
            cells = "; ".join(f"{name} {fmt(stat_value(base.get(name)))} -> "
                              f"{fmt(stat_value(alt['metrics'][name]))}" for name in shown)
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


# --- comparing arms ------------------------------------------------------------------------


def detectable_table(metrics: Sequence[dict[str, Any]]) -> Table | None:
    """Per group of every run: its headline metric with the clustered interval, the cluster
    count and design effect, and the minimum difference a comparison with another arm of the
    same spread detects at this size (80 % power, two-sided 5 %); None without standard
    errors (runs scored before clustered intervals)."""
    from nutrireason.scoring.compare import default_metric
    from nutrireason.scoring.stats import detectable_difference

    rows, csv_rows = [], []
    labels = task_labels()
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
            rows.append([labels.get(group["task"], group["task"]),
                         group["level"], group["method"], group["model"], name,
                         f"{group['n']:,} ({clusters.get('count', '')} by "
                         f"{clusters.get('by', '-')})",
                         f"{stat['value']:.3f} [{stat['low']:.3f}, {stat['high']:.3f}]",
                         fmt(stat.get("design_effect"), "{:.2f}"), f"{detectable:.3f}"])
    if not rows:
        return None
    index = [Column("task", "Task"), Column("level", "Level"), Column("method", "Method"),
             Column("model", "Model")]
    columns = [Column("metric", "Metric"), Column("n", "n (clusters)"),
               Column("value", "Value [95 % clustered interval]"),
               Column("design_effect", "Design effect"),
               Column("detectable", "Detectable difference")]
    return Table(index, columns, rows, csv_frame=pd.DataFrame(csv_rows), notes=[
        f"Intervals resample the task's clusters ({cluster_units()}), so questions about one "
        "user or dish count once; the "
        "design effect is the variance over that of independent samples; the independent "
        "(naive) intervals are in the CSV.",
        "Detectable difference: the smallest difference in the metric that a comparison "
        "with another arm of the same spread on these items finds with 80 % power at a "
        "two-sided 5 % level (`nutrireason power` for other settings)."])


def comparison_table(comparison: dict[str, Any]) -> Table:
    """Each arm against its task's reference arm per task and level (``scoring.compare.
    arm_comparisons``): the paired difference, its 95 % and Holm-family intervals, p."""
    rows = []
    labels = task_labels()
    for row in comparison["groups"]:
        task = labels.get(row["task"], row["task"])
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


def cluster_units() -> str:
    """What each registered benchmark's samples cluster in: "<title>: <unit>; ..."."""
    return "; ".join(f"{spec.title}: {spec.cluster_unit}" for spec in map(
        get_benchmark, benchmark_names()) if spec.cluster_unit)


STAT_PREFIX = "ms."  # the groups frame's columns of the methods' pooled statistics


def method_notes(frame: pd.DataFrame) -> dict[tuple[str, str], str]:
    """Per (method, model) with method statistics in metrics.json, in sorted order: the
    sentence the method declares (``MethodInfo.stats_note``) over its statistics pooled
    across levels and tasks, each group weighted by its scored samples."""
    from nutrireason.methods.base import method_info

    columns = [c for c in frame.columns if c.startswith(STAT_PREFIX)]
    part = frame[frame[columns].notna().any(axis=1)] if columns else frame.iloc[0:0]
    notes = {}
    for (method, model), rows in part.groupby(["method", "model"], sort=True):
        info = method_info(method)
        if info is None or not info.stats_note:
            continue
        pooled = {}
        for column in columns:
            known = rows[rows[column].notna()]
            if not known.empty:
                pooled[column[len(STAT_PREFIX):]] = float(np.average(
                    known[column].astype(float), weights=known["n"].clip(lower=1)))
        notes[(str(method), str(model))] = info.stats_note.format(**pooled)
    return notes
