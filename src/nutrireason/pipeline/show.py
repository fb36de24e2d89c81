"""What the CLI and the demo print about each stage's outputs: rich tables on stdout;
progress bars, spinners, notes and errors on stderr (so stdout stays for results and
``--json``). ``--quiet`` silences stdout and the progress display; errors still print.

Views only: every number shown is read from what a stage wrote or returned.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

console = Console()
errors = Console(stderr=True)
QUIET = False  # set by the CLI's --quiet (and --json)


def quiet_now() -> bool:
    return QUIET


def set_quiet(quiet: bool) -> None:
    """Silence (or restore) stdout output and progress displays; errors still print."""
    global QUIET
    QUIET = quiet
    console.quiet = quiet


def show(frame: Any, title: str) -> None:
    """Print a pandas DataFrame as a rich table."""
    import pandas as pd

    table = Table(title=title, title_justify="left")
    for column in frame.columns:
        numeric = frame[column].dtype.kind in "iuf"
        table.add_column(str(column), justify="right" if numeric else "left")
    for row in frame.itertuples(index=False):
        table.add_row(*("" if pd.isna(v) else f"{v:,}" if isinstance(v, int) else str(v)
                        for v in row))
    console.print(table)


def print_users_summary(build) -> None:
    """Print the rule report, Tables 10 and 11 beside the paper's, and why they differ."""
    from nutrireason.ngqa import paper
    from nutrireason.standards import load_standards

    rules = build.annotation.rule_table()[["rule", "evaluable", "positive", "note"]]
    show(rules, "Rules: users evaluable and flagged")
    adults = len(build.annotation.users)
    habits = build.annotation.habit_cutoffs
    in_use = int((habits[["n_high", "n_low"]] > 0).sum().sum())
    table11 = paper.beside_table11(build.prevalence, adults)
    show(paper.table11_view(table11), f"Table 11: users per special diet and health condition, "
         f"this build ({adults:,} adults) beside the paper ({paper.PAPER_USERS:,} users)")
    table10 = paper.beside_table10(build.diet_by_condition, build.prevalence)
    show(paper.table10_view(table10), "Table 10: users with a condition on a diet, this build "
         "/ paper; below, the share of the users with that condition")
    offline = build.annotation.source.startswith("offline bundle")
    reasons = paper.differences(adults, in_use)
    show(paper.differences_frame(reasons, (10, 11), offline),
         "Why Tables 10 and 11 differ from the paper")
    if not offline:
        console.print("Read from raw NHANES files: the reasons the offline bundle causes are "
                      "left out; the rule report above names the variables each rule used.")
    console.print(f"{adults:,} adults annotated; {in_use} of "
                  f"{len(load_standards().habits.tags)} habit tags in use.")
    console.print(f"wrote {build.users_path}\nwrote {build.manifest_path}")


def print_ngqa_stats(stats: dict) -> None:
    """Tables 1 and 2 of this build beside the paper's, the standard-level rule when the
    build recorded it, and why the tables differ."""
    import pandas as pd

    from nutrireason.ngqa import paper

    rows = []
    for level, published in paper.PAPER_TABLES.items():
        ours = stats["levels"][level]
        keys = ("records", "avg_nodes", "avg_edges", "avg_node_snr", "avg_tag_snr")
        cells = [f"{ours.get(k, 0):,} / {p:,}" if k == "records" else
                 f"{ours.get(k, float('nan')):.2f} / {p:.2f}" for k, p in zip(keys, published,
                                                                             strict=True)]
        rows.append({"level": level, **dict(zip(("records", "nodes", "edges", "node SNR",
                                                 "tag SNR"), cells, strict=True)),
                     "Yes": f"{ours.get('yes_share', float('nan')):.2f}"})
    show(pd.DataFrame(rows), "NGQA Tables 1-2, this build / the paper (averages per question)")
    console.print(f"{stats['users_with_conditions']:,} users with a condition or diet; "
                  f"{stats['foods']:,} foods in the question universe")
    if stats.get("level_rule"):
        show(paper.level_rule_table(stats["level_rule"]),
             "Standard level: strict vs loose rule")
    show(paper.differences_frame(paper.differences(), (1, 2)),
         "Why Tables 1 and 2 differ from the paper (offline default: NHANES 2017-18 "
         "bundle, recipe foods)")


def print_annotation(summary: dict[str, Any]) -> None:
    """The pool per condition, then what the annotation loop did (when it ran)."""
    import pandas as pd

    show(pd.DataFrame(summary["conditions"]), "FAM annotation pool per condition")
    section = summary.get("annotation") or {"mode": "rules-only"}
    console.print(f"{summary['annotated']:,} of {summary['recipes']:,} recipes annotated, "
                  f"{summary['with_any_entry']:,} with at least one entry; recipes excluded: "
                  f"{summary['excluded_by_reason']}; condition entries excluded: "
                  f"{summary.get('entries_excluded_by_reason', {})}")
    if section["mode"] == "rules-only":
        console.print("annotation: rules only (give --proposer MODEL for the LLM loop)")
        return
    who = section.get("proposer") or section.get("proposals")
    rows = [("proposed", section["proposed"]),
            ("agreed with the rules first time", section["agreed_first"]),
            ("in conflict with the rules", section["conflicted_first"]),
            ("  fixed by the corrective pass", section.get("corrected", 0)),
            ("  dropped: disagreement persists", section["dropped_disagreement"]),
            ("  dropped: no usable correction", section.get("correction_failed", 0)),
            ("dropped: proposal errored", section["proposal_errors"]),
            ("dropped: proposal unparseable", section["proposal_unparsed"]),
            ("not proposed (--limit)", section["not_proposed"]),
            ("kept in the pool", section["kept"])]
    console.print(f"annotation: {section['mode']} with {who}")
    show(pd.DataFrame(rows, columns=["recipes", "count"]), "Annotation loop")
    by_condition = section.get("conflicts_by_condition") or {}
    if by_condition:
        show(pd.DataFrame([{"condition": c, "conflicts": v["first"],
                            "persisting": v["persisting"]} for c, v in by_condition.items()]),
             "Rule/LLM conflicts per condition")
    if "model_calls" in summary:
        runs = ", ".join(f"{k} {v}" for k, v in (section.get("runs") or {}).items())
        console.print(f"{summary['model_calls']} model calls, {summary['cache_hits']} cache "
                      f"hits this time; engine runs: {runs}")


def print_fam_stats(stats: dict) -> None:
    """Appendix G style tables: dish labels per condition, comparative balance."""
    import pandas as pd

    dish, rank = stats["dish"], stats["rank"]
    rows = [{"condition": c, "dish recommend": v.get("recommend", 0),
             "dish not_recommend": v.get("not_recommend", 0),
             "rank mentions": rank["condition_mentions"].get(c, 0)}
            for c, v in dish["conditions"].items()]
    show(pd.DataFrame(rows), "FAM-Bench per-condition coverage (Appendix G, Table 5)")
    console.print(f"dish-level: {dish['instances']:,} instances, labels {dish['labels']}, "
                  f"{dish['recipes']:,} recipes, {dish['with_image']:,} with an image")
    console.print(f"comparative: {rank['instances']:,} instances; distractors "
                  f"{rank['distractors']}; answer positions {rank['answer_positions']}; "
                  f"targets per instance {rank['targets_per_instance']}; option labels "
                  f"{rank['option_labels']}; {rank['options_with_avoid_violation']:,} options "
                  "violate an avoid list")


def print_recipe_quality(quality: dict, target: Path) -> None:
    """The build's quality report, briefly."""
    import pandas as pd

    lines, quantified = quality["lines"], quality["quantified_lines"]
    rows = [
        {"measure": "ingredient lines", "count": lines, "share": ""},
        {"measure": "lines matched to SR28", "count": quality["lines_matched"],
         "share": f"{quality['lines_matched'] / max(lines, 1):.1%}"},
        {"measure": "quantified lines", "count": quantified, "share": ""},
        {"measure": "quantified lines with grams", "count": quality["quantified_with_grams"],
         "share": f"{quality['quantified_with_grams'] / max(quantified, 1):.1%}"},
        {"measure": "recipes kept", "count": quality["recipes_kept"],
         "share": f"{quality['recipes_kept'] / max(quality['recipes'], 1):.1%}"},
    ]
    rows += [{"measure": f"excluded: {reason}", "count": count, "share": ""}
             for reason, count in quality["recipes_excluded_by_reason"].items()]
    rows += [{"measure": "rejected at load", "count": len(quality["records_rejected_at_load"]),
              "share": ""},
             {"measure": "kept but flagged for review", "count": len(quality.get(
                 "recipes_flagged", [])), "share": ""},
             {"measure": "lines read in a stated state (cooked, canned, ...)",
              "count": sum(quality.get("lines_in_state", {}).values()), "share": ""},
             {"measure": "lines converted with a cooking yield",
              "count": quality.get("lines_with_yield", 0), "share": ""}]
    show(pd.DataFrame(rows), "Recipe build quality")
    console.print(f"wrote {target}/recipes.jsonl, recipes.parquet, foods.parquet, "
                  "food_ingredients.parquet, quality.json, manifest.json")


def print_demo_summary(result, model: str) -> None:
    """Five lines: where the report is and what the run did."""
    ok = sum(s.ok for s in result.summaries)
    failed = sum(s.errors for s in result.summaries)
    calls = sum(s.model_calls for s in result.summaries)
    unparsed = sum(s.unparsed for s in result.summaries)
    planned = sum(s.planned for s in result.summaries)
    skipped = sum(s.skipped for s in result.summaries)
    console.print(f"report: {result.report}")
    note = " (the bundled 135M model exercises the pipeline; it does not measure reasoning)" \
        if "smollm2" in model else ""
    console.print(f"model: {model}{note}")
    console.print(f"samples: {planned:,} ({skipped:,} already done); now {ok:,} answered, "
                  f"{failed} errors, {unparsed} unparseable, {calls} model calls")
    tables = sorted(path.name for path in result.report.parent.glob("*.md"))
    console.print(f"tables: {result.report.parent} ({len(tables)} as Markdown, CSV beside "
                  f"each: {', '.join(tables)})", soft_wrap=True)
    console.print(f"runs: {result.runs[0].parent} (re-run `nutrireason demo` to resume)")


def show_stage(stage: Any, result: Any) -> None:
    """What a stage's ``ensure()`` did, with the summary of its outputs (read back from disk
    when it was up to date): the stage's own :meth:`~nutrireason.pipeline.stage.Stage.show`."""
    if not result.built:
        console.print(f"{stage.label}: {getattr(stage, 'target', '')} is up to date with its "
                      "inputs; not rebuilt")
    stage.show(result.value if result.built else stage.summary(), result.built)


def print_fam_build(stats: dict, manifest: dict | None, target: Path) -> None:
    """FAM-Bench statistics, and after a build what could not be drawn."""
    print_fam_stats(stats)
    if manifest is None:
        return
    for row in manifest["balance"]:
        if row["short_of_equal_share"]:
            console.print(f"[yellow]{row['condition']}: {row['short_of_equal_share']}[/]")
    if manifest["rank_not_drawn"]:
        console.print(f"[yellow]comparative instances not drawn, by type: "
                      f"{manifest['rank_not_drawn']}[/]")
    console.print(f"wrote {target}/dish.jsonl, rank.jsonl, stats.json, manifest.json")


def print_bundles() -> None:
    """The offline bundles: present or not, version, files and size."""
    import pandas as pd

    from nutrireason.paths import data_home
    from nutrireason.sources.bundles import select, state

    rows = []
    for bundle in select(None):
        current = state(bundle)
        rows.append({"bundle": bundle.id, "package": f"{bundle.package}=={bundle.version}",
                     "present": "yes" if current.present else "no", "files": current.files,
                     "MB": round(current.size_bytes / 1e6, 1), "what": bundle.what})
    console.print(f"data home: {data_home()}")
    show(pd.DataFrame(rows), "Offline bundles")


def print_proposals(target: Path, summary: Any, model: str) -> None:
    """What a `fam propose` run did and what to run next."""
    console.print(f"{summary.ok} proposals ({summary.unparsed} unparseable), {summary.errors} "
                  f"errors, {summary.skipped} already done; {summary.model_calls} model calls "
                  f"-> {target}")
    if not summary.interrupted:
        console.print(f"next: nutrireason fam annotate --proposals {target} (check only), or "
                      f"nutrireason fam annotate --proposer {model} (propose, check, correct)")


class StageLog:
    """Shows each stage's result as it finishes and keeps the seconds each step took."""

    def __init__(self) -> None:
        self.timings: list[tuple[str, float]] = []

    def __call__(self, stage: Any, result: Any) -> None:
        show_stage(stage, result)
        self.timings.append((stage.name, result.seconds))

    def print_timings(self) -> None:
        for name, seconds in self.timings:
            console.print(f"  {name:<26} {seconds:7.1f} s")


@contextmanager
def progress_bar(description: str) -> Iterator[Callable[[int], Callable[[], None]]]:
    """A rich progress bar; yields ``start(total) -> advance()``."""
    from rich.progress import Progress

    with Progress(console=errors, disable=QUIET) as progress:
        def start(total: int) -> Callable[[], None]:
            task = progress.add_task(description, total=total)
            return lambda: progress.advance(task)

        yield start


@contextmanager
def _quiet() -> Iterator[None]:
    yield


def spinner(text: str) -> Any:
    """A spinner on stderr saying ``text`` (nothing under --quiet)."""
    return errors.status(text) if not QUIET else _quiet()


def ensure(stage: Any, status: str | None = None, force: bool = False) -> Any:
    """Run one stage (unless up to date), with a spinner saying ``status``; print what it did."""
    if status is None:
        result = stage.ensure(force=force)
    else:
        with spinner(status):
            result = stage.ensure(force=force)
    show_stage(stage, result)
    return result


def print_standards(directory: Path | None) -> None:
    """Validate the standards files and say what they hold."""
    from nutrireason.standards import load_standards

    standards = load_standards(directory)
    console.print(f"ok: {len(standards.nutrients.nutrients)} nutrients, "
                  f"{len(standards.indicators.indicators)} indicators, "
                  f"{len(standards.conditions.conditions)} conditions/diets, "
                  f"{len(standards.habits.items)} habit items in {standards.directory}")


def finish_run(summary: Any, allowance: Any, as_json: bool = False) -> int:
    """Print a run's summary and notes (``as_json``: only a JSON summary on stdout, see
    :func:`run_summary_json`); the exit code: 130 interrupted, 1 when more samples ended in
    errors than ``allowance`` lets pass, else 0."""
    was_quiet = quiet_now()
    set_quiet(was_quiet or as_json)
    try:
        code = _finish_run(summary, allowance)
    finally:
        set_quiet(was_quiet)
    if as_json:
        print(run_summary_json(summary, code))
    return code


def _finish_run(summary: Any, allowance: Any) -> int:
    from rich.markup import escape

    from nutrireason.runs.policy import error_verdict, summary_lines

    if summary.recovered:
        errors.print(f"[yellow]note:[/yellow] {escape(summary.recovered)}", highlight=False,
                     soft_wrap=True)
    for line in summary_lines(summary):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    if summary.interrupted:
        return 130
    verdict = error_verdict(summary, allowance)
    if verdict:
        errors.print(f"[red]error:[/red] {escape(verdict)}", highlight=False, soft_wrap=True)
        return 1
    return 0


def run_summary_json(summary: Any, exit_code: int) -> str:
    """``run --json``: the run's summary as one JSON object."""
    import dataclasses
    import json

    data = dataclasses.asdict(summary) | {"out": str(summary.out), "exit_code": exit_code}
    return json.dumps(data, sort_keys=True)


def _group_name(row: dict[str, Any], keys: list[str]) -> str:
    return " / ".join(str(row.get(key) or "-") for key in keys)


def print_comparison(result: dict[str, Any]) -> None:
    """``compare``: one row per group (difference A - B, interval, Holm p, verdict)."""
    for side in ("a", "b"):
        console.print(f"{side.upper()}: {result[side]['run']} "
                      f"({'; '.join(result[side]['arms'])})", markup=False, highlight=False,
                      soft_wrap=True)
    table = Table(title=f"A - B per {', '.join(result['by'])}", title_justify="left")
    for header in (" / ".join(result["by"]), "metric", "n (clusters)", "A", "B", "A - B",
                   f"{1 - result['alpha']:.0%} interval", "p (Holm)", "verdict"):
        table.add_column(header, justify="right" if header[0] in "nABp9" else "left")
    for row in result["groups"]:
        table.add_row(_group_name(row, result["by"]), row["metric"],
                      f"{row['n']:,} ({row['clusters']:,})", f"{row['mean_a']:.3f}",
                      f"{row['mean_b']:.3f}", f"{row['difference']:+.3f}",
                      f"{row['low']:+.3f} to {row['high']:+.3f}", f"{row['p_holm']:.3g}",
                      row["verdict"])
    console.print(table)
    tests = sorted({row["test"] for row in result["groups"]})
    console.print(f"{result['paired']:,} items paired; {result['only_a']:,} only in A, "
                  f"{result['only_b']:,} only in B; errors not compared: A "
                  f"{result['a']['errors']:,}, B {result['b']['errors']:,}. Intervals: paired "
                  f"cluster bootstrap; p: {', '.join(tests)}, Holm over "
                  f"{len(result['groups'])} groups.", highlight=False, soft_wrap=True)


def print_power(result: dict[str, Any]) -> None:
    """``power``: items (and clusters) needed per group, and the difference each detects."""
    from nutrireason.scoring.compare import by_keys

    rows = result["rows"]
    table = Table(title=f"Detecting {result['difference']:g} with power {result['power']:g} "
                  f"at two-sided {result['alpha']:g}", title_justify="left")
    if "baseline" in rows[0]:
        for header in ("baseline", "variance", "design effect", "items needed"):
            table.add_column(header, justify="right")
        for row in rows:
            table.add_row(f"{row['baseline']:g}", f"{row['variance']:.4f}",
                          f"{row['design_effect']:.2f}", f"{row['required_items']:,}")
        console.print(table)
        return
    keys = [k for k in by_keys() if k in rows[0]]
    for header in (" / ".join(keys), "metric", "n (clusters)", "variance", "design effect",
                   "items needed", "clusters needed", "detectable at n"):
        table.add_column(header, justify="left" if header in (" / ".join(keys), "metric")
                         else "right")
    for row in rows:
        table.add_row(_group_name(row, keys), row["metric"],
                      f"{row['n']:,} ({row['clusters']:,})", f"{row['variance']:.4f}",
                      f"{row['design_effect']:.2f}", f"{row['required_items']:,}",
                      f"{row['required_clusters']:,}", f"{row['detectable']:.3f}")
    console.print(table)


def note(text: str, colour: str = "yellow", label: str = "note") -> None:
    """One coloured line on stderr (``note: ...``, ``error: ...``), markup escaped."""
    from rich.markup import escape

    errors.print(f"[{colour}]{label}:[/{colour}] {escape(text)}", highlight=False,
                 soft_wrap=True)
