"""Reports over scored runs: paper-shaped tables, figures and one self-contained HTML page.

``build_report(run_dirs, out)`` reads each run's ``metrics.json`` and ``scores.jsonl`` (both
from ``nutrireason score``) and ``records.jsonl`` and writes into ``out``:

* each registered benchmark's section, for the benchmarks whose groups the runs have: the
  tables and figures its spec's ``report`` builder makes (its paper tables as
  ``<name>.md``/``.csv``, and ``.tex`` for those marked LaTeX; figures as ``.png``/``.svg``);
  see ``docs/architecture.md`` for what the built-in benchmarks add;
* the report's own tables over every benchmark: how answers were read (``reading``,
  ``extractor``), clustered intervals and detectable differences (``detectable``), paired
  comparisons with their forest plot (``comparison``), and the expert review's agreement
  (``review_conditions``, ``review_agreement``) when a reviews export is given;
* ``report.html``: everything above plus a browser over every sample (paged, filtered,
  each sample's calls shown when opened), with no network resources.

The report decides nothing itself: every number comes from metrics.json, every sample's
right / wrong (or, for text generation, its ROUGE-L) from scores.jsonl; records supply only the
text shown (question, prompt, raw and parsed answer, gold). A run without scores.jsonl, or
whose scores.jsonl does not cover its records, is refused with the command that fixes it.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nutrireason.errors import DataError, NutriReasonError
from nutrireason.runs.merge import overlapping_groups
from nutrireason.schema import (
    GROUP_KEYS,
    METRICS_FILE,
    SCORES_FILE,
    Record,
    SampleScore,
    benchmark_names,
    get_benchmark,
    read_records,
    scores_for,
)
from nutrireason.storage import check_target_folder

if TYPE_CHECKING:
    from nutrireason.display.section import ReportInput, Section, SectionBuilder


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
        for key in GROUP_KEYS:
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
    from nutrireason.display.groups import groups_frame
    from nutrireason.display.section import ReportInput
    from nutrireason.display.table import write_tables
    from nutrireason.report import html, tables

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
    frame = groups_frame(metrics, [run.scores.values() for run in runs])
    given = ReportInput(frame, metrics, out, tables.method_notes(frame))
    sections = [section(name, given) for name in benchmark_names()
                if get_benchmark(name).report]
    built: dict[str, Any] = {}
    for part in sections:
        if part is not None:
            built |= part.tables
    built |= tables.reading_tables(frame, metrics)
    reviewed = ""
    if reviews is not None:
        from nutrireason.review.items import BENCHMARK as REVIEWED
        from nutrireason.review.stats import decisions_from_file, review_stats
        from nutrireason.review.store import latest_of

        decisions = latest_of(decisions_from_file(reviews))
        built |= tables.review_tables(review_stats(decisions))
        reviewed = ", ".join(get_benchmark(name).title for name in dict.fromkeys(
            d.benchmark for d in decisions.values()) or [REVIEWED])
    write_tables(built, out)
    figures = _statistics(runs, built, out)
    return html.write_html(runs, built, sections, figures, out / "report.html",
                           warnings=overlaps, reviewed=reviewed)


def section(benchmark: str, given: ReportInput) -> Section | None:
    """What ``benchmark`` adds to the report: the builder its spec names (``report``,
    ``module:function``) called on the runs' groups; None when the runs have none of them."""
    target = get_benchmark(benchmark).report
    module, _, function = target.partition(":")
    try:
        builder: SectionBuilder = getattr(importlib.import_module(module), function)
    except (ImportError, AttributeError) as exc:
        raise NutriReasonError(f"benchmark {benchmark!r} declares the report section "
                               f"{target!r}, which cannot be loaded: {exc}") from exc
    return builder(given)


def _statistics(runs: list[RunData], built: dict[str, Any], out: Path) -> list[Any]:
    """The detectable-difference table, and the comparison table and forest plot when two
    arms share items; written beside the other tables."""
    from nutrireason.display.table import write_tables
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
    write_tables(extra, out)
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
