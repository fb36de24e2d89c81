"""Reports over scored runs: paper-shaped tables, figures and one self-contained HTML page.

``build_report(run_dirs, out)`` reads each run's ``metrics.json`` and ``scores.jsonl`` (both
from ``nutrireason score``) and ``records.jsonl`` and writes into ``out``:

* when the runs have NGQA groups (binary, multi_label, text_generation):
  ``table3.md``/``.csv``/``.tex`` (NGQA Table 3: level x method by task metrics, each task's
  n and each value's 95 % interval; the LaTeX values and n only),
  ``efficiency.md``/``.csv`` and ``retrieval.md``/``.csv``, ``efficiency.png``/``.svg``
  (Figure 4) and ``retrieval.png``/``.svg`` (Figure 5, when any method reports retrieval);
* when the runs have FAM-Bench groups (fam_dish, fam_rank): ``fam_table1.md``/``.csv``/``.tex``
  (Table 1: model x mode), ``fam_modality.md``/``.csv``/``.tex`` (Table 2, when a method has a
  text+image or image-only variant) and ``fam_radar.png``/``.svg`` (Task 1 accuracy per
  condition, when metrics.json has fam_dish condition breakdowns);
* ``report.html``: everything above plus a browser over every sample (paged, filtered,
  each sample's calls shown when opened), with no network resources.

The report decides nothing itself: every number comes from metrics.json, every sample's
right / wrong (or, for text generation, its ROUGE-L) from scores.jsonl; records supply only the
text shown (question, prompt, raw and parsed answer, gold). A run without scores.jsonl, or
whose scores.jsonl does not cover its records, is refused with the command that fixes it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nutrireason.errors import DataError
from nutrireason.io import check_target_folder
from nutrireason.runs.merge import overlapping_groups
from nutrireason.schema import (
    METRICS_FILE,
    SCORES_FILE,
    Record,
    SampleScore,
    read_records,
    scores_for,
)

_GROUP_KEYS = ("method", "model", "task", "level")

__all__ = ["METRICS_FILE", "SCORES_FILE", "RunData", "build_report",
           "load_metrics", "load_run", "load_scores"]


@dataclass
class RunData:
    path: Path
    metrics: dict[str, Any]
    records: list[Record]
    scores: dict[str, SampleScore]  # scores.jsonl by record key: one per record


def load_metrics(run_dir: str | Path) -> dict[str, Any]:
    """A run's metrics.json, checked for the fields the report reads."""
    run_dir = Path(run_dir)
    path = run_dir / METRICS_FILE
    if not path.is_file():
        raise DataError(path, f"no {METRICS_FILE}; run `nutrireason score {run_dir}` first")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise DataError(path, f"not valid JSON: {exc}; run `nutrireason score {run_dir}` "
                              "again") from exc
    if not isinstance(data, dict):
        raise DataError(path, "not a metrics object", expected="a JSON object")
    groups = data.get("groups")
    if not isinstance(groups, list):
        raise DataError(path, "missing or not a list", field="groups", value=groups)
    for i, group in enumerate(groups):
        if not isinstance(group, dict):
            raise DataError(path, "not an object", field=f"groups[{i}]")
        for key in _GROUP_KEYS:
            if not isinstance(group.get(key), str):
                raise DataError(path, "missing or not a string", field=f"groups[{i}].{key}",
                                value=group.get(key))
        if not isinstance(group.get("metrics", {}), dict):
            raise DataError(path, "not an object", field=f"groups[{i}].metrics")
    return data


def load_scores(run_dir: str | Path, records: list[Record]) -> dict[str, SampleScore]:
    """A run's scores.jsonl by record key, checked to hold exactly one score per record."""
    return scores_for(run_dir, records)


def load_run(run_dir: str | Path) -> RunData:
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise DataError(run_dir, "no such run directory", expected="a run from `nutrireason run`")
    metrics = load_metrics(run_dir)
    records = read_records(run_dir)
    return RunData(run_dir, metrics, records, load_scores(run_dir, records))


def build_report(run_dirs: list[Path], out: Path, keep_last: bool = False,
                 warn: Callable[[str], None] | None = None,
                 reviews: Path | None = None, overwrite: bool = False) -> Path:
    """Write the tables, plots and ``report.html`` for ``run_dirs`` into ``out``; return the
    path of report.html.

    Two runs that score the same (method, model, task, level) group are refused, naming the
    group and both runs, and nothing is written. With ``keep_last`` the last run given holds
    the group in the tables and each overlap is passed to ``warn`` and listed at the top of
    report.html. ``reviews``: a ``review export`` folder whose agreement statistics the
    report shows too. ``out`` must be new, empty or an earlier report (anything with
    ``overwrite``)."""
    from nutrireason.report import html, plots, tables

    if not run_dirs:
        raise DataError(None, "no run directories given")
    check_target_folder(out, overwrite, earlier=lambda folder: (folder / "report.html").is_file(),
                        expected="a new or empty folder, an earlier report, or --overwrite to "
                                 "write into it anyway")
    runs = [load_run(path) for path in run_dirs]
    overlaps = _overlaps(runs, keep_last)
    if warn is not None:
        for message in overlaps:
            warn(message)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    metrics = [run.metrics for run in runs]
    frame = tables.groups_frame(metrics, [run.scores.values() for run in runs])
    built = {**tables.ngqa_tables(frame),
             **tables.fam_tables(frame, tables.fam_pool_entries(metrics)),
             **tables.reading_tables(frame, metrics)}
    if reviews is not None:
        from nutrireason.review.stats import decisions_from_file, review_stats
        from nutrireason.review.store import latest_of

        built |= tables.review_tables(review_stats(latest_of(decisions_from_file(reviews))))
    tables.write_tables(built, out)
    ngqa = tables.ngqa_frame(frame)
    figures = plots.write_plots(tables.efficiency_frame(ngqa), tables.retrieval_by_method(ngqa),
                                out)
    radar = plots.fam_radar_plot(tables.fam_condition_frame(metrics), out)
    if radar is not None:
        figures.append(radar)
    figures += _statistics(runs, built, out)
    return html.write_html(runs, built, figures, out / "report.html", warnings=overlaps)


def _statistics(runs: list[RunData], built: dict[str, Any], out: Path) -> list[Any]:
    """The detectable-difference table, and the comparison table and forest plot when two
    arms share items; written beside the other tables."""
    from nutrireason.report import plots, tables
    from nutrireason.scoring.compare import arm_comparisons, samples_of

    extra = {}
    detectable = tables.detectable_table([run.metrics for run in runs])
    if detectable is not None:
        extra["detectable"] = detectable
    comparison = arm_comparisons([samples_of(run.path, run.records, run.scores)
                                  for run in runs])
    if comparison is not None:
        extra["comparison"] = tables.comparison_table(comparison)
    tables.write_tables(extra, out)
    built.update(extra)
    forest = plots.forest_plot(comparison, out)
    return [forest] if forest is not None else []


def _overlaps(runs: list[RunData], keep_last: bool) -> list[str]:
    """The groups two or more runs score: refused, or (``keep_last``) messages saying which
    run's numbers the tables show."""
    names = [str(run.path) for run in runs]
    found = overlapping_groups([run.metrics for run in runs], names)
    if found and not keep_last:
        more = f" ({len(found) - 1} more groups overlap too)" if len(found) > 1 else ""
        raise DataError(None, f"{found[0]}{more}; no report was written",
                        expected="runs that score different groups, or --keep-last to show "
                                 "the last run's numbers for each shared group")
    return [f"{message}; the tables show the last of them" for message in found]
